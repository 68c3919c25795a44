"""Binary floating-point formats: exact rounding, ordinals, ulps and bits of error.

Everything here is integer arithmetic on exact binary values, so it is right across
normal numbers, subnormals, zero and infinity for every format, including bfloat16
(which NumPy does not describe). Values of every format are held in float64 arrays:
float16, bfloat16 and float32 values are all exactly representable in float64.

Rounding an mpmath value to a format goes *directly* from its exact binary mantissa and
exponent to the format (round to nearest, ties to even, with the format's own subnormal
quantum and overflow threshold), never through float64 first: two roundings in a row
can differ from one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath
import numpy as np

__all__ = [
    "FORMATS",
    "Format",
    "bits_of_error",
    "is_subnormal",
    "ordinal",
    "round_mpf",
    "to_format",
    "ulps_between",
]


@dataclass(frozen=True)
class Format:
    """An IEEE-754-style binary format.

    ``precision`` counts the implicit leading bit; ``emin``/``emax`` are the exponents of
    the smallest and largest normal binades.
    """

    name: str
    precision: int
    emin: int
    emax: int
    width: int  # storage bits: the most bits of error a result can have

    @property
    def max_finite(self) -> float:
        return math.ldexp(2.0 - math.ldexp(1.0, 1 - self.precision), self.emax)

    @property
    def smallest_normal(self) -> float:
        return math.ldexp(1.0, self.emin)

    @property
    def smallest_subnormal(self) -> float:
        return math.ldexp(1.0, self.emin - self.precision + 1)

    @property
    def eps(self) -> float:
        """Machine epsilon: the gap between 1 and the next larger value."""
        return math.ldexp(1.0, 1 - self.precision)

    @property
    def mantissa_steps(self) -> int:
        """Values per binade (2**(precision-1))."""
        return 1 << (self.precision - 1)


FORMATS: dict[str, Format] = {
    "float16": Format("float16", 11, -14, 15, 16),
    "bfloat16": Format("bfloat16", 8, -126, 127, 16),
    "float32": Format("float32", 24, -126, 127, 32),
    "float64": Format("float64", 53, -1022, 1023, 64),
}


def _round_int_ratio(man: int, shift: int) -> int:
    """``man / 2**shift`` rounded to the nearest integer, ties to even (``shift > 0``)."""
    q = man >> shift
    rem = man - (q << shift)
    half = 1 << (shift - 1)
    if rem > half or (rem == half and q & 1):
        q += 1
    return q


def round_mpf(value: mpmath.mpf, fmt: Format) -> float:
    """Round an exact binary value to ``fmt`` (nearest, ties to even), as a float64.

    Subnormal results use the format's subnormal quantum; a value at or beyond the
    overflow threshold becomes ±inf; an underflowing one becomes ±0.0 with its sign.
    NaN stays NaN.
    """
    value = mpmath.mpf(value)
    sign, man, exp, bc = value._mpf_
    if not man:
        if exp == 0 and bc == 0:  # mpmath's zero (fzero or fnzero)
            return -0.0 if sign else 0.0
        # Special values: mpmath encodes inf/-inf/nan with man == 0 and exp in (-456, -789, ...).
        f = float(value)
        return f
    top = exp + bc - 1  # exponent of the leading bit
    quantum = max(top, fmt.emin) - (fmt.precision - 1)
    if exp >= quantum:
        q, qexp = man, exp
    else:
        q, qexp = _round_int_ratio(man, quantum - exp), quantum
    if q == 0:
        return -0.0 if sign else 0.0
    # After rounding, q may have gained a bit (carry into the next binade).
    if qexp + q.bit_length() - 1 > fmt.emax:
        return -math.inf if sign else math.inf
    out = math.ldexp(float(q), qexp)  # exact: q has at most `precision` <= 53 bits
    return -out if sign else out


def to_format(values: np.ndarray, fmt: Format | str) -> np.ndarray:
    """Round float64 ``values`` to ``fmt`` (nearest, ties to even); returned as float64."""
    fmt = FORMATS[fmt] if isinstance(fmt, str) else fmt
    arr = np.asarray(values, dtype=np.float64)
    if fmt.name == "float64":
        return arr.copy()
    if fmt.name == "float32":
        with np.errstate(over="ignore"):
            return arr.astype(np.float32).astype(np.float64)
    if fmt.name == "float16":
        with np.errstate(over="ignore"):
            return arr.astype(np.float16).astype(np.float64)
    # bfloat16: exact integer rounding (ml_dtypes rounds correctly too, but this keeps the
    # module free of the TensorFlow stack and is checked against it in the tests).
    return np.array(
        [round_mpf(mpmath.mpf(float(v)), fmt) if math.isfinite(v) else v for v in arr.ravel()],
        dtype=np.float64,
    ).reshape(arr.shape)


def is_subnormal(values: np.ndarray, fmt: Format | str) -> np.ndarray:
    """True where a (finite, nonzero) value of ``fmt`` lies below its smallest normal."""
    fmt = FORMATS[fmt] if isinstance(fmt, str) else fmt
    a = np.abs(np.asarray(values, dtype=np.float64))
    return (a > 0) & (a < fmt.smallest_normal)


def ordinal(values: np.ndarray, fmt: Format | str) -> np.ndarray:
    """The signed position of each value among the format's values (+0 and -0 are 0).

    Consecutive representable values have consecutive ordinals; +inf is one past the
    largest finite value. Values must already be representable in ``fmt``; NaN gives NaN.
    Returned as float64 (exact for every format up to float32; float64 ordinals up to
    2**63 are exact to 53 bits, which is ample for counting ulps).
    """
    fmt = FORMATS[fmt] if isinstance(fmt, str) else fmt
    x = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(x)
    a = np.abs(np.where(finite, x, 0.0))
    mant, exp = np.frexp(a)  # a = mant * 2**exp, mant in [0.5, 1)
    top = exp.astype(np.int64) - 1  # exponent of the leading bit
    steps = fmt.mantissa_steps
    normal = a >= fmt.smallest_normal
    # Normal: (top - emin + 1) binades below it (the subnormal range counts as one),
    # plus its position inside its binade. Subnormal (and zero): multiples of the quantum.
    pos_normal = (top - fmt.emin + 1) * steps + np.round((mant * 2.0 - 1.0) * steps).astype(
        np.int64
    )
    pos_sub = np.round(np.where(normal, 0.0, a) / fmt.smallest_subnormal).astype(np.int64)
    pos = np.where(normal, pos_normal, pos_sub).astype(np.float64)
    inf_pos = float((fmt.emax - fmt.emin + 2) * steps)
    pos = np.where(np.isinf(x), inf_pos, pos)
    signed = np.where(np.signbit(x), -pos, pos)
    out = np.where(np.isnan(x), np.nan, signed)
    return out


def ulps_between(got: np.ndarray, want: np.ndarray, fmt: Format | str) -> np.ndarray:
    """Number of ``fmt`` values between ``got`` and ``want`` (both in ``fmt``); NaN if either is."""
    return np.abs(ordinal(got, fmt) - ordinal(want, fmt))


def bits_of_error(ulps: np.ndarray, fmt: Format | str) -> np.ndarray:
    """Herbie's bits of error, ``log2(1 + ulps)``; a NaN result counts as the format's width."""
    fmt = FORMATS[fmt] if isinstance(fmt, str) else fmt
    u = np.asarray(ulps, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        bits = np.log2(1.0 + np.where(np.isnan(u), 0.0, u))
    return np.where(np.isnan(u), float(fmt.width), bits)
