"""Where a kernel's value or one of its derivatives (orders 0-4) crosses a dtype's limits:
the largest finite (beyond it the result overflows), the smallest normal (below it the
result is subnormal, which platforms flush and formulas lose) and half the smallest
subnormal (below it the result rounds to 0). A framework often fails from such a
threshold on over a band narrower than the gap between two log-spaced samples: JAX's
``jet`` gives 0 for the third and fourth derivatives of ``exp`` from x =
-708.3964185322641 (where ``exp`` turns subnormal in float64) to -705.22. The census
samples each threshold with its neighbouring floats (:func:`harness.census.points.argument_values`), and the bisection
finds the band's far edge.

The thresholds are found from the operator's certified Arb rule (its Taylor coefficients),
for the operators of one argument: ``|f^(k)|`` at 512 log-spaced magnitudes per sign
over the dtype's range (and the operator's special points), then each change of side
narrowed to adjacent floats of the dtype. That takes 11 s for every operator and dtype,
so the results are kept in ``thresholds.json`` beside this module (``harness
census-thresholds`` writes it again; a test recomputes it and compares), and reading the
workflow costs nothing.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from harness.numerics.floats import FORMATS, from_ordinal, ordinal, to_format

__all__ = [
    "ORDERS",
    "TABLE",
    "crossing",
    "levels",
    "operator_thresholds",
    "table",
    "thresholds",
    "write_table",
]

#: The orders whose thresholds are sampled (the census's).
ORDERS = 4
#: The committed table: ``{dtype: {operator: [x, ...]}}``, each x a float of the dtype.
TABLE = Path(__file__).with_name("thresholds.json")
_SCAN = 512  # log-spaced magnitudes per sign scanned for a change of side
_PREC = 128  # bits of the balls


def levels(dtype: str) -> tuple[int, ...]:
    """The magnitudes a result crosses, as exponents of 2 where exact: the largest finite
    (``None``: the format's own), the smallest normal, half the smallest subnormal."""
    fmt = FORMATS[dtype]
    return (None, fmt.emin, fmt.emin - fmt.precision)


def _level(dtype: str, exponent: int | None):
    import flint

    fmt = FORMATS[dtype]
    return flint.arb(fmt.max_finite) if exponent is None else flint.arb(2) ** exponent


def _sides(op, x: float, dtype: str) -> list[list[float]]:
    """For each level (rows) and order k = 0..ORDERS (columns): ``log(|f^(k)(x)| /
    level)``, its sign certain (from the Arb rule's balls; 0 counts as above), NaN where
    the rule is not defined or its ball does not decide the side."""
    import flint

    from harness.reference.balls import pointwise_coefficients, working_bits

    nan_row = [math.nan] * (ORDERS + 1)
    with working_bits(_PREC):
        try:
            coefficients = pointwise_coefficients(op.arb, flint.arb(x), ORDERS)
        except Exception:  # noqa: BLE001 (not defined here, or balls cannot decide)
            return [nan_row for _ in levels(dtype)]
        out = []
        for exponent in levels(dtype):
            level, row = _level(dtype, exponent), []
            for k, c in enumerate(coefficients):
                if not isinstance(c, flint.arb) or not c.is_finite():
                    row.append(math.nan)
                    continue
                m = abs(c) * math.factorial(k)
                if m >= level:
                    row.append(max(float((m / level).log().mid()), 0.0))
                elif m < level:
                    estimate = float((m / level).log().mid()) if not m.contains(0) else -1.0
                    row.append(min(estimate, -1e-300))
                else:
                    row.append(math.nan)
            out.append(row)
        return out


def crossing(g, lo: int, hi: int, g_lo: float, g_hi: float) -> int:
    """The ordinal of the first float on ``hi``'s side of the change of sign of ``g``
    (a function of ordinals) between ``lo`` and ``hi``: steps interpolated in ``g``
    alternate with halvings, so a smooth ``g`` takes a few evaluations and any other at
    most twice a bisection's. Where ``g`` is NaN (the balls do not decide the side: the
    result is within 2^-128 of the level, or not defined) that ordinal is the answer."""
    interpolate = True
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if interpolate and math.isfinite(g_lo) and math.isfinite(g_hi) and g_lo != g_hi:
            guess = lo + round((hi - lo) * g_lo / (g_lo - g_hi))
            mid = min(max(guess, lo + 1), hi - 1)
        interpolate = not interpolate
        g_mid = g(mid)
        if math.isnan(g_mid):  # undecided: within the balls' radius of the level
            return mid
        if (g_mid >= 0) == (g_lo >= 0):
            lo, g_lo = mid, g_mid
        else:
            hi, g_hi = mid, g_mid
    return hi


def operator_thresholds(op, dtype: str, special: Iterable[float] = ()) -> list[float]:
    """The floats of ``dtype`` at which ``op``'s value or a derivative crosses one of
    :func:`levels` (the first float past each change of side found on the scan)."""
    fmt = FORMATS[dtype]
    sampling = op.sampling[0]
    with np.errstate(over="ignore"):
        mags = np.exp2(
            np.linspace(math.log2(fmt.smallest_subnormal), math.log2(fmt.max_finite), _SCAN)
        )
    mags[-1] = fmt.max_finite
    scan = np.concatenate([-mags[::-1], [0.0], mags, np.asarray(list(special), float)])
    scan = scan[(scan >= sampling.lower) & (scan <= sampling.upper) & np.isfinite(scan)]
    with np.errstate(over="ignore"):
        rounded = to_format(scan.astype(np.float64), fmt)
    ords = np.unique(ordinal(rounded[np.isfinite(rounded)], fmt))
    xs = from_ordinal(ords, fmt)
    table = np.array([_sides(op, float(x), dtype) for x in xs])  # point, level, order
    found: set[int] = set()
    for level in range(table.shape[1]):
        for k in range(ORDERS + 1):
            g_all = table[:, level, k]
            for i in range(len(xs) - 1):
                a, b = g_all[i], g_all[i + 1]
                if math.isnan(a) or math.isnan(b) or (a >= 0) == (b >= 0):
                    continue

                def g(o: int, k=k, level=level) -> float:
                    x = float(from_ordinal(np.array([o], np.int64), fmt)[0])
                    return _sides(op, x, dtype)[level][k]

                found.add(crossing(g, int(ords[i]), int(ords[i + 1]), a, b))
    return sorted(float(x) for x in from_ordinal(np.array(sorted(found), np.int64), fmt))


def table(operators: dict, dtypes: Iterable[str]) -> dict[str, dict[str, list[float]]]:
    """``{dtype: {operator: thresholds}}`` for the pointwise operators of one argument."""
    out: dict[str, dict[str, list[float]]] = {}
    for dtype in dtypes:
        for name, op in sorted(operators.items()):
            if op.arity[0] == 1 and op.pointwise:
                special = op.sampling[0].special
                out.setdefault(dtype, {})[name] = operator_thresholds(op, dtype, special)
    return out


def thresholds(operator: str, dtype: str) -> list[float]:
    """The committed thresholds of ``operator`` in ``dtype`` (none where not listed)."""
    return _committed().get(dtype, {}).get(operator, [])


@functools.cache
def _committed() -> dict:
    return json.loads(TABLE.read_text(encoding="utf-8")) if TABLE.exists() else {}


def write_table(operators: dict, dtypes: Iterable[str], path: Path = TABLE) -> dict:
    """Compute :func:`table` and write it as JSON (each float as the shortest decimal
    that reads back as it); returns it."""
    from harness.results import atomic_write_text

    found = table(operators, dtypes)
    atomic_write_text(path, json.dumps(found, indent=1, sort_keys=True) + "\n")
    _committed.cache_clear()
    return found
