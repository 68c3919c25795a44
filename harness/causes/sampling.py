"""Which failing values are localised (:mod:`harness.causes.localise`), and how: a
sample per (implementation, dtype, partial, method), since a failure is one mechanism
along a stretch of inputs and a grid has thousands of failing points; each by the method
(:func:`routes`) and in the mode (:func:`in_modes`) its primitives run in.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = [
    "OUTCOME_CLASS",
    "RUNS",
    "SAMPLE",
    "in_modes",
    "one_axis",
    "routes",
    "sample_failures",
]

#: What a failing outcome is like, for choosing among several failing primitives.
OUTCOME_CLASS = {
    "nan": "nonfinite",
    "inf": "nonfinite",
    "wrong": "wrong",
    "zero": "zero",
    "inaccurate": "inaccurate",
}

#: Failing values localised per (implementation, dtype, partial, method): a failure is
#: one mechanism along a stretch of inputs, and a grid has thousands of failing points.
SAMPLE = 6
#: Besides, the worst value of each stretch of neighbouring failing points with one
#: outcome class, up to this many stretches spread over the axis: a short stretch (three
#: points at order 3 near 0) is a finding of its own and needs its own localised values.
RUNS = 10


def one_axis(rows: pd.DataFrame, names: Sequence[str]) -> bool:
    """Whether the failing ``rows`` lie along one axis (one input, or inputs tied to it):
    in each dtype, each point has its own first input. A point's number is the dtype's
    own (a case's dtypes keep the values each represents), so the same input under two
    numbers in two dtypes is not a grid's row."""
    if not names or rows.empty:
        return True
    at = rows.drop_duplicates(["dtype", "point"]).groupby("dtype")[names[0]]
    return bool((at.nunique() == at.size()).all())


def sample_failures(rows: pd.DataFrame, runs: int = RUNS) -> pd.DataFrame:
    """At most :data:`SAMPLE` rows per (implementation, dtype, partial, method): the
    worst (most bits of error) and others spread evenly over the rest, by point; and the
    worst of each stretch of consecutive failing points of one outcome class (at most
    ``runs`` stretches, spread evenly over them; 0 for a grid of several inputs, whose
    consecutive points are a grid's rows, not a stretch of one axis)."""
    keep = []
    for _, group in rows.groupby(["implementation", "dtype", "partial", "method"], sort=False):
        if len(group) <= SAMPLE:
            keep.append(group)
            continue
        group = group.sort_values("point", kind="stable")
        bits = group["bits"].to_numpy(np.float64) if "bits" in group else np.zeros(len(group))
        bits = np.where(np.isnan(bits), np.inf, bits)
        worst = int(np.argmax(bits))
        spread = np.linspace(0, len(group) - 1, SAMPLE - 1).round().astype(int)
        points = group["point"].to_numpy(np.int64)
        classes = group["outcome"].map(OUTCOME_CLASS).to_numpy(object)
        breaks = (np.diff(points) != 1) | (classes[1:] != classes[:-1])
        starts = np.flatnonzero(np.r_[True, breaks])
        ends = np.r_[starts[1:], len(group)]
        chosen = np.linspace(0, len(starts) - 1, min(len(starts), runs)).round().astype(int)
        worst_of = [int(starts[i] + np.argmax(bits[starts[i] : ends[i]])) for i in set(chosen)]
        keep.append(group.iloc[sorted({worst, *spread.tolist(), *worst_of})])
    return pd.concat(keep) if keep else rows


def routes(rows: pd.DataFrame) -> np.ndarray:
    """The method each failing row is localised by: reverse mode where the reverse row
    at the same point fails too (what they share is found by the cheap method; forward
    mode's primitives cost TensorFlow seconds each, a helper traced per op and nesting
    level), else the row's own method (a failure of that method alone)."""
    reverse = rows[rows["method"] == "reverse"]
    failing = set(
        zip(reverse["implementation"], reverse["dtype"], reverse["partial"], reverse["point"])
    )
    keys = zip(rows["implementation"], rows["dtype"], rows["partial"], rows["point"])
    own = rows["method"].to_numpy(object)
    # Bits lost by one method alone are not worth its primitives' cost: reverse mode
    # judges them (it finds every primitive right: a method's own rounding).
    lost = (rows["outcome"] == "inaccurate").to_numpy()
    return np.array(
        [("reverse" if k in failing or b else m) for k, m, b in zip(keys, own, lost)],
        dtype=object,
    )


def in_modes(rows: pd.DataFrame) -> np.ndarray:
    """The mode each failing row's primitives run in: eager, unless the row fails in a
    compiled mode only (no eager row fails at its implementation, dtype, partial, method
    and point) with a non-finite, zero or wrong value, or where the value (order 0) there
    fails in that mode alone too, then that mode. Other bits lost by one mode alone are not
    worth compiling every primitive for (JAX's jit of a three-input case's primitives
    costs seconds): eager mode judges them, as reverse mode judges bits lost by one
    method alone. A value failing in a compiled mode alone is the compiler's own kernel
    (XLA's ``cosh``, inaccurate past 89.41598 where TensorFlow's eager one is right)."""
    keys = ["implementation", "dtype", "partial", "method", "point"]
    eager = rows[rows["mode"] == "eager"]
    failing = set(map(tuple, eager[keys].itertuples(index=False)))
    alone = np.array(
        [k not in failing for k in map(tuple, rows[keys].itertuples(index=False))], dtype=bool
    )
    mode = rows["mode"].to_numpy(object)
    at = ["implementation", "dtype", "method", "point", "mode"]
    values = rows[alone & (rows["partial"] == "").to_numpy() & (mode != "eager")]
    valued = set(map(tuple, values[at].itertuples(index=False)))
    there = np.array([k in valued for k in map(tuple, rows[at].itertuples(index=False))], bool)
    lost = (rows["outcome"] == "inaccurate").to_numpy() & ~there
    return np.where(alone & ~lost & (mode != "eager"), mode, "eager")
