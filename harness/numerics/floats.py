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
import pandas as pd

__all__ = [
    "DTYPES",
    "FORMATS",
    "Format",
    "bits_of_error",
    "from_ordinal",
    "is_subnormal",
    "ordinal",
    "round_decimal",
    "round_mpf",
    "sweep_order",
    "to_format",
    "ulps_between",
    "ulps_beyond_range",
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
#: The dtypes a study evaluates in, narrowest first.
DTYPES: tuple[str, ...] = tuple(FORMATS)


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
    NaN stays NaN. An mpf is read as it is, all its bits (``mpmath.mpf(value)`` would
    round it first at the ambient precision, 53 bits by default: a double rounding); an
    int or a float is exact; anything else (a decimal string) is read at the ambient
    precision.
    """
    if isinstance(value, mpmath.mpf):
        parts = value._mpf_
    elif isinstance(value, int):
        parts = mpmath.libmp.from_int(value)
    elif isinstance(value, float):
        parts = mpmath.libmp.from_float(value)
    else:
        parts = mpmath.mpf(value)._mpf_
    sign, man, exp, bc = parts
    if not man:
        if exp == 0 and bc == 0:  # mpmath's zero (fzero or fnzero)
            return -0.0 if sign else 0.0
        # Special values: mpmath encodes inf/-inf/nan with man == 0 and exp in (-456, -789, ...).
        return float(mpmath.mp.make_mpf(parts))
    top = exp + bc - 1  # exponent of the leading bit
    if top < fmt.emin - fmt.precision:
        # Below half the smallest subnormal (2**-1075 for float64): 0 with the sign, at
        # once (e**-3e38 would need a shift by 4e38 bits).
        return -0.0 if sign else 0.0
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


def round_decimal(text, fmt: Format | str) -> float:
    """A reference's decimal text (``"1.02757806e-41"``, at least 25 digits as the tables
    hold it) rounded directly to ``fmt`` (:func:`round_mpf`, read at 60 digits: no double
    rounding through float64); NaN where the text is no number."""
    fmt = FORMATS[fmt] if isinstance(fmt, str) else fmt
    try:
        with mpmath.workdps(60):
            return round_mpf(mpmath.mpf(str(text)), fmt)
    except (ValueError, TypeError):
        return math.nan


def to_format(values: np.ndarray, fmt: Format | str) -> np.ndarray:
    """Round float64 ``values`` to ``fmt`` (nearest, ties to even); returned as float64.

    Signed zeros keep their sign in every format.
    """
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
    # bfloat16 (which NumPy does not have): exact float64 arithmetic, vectorised.
    return _round_array(arr, fmt)


def _round_array(arr: np.ndarray, fmt: Format) -> np.ndarray:
    """Round float64 values to ``fmt`` (nearest, ties to even) by exact float64 arithmetic:
    scaled by a power of two so the format's quantum at each value is 1 (exact), rounded
    by ``rint`` (ties to even, exact), scaled back. The quantum is the subnormal one below
    the smallest normal; a result beyond the largest finite value (the tie at the
    overflow threshold included, as IEEE 754 rounds it) is ±inf. Zeros, infinities and
    NaN pass through; signs are kept."""
    a = np.abs(arr)
    with np.errstate(invalid="ignore", over="ignore"):
        _, e = np.frexp(a)  # a = m 2**e with m in [0.5, 1): the leading bit is 2**(e - 1)
        quantum = np.maximum(e - 1, fmt.emin) - (fmt.precision - 1)
        out = np.ldexp(np.rint(np.ldexp(a, -quantum)), quantum)
        out = np.where(out > fmt.max_finite, np.inf, out)
        out = np.where(np.isfinite(a), out, a)
    return np.copysign(out, arr)


def is_subnormal(values: np.ndarray, fmt: Format | str) -> np.ndarray:
    """True where a (finite, nonzero) value of ``fmt`` lies below its smallest normal."""
    fmt = FORMATS[fmt] if isinstance(fmt, str) else fmt
    a = np.abs(np.asarray(values, dtype=np.float64))
    return (a > 0) & (a < fmt.smallest_normal)


#: The integer type whose bit pattern holds each format (bfloat16: the top half of float32's).
_BITS = {
    "float16": (np.float16, np.int16),
    "float32": (np.float32, np.int32),
    "float64": (np.float64, np.int64),
}


def ordinal(values: np.ndarray, fmt: Format | str) -> np.ndarray:
    """The signed position of each value among the format's values (+0 and -0 are 0), as
    exact int64.

    Consecutive representable values have consecutive ordinals; +inf is one past the
    largest finite value. The position is the value's bit pattern without its sign bit
    (IEEE 754 orders the magnitudes of a format like their encodings), so it is exact
    for every format: float64's ordinals reach 2047 * 2**52 and are never rounded.

    Raises
    ------
    ValueError
        For NaN (it has no position) or a value that ``fmt`` cannot hold exactly.
    """
    fmt = FORMATS[fmt] if isinstance(fmt, str) else fmt
    x = np.asarray(values, dtype=np.float64)
    if np.isnan(x).any():
        raise ValueError("NaN has no ordinal")
    if fmt.name == "bfloat16":
        with np.errstate(over="ignore"):
            single = x.astype(np.float32)
        bits = single.view(np.int32).astype(np.int64)
        exact = (single.astype(np.float64) == x) & ((bits & 0xFFFF) == 0)
        magnitude = (bits >> 16) & 0x7FFF
    else:
        ftype, itype = _BITS[fmt.name]
        with np.errstate(over="ignore"):
            narrow = x.astype(ftype)
        exact = narrow.astype(np.float64) == x
        magnitude = narrow.view(itype).astype(np.int64) & np.iinfo(itype).max
    if not exact.all():
        bad = x[~exact].ravel()[0]
        raise ValueError(f"{bad!r} is not a {fmt.name} value")
    return np.where(np.signbit(x), -magnitude, magnitude)


def sweep_order(values: np.ndarray) -> np.ndarray:
    """The indices that sort ``values`` along a swept input: ascending, -0.0 just before
    0.0 (they compare equal, so a plain sort leaves them in input order, and a run at one
    zero would seem to border the smallest subnormal of the other sign), NaN last, ties
    otherwise in input order."""
    x = np.asarray(values, dtype=np.float64)
    return np.lexsort((~np.signbit(x), x))


def from_ordinal(ordinals: np.ndarray, fmt: Format | str) -> np.ndarray:
    """The values of ``fmt`` at the given ordinals (the inverse of :func:`ordinal`; 0
    gives +0.0), as float64."""
    fmt = FORMATS[fmt] if isinstance(fmt, str) else fmt
    o = np.asarray(ordinals, dtype=np.int64)
    magnitude = np.abs(o)
    if fmt.name == "bfloat16":
        single = (magnitude << 16).astype(np.int32).view(np.float32).astype(np.float64)
    else:
        ftype, itype = _BITS[fmt.name]
        single = magnitude.astype(itype).view(ftype).astype(np.float64)
    return np.where(o < 0, -single, single)


def ulps_between(got: np.ndarray, want: np.ndarray, fmt: Format | str) -> pd.arrays.IntegerArray:
    """Number of ``fmt`` values between ``got`` and ``want`` (both in ``fmt``), exact.

    Returned as a nullable ``UInt64`` array: missing where either side is NaN. The count
    is the difference of exact int64 ordinals taken modulo 2**64, which is exact because
    the true difference (at most 2**64 - 2**53, from -inf to +inf in float64) fits.
    """
    a, b = np.broadcast_arrays(
        np.asarray(got, dtype=np.float64).ravel(), np.asarray(want, dtype=np.float64).ravel()
    )
    missing = np.isnan(a) | np.isnan(b)
    oa = ordinal(np.where(missing, 0.0, a), fmt)
    ob = ordinal(np.where(missing, 0.0, b), fmt)
    ua, ub = oa.view(np.uint64), ob.view(np.uint64)
    # Unsigned subtraction wraps modulo 2**64: exact for the larger minus the smaller.
    diff = np.where(oa >= ob, ua - ub, ub - ua)
    return pd.arrays.IntegerArray(diff, missing)


def ulps_beyond_range(
    value: np.ndarray, mantissa: np.ndarray, exponent: np.ndarray, fmt: Format | str
) -> np.ndarray:
    """Ulps between finite ``value`` (in ``fmt``) and a true value ``mantissa * 2**exponent``
    that lies beyond ``fmt``'s largest finite value, counted in ``fmt``'s precision with
    its exponent range extended upwards (so the largest finite float32, 3.4e38, is about
    2**31 ulps from a true 1e300, not the one ordinal step to +inf). Saturates at
    2**64 - 1; ``mantissa`` is in [0.5, 1) as from ``frexp``.
    """
    fmt = FORMATS[fmt] if isinstance(fmt, str) else fmt
    out = np.zeros(len(value), dtype=np.uint64)
    have = ordinal(np.asarray(value, dtype=np.float64), fmt)
    steps, p = fmt.mantissa_steps, fmt.precision
    for i, (m, e) in enumerate(zip(mantissa, exponent)):
        whole = int(abs(float(m)) * 2.0**53)  # the mantissa's 53 bits, exactly
        low = int(e) - 53
        top = low + whole.bit_length() - 1
        shift = top - (p - 1) - low
        r = _round_int_ratio(whole, shift) if shift > 0 else whole << -shift
        if r.bit_length() > p:  # carried into the next binade
            r >>= 1
            top += 1
        position = (top - fmt.emin + 1) * steps + (r - steps)
        position = -position if m < 0 else position
        out[i] = min(abs(position - int(have[i])), 2**64 - 1)
    return out


def bits_of_error(ulps: np.ndarray, fmt: Format | str) -> np.ndarray:
    """Herbie's bits of error, ``log2(1 + ulps)``; a NaN result counts as the format's width."""
    fmt = FORMATS[fmt] if isinstance(fmt, str) else fmt
    u = pd.array(ulps, dtype="UInt64").to_numpy(np.float64, na_value=np.nan)
    with np.errstate(invalid="ignore"):
        bits = np.log2(1.0 + np.where(np.isnan(u), 0.0, u))
    return np.where(np.isnan(u), float(fmt.width), bits)
