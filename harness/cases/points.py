"""Input points of a case: sweeps, grids and ties, and their representation per dtype.

Points are generated in float64 from the case's input specs (log sweeps over
magnitude, linear ranges, explicit values, seeded log-uniform samples). Untied inputs
combine as a grid (cartesian product, first input varying slowest); tied inputs copy
their target. For each dtype the points are then *represented* in that dtype (rounded
to nearest); points whose represented inputs are not finite are dropped for that dtype,
since they are not inputs the dtype can hold. The reference is evaluated at the
represented values, so every dtype is judged on exactly the inputs it received.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from harness.cases.common import LISTED_KINDS
from harness.cases.model import Case, InputSpec
from harness.numerics.floats import FORMATS, is_subnormal, to_format

__all__ = ["generate", "represent", "segment_index", "segments", "values_for"]


def values_for(spec: InputSpec) -> np.ndarray:
    """The float64 values of one untied input, ascending for sweeps (with ``include``)."""
    values = _generated(spec)
    extra = spec.params.get("include") if spec.kind != "values" else None
    if extra:
        values = np.unique(np.concatenate([values, np.asarray(extra, dtype=np.float64)]))
    return values


def _generated(spec: InputSpec) -> np.ndarray:
    p = spec.params
    if spec.kind == "log":
        mags = np.logspace(math.log10(p["from"]), math.log10(p["to"]), p["count"])
        return _signed(mags, p.get("signs", "positive"))
    if spec.kind == "linear":
        return np.linspace(p["from"], p["to"], p["count"])
    if spec.kind in LISTED_KINDS:
        return np.asarray(p[spec.kind], dtype=np.float64)
    if spec.kind == "random":
        rng = np.random.default_rng(p["seed"])
        mags = np.exp(rng.uniform(math.log(p["from"]), math.log(p["to"]), p["count"]))
        signs = p.get("signs", "positive")
        if signs == "both":
            mags = mags * rng.choice([-1.0, 1.0], p["count"])
        elif signs == "negative":
            mags = -mags
        return np.sort(mags)
    raise ValueError(f"input {spec.name!r} has no values of its own (kind {spec.kind})")


def _signed(mags: np.ndarray, signs: str) -> np.ndarray:
    if signs == "negative":
        return -mags[::-1]
    if signs == "both":
        return np.concatenate([-mags[::-1], mags])
    return mags


def _thin(values: np.ndarray, count: int, keep: np.ndarray | None = None) -> np.ndarray:
    """At most ``count`` evenly spread values, plus every value in ``keep``."""
    if len(values) <= count:
        return values
    idx = np.unique(np.round(np.linspace(0, len(values) - 1, count)).astype(int))
    thinned = values[idx]
    if keep is not None and len(keep):
        thinned = np.unique(np.concatenate([thinned, keep]))
    return thinned


def generate(case: Case, max_points: int | None = None) -> pd.DataFrame:
    """All points of a case as float64 columns, one per input, plus ``point`` (0, 1, ...).

    ``max_points`` thins each untied input's values evenly to at most that many (the
    values a sweep lists under ``include`` are always kept).
    """
    free = [s for s in case.inputs if s.kind != "tie"]
    axes = []
    for spec in free:
        vals = values_for(spec)
        keep = np.asarray(spec.params.get("include") or [], dtype=np.float64)
        axes.append(_thin(vals, max_points, keep) if max_points else vals)
    rows = list(itertools.product(*axes))
    frame = pd.DataFrame(rows, columns=[s.name for s in free], dtype=np.float64)
    for spec in case.inputs:
        if spec.kind == "tie":
            frame[spec.name] = frame[spec.params["tie"]]
    frame = frame[list(case.input_names)]
    frame.insert(0, "point", np.arange(len(frame), dtype=np.int64))
    return frame


def represent(points: pd.DataFrame, inputs: tuple[str, ...], dtype: str) -> pd.DataFrame:
    """The points as the dtype holds them (float64 columns holding dtype values).

    Adds ``subnormal`` (any input subnormal in the dtype); drops points the dtype cannot
    hold (an input beyond its range) and points that round to the same inputs as an
    earlier one (the first keeps its ``point`` number). ``attrs["dropped"]`` counts
    both: ``{"beyond_range": n, "collapsed": n}``.
    """
    fmt = FORMATS[dtype]
    out = points.copy()
    finite = np.ones(len(out), dtype=bool)
    sub = np.zeros(len(out), dtype=bool)
    for name in inputs:
        rounded = to_format(out[name].to_numpy(np.float64), fmt)
        out[name] = rounded
        finite &= np.isfinite(rounded)
        sub |= is_subnormal(rounded, fmt)
    out["subnormal"] = sub
    out = out[finite]
    # Exact bit patterns: -0.0 and 0.0 are different inputs.
    bits = pd.DataFrame({n: out[n].to_numpy(np.float64).view(np.int64) for n in inputs})
    repeated = bits.duplicated().to_numpy()
    out = out[~repeated].reset_index(drop=True)
    out.attrs["dropped"] = {
        "beyond_range": int((~finite).sum()),
        "collapsed": int(repeated.sum()),
    }
    return out


def segments(case: Case) -> dict[str, list[list[float]]]:
    """The closed intervals each input's values were sampled from, per input (ties:
    their target's): a log sweep of both signs is two intervals, explicit values one
    each, samples the one from their smallest to their largest, a value of ``include``
    outside every range one of its own. A stable domain or
    a finding never reaches across the gap between two of them: nothing was evaluated
    there."""
    specs = {s.name: s for s in case.inputs}
    out: dict[str, list[list[float]]] = {}
    for spec in case.inputs:
        own = specs[spec.params["tie"]] if spec.kind == "tie" else spec
        out[spec.name] = _segments(own)
    return out


def _segments(spec: InputSpec) -> list[list[float]]:
    p = spec.params
    if spec.kind == "values":
        pieces = [[float(v), float(v)] for v in p["values"]]
    elif spec.kind == "samples":
        pieces = [[float(min(p["samples"])), float(max(p["samples"]))]]
    elif spec.kind == "linear":
        pieces = [[float(p["from"]), float(p["to"])]]
    else:  # log and random: magnitudes from..to, with their signs
        lo, hi = float(p["from"]), float(p["to"])
        signs = p.get("signs", "positive")
        pieces = ([[-hi, -lo]] if signs in ("negative", "both") else []) + (
            [[lo, hi]] if signs in ("positive", "both") else []
        )
    for v in p.get("include") or []:
        if not any(a <= v <= b for a, b in pieces):
            pieces.append([float(v), float(v)])
    pieces.sort()
    merged: list[list[float]] = []
    for a, b in pieces:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return merged


def segment_index(values: np.ndarray, pieces: list[list[float]]) -> np.ndarray:
    """For each value, the index of the interval of ``pieces`` it belongs to: the one
    that holds it, else the nearest (a value rounded to a dtype may fall just outside its
    sweep)."""
    values = np.asarray(values, dtype=np.float64)
    if not pieces:
        return np.zeros(len(values), dtype=np.int64)
    lo = np.array([a for a, _ in pieces])
    hi = np.array([b for _, b in pieces])
    # Whole-range sweeps (the census's, to ±1.8e308) overflow to an infinite distance.
    with np.errstate(invalid="ignore", over="ignore"):
        distance = np.maximum(lo[None, :] - values[:, None], values[:, None] - hi[None, :])
    return np.argmin(np.maximum(distance, 0.0), axis=1)
