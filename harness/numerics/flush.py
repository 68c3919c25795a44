"""The platform's flush of subnormal numbers, apart from the implementations' own failures.

Many CPUs run TensorFlow with the flush-to-zero and denormals-are-zero modes on: a
subnormal *input* is read as 0, a subnormal *result* is written as 0. That is a property
of the platform, not of an implementation, and counting it against every implementation
in every case drowns the real findings. So:

- the evaluation stage probes, once per run and per dtype and mode, whether inputs and
  results are flushed (:func:`harness.backends.tensorflow.facts.probe_flush`), and records it in the
  provenance of ``evaluations.parquet``;
- the reference stage also evaluates the reference at every point with a subnormal input
  *as the flush reads it* (those inputs set to 0, sign kept): :func:`flushed_reference`;
- the compare stage builds, for each row, the reference the platform's flush leads to
  (:func:`flush_columns`): at the flushed input where inputs are flushed, then rounded,
  then set to 0 where results are flushed and it is subnormal. A row that is not right
  against the true reference but is right against this one is ``flushed``; where the
  flushed input makes the function or its derivative undefined (``-a/b`` at ``a = b``
  subnormal: 0/0; ``abs`` at a subnormal x, read as its kink at 0), whatever the result
  (a NaN, or the framework's one-sided pick at the kink) is ``flushed``.

A flush that is amplified into something else (an intermediate flushed, then divided into
inf) matches neither reference and keeps its own outcome: naive softplus's
``1/(1 + exp(x))`` is subnormal and flushed for x in [87.34, 88.72] in float32, so its
gradient is 0 where the truth is 1, a real ``zero``.

No TensorFlow here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import mpmath
import numpy as np
import pandas as pd

from harness.numerics.floats import FORMATS, is_subnormal, round_decimal, round_mpf

__all__ = [
    "FLUSH_COLUMNS",
    "apply_flush",
    "at_threshold",
    "flush_columns",
    "flushed_key",
    "flushed_reference",
    "rounded_at",
    "with_flushes",
]

FLUSH_COLUMNS = ("flush_input_rounded", "flush_input_defined")


def with_flushes(judged: pd.DataFrame, flags: Mapping | None) -> pd.DataFrame:
    """``judged`` (rows with ``dtype`` and ``mode``) with ``flushes``: whether the platform
    writes subnormal results as 0 there (the probe's ``flags``, as :func:`flush_columns`)."""
    on = [
        bool(((flags or {}).get(d) or {}).get(m, {}).get("results"))
        for d, m in zip(judged["dtype"], judged["mode"])
    ]
    return judged.assign(flushes=on)


def at_threshold(got: float, truth, dtype: str, order: int) -> bool:
    """Whether ``got``, a Taylor-mode derivative of ``order``, is a 0 for a ``truth``
    (decimal text) at or above ``dtype``'s smallest normal but below ``order!`` times it:
    Taylor mode (JAX's jet) carries the coefficient ``f^(k)/k!``, which is then subnormal,
    and a platform that flushes writes it as 0 (jet's d2/dx2 of sigmoid at x = -87.33653
    in float32: a truth of 1.1755e-38, a coefficient of half that). Below the smallest
    normal, the flush is judged ``flushed`` directly."""
    if got != 0 or order < 2:
        return False
    least = FORMATS[dtype].smallest_normal
    return least <= abs(round_decimal(truth, dtype)) < math.factorial(order) * least


def flushed_key(key: tuple[float, ...], fmt) -> tuple[float, ...]:
    """The point as a flush of subnormal inputs reads it: each subnormal input 0, its sign
    kept."""
    return tuple(math.copysign(0.0, v) if 0 < abs(v) < fmt.smallest_normal else v for v in key)


def rounded_at(store, key: tuple[float, ...], partial, fmt) -> tuple[float, bool]:
    """``(rounded, defined)``: the store's reference of ``partial`` at ``key`` rounded to
    ``fmt`` (NaN and not defined where it is not defined or did not verify)."""
    value = store.value(key, partial)
    if value is None:
        return math.nan, False
    with mpmath.workdps(80):
        return float(round_mpf(value, fmt)), True


def flushed_reference(case, points: Mapping[str, pd.DataFrame], store) -> pd.DataFrame:
    """One row per (dtype, point with a subnormal input, partial): the reference at the
    point with its subnormal inputs set to 0, rounded to the dtype (``flush_input_rounded``;
    NaN and ``flush_input_defined = False`` where it is not defined or did not verify)."""
    names = list(case.input_names)
    todo = []
    for dtype, frame in points.items():
        if frame.empty or not frame["subnormal"].any():
            continue
        fmt = FORMATS[dtype]
        sub = frame[frame["subnormal"]]
        for point_id, row in zip(sub["point"], sub[names].itertuples(index=False, name=None)):
            todo.append((dtype, int(point_id), flushed_key(tuple(map(float, row)), fmt)))
    store.ensure([k for _, _, k in todo], list(case.partials))
    rows = []
    for dtype, point_id, key in todo:
        fmt = FORMATS[dtype]
        for p in case.partials:
            rounded, defined = rounded_at(store, key, p, fmt)
            rows.append(
                {
                    "dtype": dtype,
                    "point": point_id,
                    "partial": case.label(p),
                    "flush_input_rounded": rounded,
                    "flush_input_defined": defined,
                }
            )
    return pd.DataFrame(rows, columns=["dtype", "point", "partial", *FLUSH_COLUMNS])


def flush_columns(frame: pd.DataFrame, flags: Mapping | None) -> tuple[np.ndarray, np.ndarray]:
    """``(flush_rounded, flush_defined)`` per row of a merged evaluations/reference frame:
    the reference once the platform's flush (``flags[dtype][mode] = {"inputs": bool,
    "results": bool}``, from the probe) is applied; NaN (and defined) where the flush
    leaves the reference as it is."""
    n = len(frame)
    out = np.full(n, np.nan)
    defined = np.ones(n, dtype=bool)
    if not flags:
        return out, defined
    rounded = frame["reference_rounded"].to_numpy(np.float64)
    subnormal_input = (
        frame["subnormal"].to_numpy(bool) if "subnormal" in frame else np.zeros(n, bool)
    )
    has_input = "flush_input_rounded" in frame
    for (dtype, mode), idx in frame.groupby(["dtype", "mode"], sort=False).indices.items():
        flag = (flags.get(dtype) or {}).get(mode) or {}
        hit = subnormal_input[idx] & bool(flag.get("inputs") and has_input)
        if has_input:
            at_zero = frame["flush_input_rounded"].to_numpy(np.float64)[idx]
            at_zero_defined = frame["flush_input_defined"].fillna(True).to_numpy(bool)[idx]
        else:
            at_zero, at_zero_defined = np.full(len(idx), np.nan), np.ones(len(idx), dtype=bool)
        out[idx], defined[idx] = apply_flush(
            rounded[idx],
            hit,
            at_zero,
            at_zero_defined,
            np.full(len(idx), bool(flag.get("results"))),
            FORMATS[dtype],
        )
    return out, defined


def apply_flush(
    rounded: np.ndarray,
    read_as_zero: np.ndarray,
    at_zero: np.ndarray,
    at_zero_defined: np.ndarray,
    results: np.ndarray,
    fmt,
) -> tuple[np.ndarray, np.ndarray]:
    """``(flush_rounded, flush_defined)`` per row: the reference ``rounded`` once the
    flush is applied, where ``read_as_zero`` rows' inputs are read as 0 (their reference
    there ``at_zero``, defined or not) and ``results`` rows' subnormal results are
    written as 0; NaN (and defined) where the flush leaves the reference as it is. The
    compare stage (:func:`flush_columns`) and the bisection's guide
    (:mod:`harness.edges.bisection`) judge a flush by it alike."""
    base = np.where(read_as_zero, at_zero, rounded)
    ok = np.where(read_as_zero, at_zero_defined, True)
    tiny = results & is_subnormal(np.nan_to_num(base), fmt)
    base = np.where(tiny, np.copysign(0.0, base), base)
    changed = ~ok | (base != rounded)
    return np.where(changed & ok, base, np.nan), ok
