"""Where the census samples an operator's argument in one dtype: log-spaced magnitudes
over the dtype's whole range (both signs, from the smallest subnormal to the largest
finite), distances to each finite boundary of the domain (log-spaced, from one ulp), and
the special points with their neighbouring floats (and -0.0 beside 0), and for a
function of one argument the floats where its value or a derivative crosses the dtype's
limits (:mod:`harness.census.thresholds`), with theirs.

The values are floats of the dtype (rounded to it), given as float64; a census case
holds the union over its dtypes, and each dtype keeps the ones it represents
(:func:`harness.cases.points.represent`), so every dtype gets its own whole range.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import numpy as np

from harness.numerics.floats import FORMATS, from_ordinal, ordinal, to_format
from harness.operators.model import Sampling

__all__ = ["argument_values", "boundary_sweep", "neighbours", "sweep"]


def sweep(dtype: str, per_sign: int) -> np.ndarray:
    """``per_sign`` magnitudes log-spaced from the dtype's smallest subnormal to its
    largest finite (both included), rounded to it, with both signs."""
    fmt = FORMATS[dtype]
    logs = np.linspace(
        math.log2(fmt.smallest_subnormal), math.log2(fmt.max_finite), per_sign, dtype=np.float64
    )
    with np.errstate(over="ignore"):  # the last may round past the largest finite
        magnitudes = to_format(np.exp2(logs), fmt)
    magnitudes[0], magnitudes[-1] = fmt.smallest_subnormal, fmt.max_finite
    return np.concatenate([magnitudes, -magnitudes])


def boundary_sweep(bound: float, dtype: str, count: int) -> np.ndarray:
    """Points on both sides of a finite, non-zero boundary ``bound`` at distances
    log-spaced from its ulp to 1 (``1 - 2^-24``, ..., ``0.5`` beside 1)."""
    fmt = FORMATS[dtype]
    ulp = math.ldexp(1.0, math.frexp(abs(bound))[1] - fmt.precision)
    distances = np.exp2(np.linspace(math.log2(ulp), 0.0, count))
    return to_format(np.concatenate([bound - distances, bound + distances]), fmt)


def neighbours(value: float, dtype: str, steps: int = 1) -> np.ndarray:
    """``value`` in the dtype and the ``steps`` floats on each side of it (and -0.0 beside
    0, a different input)."""
    fmt = FORMATS[dtype]
    here = to_format(np.array([value]), fmt)
    k = ordinal(here, fmt)[0]
    out = from_ordinal(np.arange(k - steps, k + steps + 1, dtype=np.int64), fmt)
    if value == 0:
        out = np.append(out, -0.0)
    return out[np.isfinite(out)]


def argument_values(
    sampling: Sampling,
    dtypes: Iterable[str],
    per_sign: int,
    thresholds: Callable[[str], Iterable[float]] = lambda dtype: (),
) -> np.ndarray:
    """Every value the census gives one argument over ``dtypes``: sorted, unique by bit
    pattern (-0.0 and 0.0 both kept), inside the closed domain; ``thresholds(dtype)``:
    more points of the dtype sampled with their neighbours (where the kernel's value or a
    derivative crosses the dtype's limits, :mod:`harness.census.thresholds`)."""
    parts = []
    for dtype in dtypes:
        parts.append(sweep(dtype, per_sign))
        for bound in (sampling.lower, sampling.upper):
            if math.isfinite(bound) and bound != 0:
                parts.append(boundary_sweep(bound, dtype, max(per_sign // 4, 4)))
        for point in (*sampling.special, *thresholds(dtype)):
            parts.append(neighbours(point, dtype))
    values = np.concatenate(parts).astype(np.float64)
    values = values[(values >= sampling.lower) & (values <= sampling.upper)]
    bits = np.unique(values.view(np.int64))
    out = bits.view(np.float64)
    return out[np.lexsort((np.signbit(out), out))]
