"""Findings: the distinct, exact statements a reader needs, from rows of evidence.

A **finding** is one (case, implementation, derivative, dtype, outcome, contiguous input
interval), merged across the methods and modes that share it exactly, e.g.

    softplus · naive · d/dx · float32: nan for x ≥ 88.72284 (reverse, forward,
    forward_over_reverse; eager, function, xla); at x = 100: got nan, truth 1

Its interval is a run of :mod:`harness.judge.runs` (an episode of one failing outcome, or of
alternating ones) along the swept input; its edges are exact floats of the dtype where
:mod:`harness.edges.bisection` found them (the first input with the outcome and the last
without, adjacent floats), and the sweep points otherwise (marked ``~``: an inaccurate
run against ok, an unreliable neighbour, no bisection). A run that reaches the end of
a piece of the sweep is open there ("x ≥ a"). A case with several swept inputs (a grid,
an experiment) states the set of failing points instead, with the range of each input.

Each finding keeps its severity (wrong > error > nan, inf > missing, zero >
inaccurate), its points, its worst point (got vs truth), whether an expectation covers
it (every failing row ``held``) and which, and how to reproduce it
(:mod:`harness.backends.tensorflow.repro`). ``flushed`` rows are not findings: they are the platform's
(:mod:`harness.numerics.flush`), counted apart. No TensorFlow here.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from harness.cases.model import label_partial
from harness.cases.points import segment_index
from harness.cases.schema import DEFAULT_BACKEND
from harness.judge.axes import Axes
from harness.judge.findings_text import (
    derivative_name,
    exception_text,
    finding_text,
    numbered,
    severity,
)
from harness.judge.reproduce import reproduce
from harness.judge.runs import grid_runs, runs
from harness.judge.summary import worst_of
from harness.numerics.floats import sweep_order

__all__ = [
    "FINDING_COLUMNS",
    "RUN_COLUMNS",
    "edge_lookup",
    "find",
    "found",
    "stable_intervals",
]

FINDING_COLUMNS = [
    "case",
    "backend",
    "implementation",
    "partial",
    "derivative",
    "order",
    "dtype",
    "outcome",
    "severity",
    "counts",  # JSON: points per outcome inside the interval
    "input",  # the swept input ("" on a grid)
    "lo",
    "hi",
    "lo_exact",
    "hi_exact",
    "lo_open",  # the interval reaches the start of the sweep's piece there
    "hi_open",
    "lo_outside",  # the adjacent input just outside (NaN: none)
    "hi_outside",
    "lo_span",  # JSON [min, max] of the merged ways' edges (equal when they agree)
    "hi_span",
    "variants",  # JSON: the merged ways grouped by identical intervals, most first
    "ranges",  # JSON, on a grid: {input: [lo, hi]} over the failing points
    "points",  # sweep points in the interval
    "hits",  # of them, with the finding's outcome(s)
    "methods",
    "modes",
    "combinations",  # (method, mode) pairs merged
    "worst_inputs",  # JSON
    "worst_got",
    "worst_truth",
    "worst_method",
    "worst_mode",
    "worst_error",  # the exception's own words at the worst point (outcome error), else ""
    "expected",  # "expected" or "unexpected"
    "expectation",  # the reason of the expectation that covers it (or covers part of it)
    "held",  # failing rows an expectation covers (all of them: expected)
    "failing",  # failing rows
    "text",
]
#: Added by :func:`find`: ``id`` (``f1``, ``f2``, ... in rank order, the anchor on the
#: case's page), ``probe`` and ``snippet`` (its reproduction: :func:`harness.judge.reproduce.reproduce`) and
#: ``group`` (the id of the first finding of the same statement).


def edge_lookup(edges: pd.DataFrame | None) -> dict:
    if edges is None or edges.empty:
        return {}
    out = {}
    for r in edges.itertuples(index=False):
        backend = getattr(r, "backend", DEFAULT_BACKEND) or DEFAULT_BACKEND
        key = (backend, r.implementation, r.method, r.mode, r.dtype, r.partial)
        key = (*key, r.side, r.coarse_inside)
        out[key] = r
    return out


#: The columns of the errors table a finding reads beside the keys and the inputs (a
#: table narrowed to fewer must not share a ``memo`` with :func:`find`).
RUN_COLUMNS = ("outcome", "bits", "expected", "expectation_reason", "value", "reference", "message")


def _intervals(group: pd.DataFrame, axis: str, pieces, edges: dict, key: tuple, memo=None):
    """Runs of one combination as ``(run, lo, hi, lo_exact, hi_exact, lo_out, hi_out,
    lo_open, hi_open, rows)`` (``rows``: the index labels of the run's rows in input
    order; ``None`` for an ``ok`` run, which no caller reads). ``memo``: a dict shared by
    the findings and the stable domains of one errors table and its edges (their frames
    indexed alike), so each combination's runs are found once."""
    if memo is not None and (key, axis) in memo:
        return memo[(key, axis)]
    outcome = np.asarray(group["outcome"].to_numpy(), dtype=object)
    x = group[axis].to_numpy(np.float64)
    labels = group.index.to_numpy()
    keep = np.flatnonzero(outcome != "flushed")
    order = keep[sweep_order(x[keep])]
    x, outcome = x[order], outcome[order].astype(str)
    piece = segment_index(x, pieces) if pieces else np.zeros(len(x), int)
    out = []
    for run in runs(outcome, piece):
        ends = []
        for side, inside, outside in (
            ("start", run.first, run.before),
            ("end", run.last, run.after),
        ):
            if outside < 0:
                ends.append((float(x[inside]), False, math.nan, True))
                continue
            e = edges.get((*key, side, float(x[inside])))
            if e is not None and bool(e.exact):
                ends.append((float(e.inside), True, float(e.outside), False))
            else:
                ends.append((float(x[inside]), False, float(x[outside]), False))
        (lo, lo_exact, lo_out, lo_open), (hi, hi_exact, hi_out, hi_open) = ends
        rows = None if run.outcome == "ok" else labels[order[run.first : run.last + 1]]
        out.append((run, lo, hi, lo_exact, hi_exact, lo_out, hi_out, lo_open, hi_open, rows))
    if memo is not None:
        memo[(key, axis)] = out
    return out


def _worst(rows: np.ndarray, outcomes: set[str], cols: dict) -> int | None:
    """Of the rows ``rows`` (labels), the first with one of ``outcomes`` of the highest
    rank (no number first, then bits of error), one with a truth where any has (a
    gradient missing at a kink, where no derivative exists, has nothing to show against);
    ``None``: no such row."""
    rows = rows[np.isin(cols["outcome"][rows], list(outcomes))]
    truth = cols["reference"][rows].astype(str)
    known = rows[(truth != "") & (truth != "nan") & (truth != "None")]
    return worst_of(known if len(known) else rows, cols["bits"])


def find(
    errors: pd.DataFrame,
    edges: pd.DataFrame | None,
    inputs: Sequence[str],
    segments: dict | None = None,
    case=None,
    memo: dict | None = None,
) -> pd.DataFrame:
    """The findings of one case's errors table (and its edges from the evaluation); with
    the ``case``, each gets its reproduction (:func:`harness.judge.reproduce.reproduce`).
    ``memo``: shared with :func:`stable_intervals` over the same table and edges."""
    return numbered(found(errors, edges, inputs, segments, case, memo))


def found(
    errors: pd.DataFrame,
    edges: pd.DataFrame | None,
    inputs: Sequence[str],
    segments: dict | None = None,
    case=None,
    memo: dict | None = None,
    axes: Axes | None = None,
) -> pd.DataFrame:
    """The findings of a part of a case's errors table, not yet ranked: :func:`numbered`
    ranks the findings of every part together (``axes``: the case's inputs as the whole
    table has them, :class:`harness.judge.axes.Axes`; by default, as this part has
    them). Their ``seen`` column orders them as one table's would be."""
    if errors.empty:
        return pd.DataFrame(columns=[*FINDING_COLUMNS, "probe", "snippet", "seen"])
    case_id = str(errors["case"].iloc[0])
    inputs = list(inputs)
    axes = axes or Axes.of(errors, inputs)
    free = axes.free()
    one_axis = axes.one_axis()
    lookup = edge_lookup(edges)
    if "backend" not in errors:
        errors = errors.assign(backend=DEFAULT_BACKEND)
    keys = ["backend", "implementation", "method", "mode", "dtype", "partial"]
    # Only the columns a finding reads: every run's rows are taken from the groups.
    used = [*keys, *inputs, *RUN_COLUMNS]
    narrow = errors[[c for c in dict.fromkeys(used) if c in errors]].reset_index(drop=True)
    # What a finding reads of its rows, as arrays indexed by row label.
    cols = {
        c: narrow[c].to_numpy() for c in ("method", "mode", *inputs, *RUN_COLUMNS) if c in narrow
    }
    cols["outcome"] = np.asarray(cols["outcome"], dtype=object).astype(str)
    cols["bits"] = cols["bits"].astype(np.float64)
    merged: dict[tuple, dict] = {}
    seen: dict[tuple, tuple] = {}  # where each statement first appears, as a table's order
    for key, group in narrow.groupby(keys, sort=True, observed=True):
        backend, impl, method, mode, dtype, label = key
        if one_axis:
            axis = free[0]
            pieces = (segments or {}).get(axis)
            runs_here = _intervals(group, axis, pieces, lookup, key, memo)
        else:
            axis = ""
            runs_here = grid_runs(group, free or inputs[:1])
        for k, (run, lo, hi, lo_x, hi_x, lo_out, hi_out, lo_open, hi_open, rows) in enumerate(
            runs_here
        ):
            if run.outcome in ("ok", "not_applicable"):
                continue
            ident = (backend, impl, label, dtype, run.outcome)
            seen.setdefault(ident, (*(str(v) for v in key), k))
            merged.setdefault(ident, []).append(
                {
                    "axis": axis,
                    "run": run,
                    "lo": (lo, lo_x, lo_out, lo_open),
                    "hi": (hi, hi_x, hi_out, hi_open),
                    "member": (method, mode),
                    "rows": rows,
                }
            )
    records, order = [], []
    for ident, pieces in merged.items():
        for k, group in enumerate(_overlapping(pieces)):
            records.append(_record(case_id, ident, group, inputs, cols))
            order.append((*seen[ident], k))
    out = pd.DataFrame(records, columns=FINDING_COLUMNS)
    out["probe"], out["snippet"] = reproduce(out, errors, inputs, case)
    out["seen"] = order
    return out


_METHOD_ORDER = ("reverse", "forward", "forward_over_reverse", "taylor", "finite_difference")
_MODE_ORDER = ("eager", "function", "xla", "jit", "compile")


def _overlapping(pieces: list[dict]) -> list[list[dict]]:
    """Intervals of one (implementation, derivative, dtype, outcome) from every method and
    mode, grouped where they overlap: one statement per stretch of the input, whatever
    way of differentiating shows it (their exact edges may differ a little)."""
    pieces = sorted(pieces, key=lambda p: (p["lo"][0], p["hi"][0]))
    groups: list[list[dict]] = []
    top = -math.inf
    for p in pieces:
        if groups and p["lo"][0] <= top:
            groups[-1].append(p)
            top = max(top, p["hi"][0])
        else:
            groups.append([p])
            top = p["hi"][0]
    return groups


def _edge(members: list[tuple], lowest: bool) -> dict:
    """One end of a merged interval: the extreme value over the members, whether every
    member agrees on it exactly, the span of the members' values, and what lies outside."""
    values = [m[0] for m in members]
    extreme = min(values) if lowest else max(values)
    at = [m for m in members if m[0] == extreme]
    return {
        "value": extreme,
        "exact": all(m[1] for m in at) and len(set(values)) == 1,
        "span": (min(values), max(values)),
        "outside": at[0][2],
        "open": all(m[3] for m in at),
    }


def _distinct(values: np.ndarray, signed: bool = True) -> int:
    """How many distinct input values, NaN apart; ``signed``: by bit pattern, -0.0 and 0.0
    (two points of a sweep) as two, as a run's ``hits`` counts them."""
    values = np.asarray(values, dtype=np.float64)
    values = values[~np.isnan(values)]
    return len(np.unique(values.view(np.int64) if signed else values))


def _record(
    case_id: str, ident: tuple, group: list[dict], inputs: Sequence[str], cols: dict
) -> dict:
    backend, impl, label, dtype, outcome = ident
    axis = group[0]["axis"]
    rows = np.concatenate([g["rows"] for g in group])
    members = [g["member"] for g in group]
    counts: dict[str, int] = {}
    for g in group:
        for o, c in g["run"].counts:
            counts[o] = max(counts.get(o, 0), c)
    lo, hi = _edge([g["lo"] for g in group], True), _edge([g["hi"] for g in group], False)
    variants = _variants(group)
    primary = variants[0]
    # The worst point of the variant most ways share: a finite difference that merely
    # overlaps autodiff's interval does not speak for the finding.
    shared = [g for g in group if (g["lo"][0], g["hi"][0]) == (primary["lo"], primary["hi"])]
    worst = _worst(np.concatenate([g["rows"] for g in shared]), set(counts), cols)
    if worst is None:
        worst = _worst(rows, set(counts), cols)
    failing = rows[np.isin(cols["outcome"][rows], list(counts))]
    held = cols["expected"][failing] == "held"
    expected = bool(len(failing)) and bool(held.all())
    # The reasons of the expectations that cover it, wholly or in part (an expectation
    # narrower than the failure it explains: the case's ranges to widen, not news).
    reasons = sorted(set(cols["expectation_reason"][failing[held]]))
    partial = label_partial(label, inputs)
    methods = [m for m in _METHOD_ORDER if any(m == a for a, _ in members)]
    modes = [m for m in _MODE_ORDER if any(m == b for _, b in members)]
    points = _distinct(cols[axis][rows]) if axis else max(int(g["run"].hits) for g in group)
    record = {
        "case": case_id,
        "backend": backend,
        "implementation": impl,
        "partial": label,
        "derivative": derivative_name(partial),
        "order": len(partial),
        "dtype": dtype,
        "outcome": outcome,
        "severity": severity(outcome),
        "counts": json.dumps(counts, sort_keys=True),
        "input": axis,
        # The interval of the variant most ways share (the others: ``variants``).
        "lo": primary["lo"],
        "hi": primary["hi"],
        "lo_exact": primary["lo_exact"],
        "hi_exact": primary["hi_exact"],
        "lo_open": primary["lo_open"],
        "hi_open": primary["hi_open"],
        "lo_outside": primary["lo_outside"],
        "hi_outside": primary["hi_outside"],
        "lo_span": json.dumps(lo["span"]),
        "hi_span": json.dumps(hi["span"]),
        # On a grid: the range of each input over the failing points.
        "ranges": json.dumps(
            {}
            if axis
            else {
                n: [float(cols[n][failing].min()), float(cols[n][failing].max())]
                for n in inputs
                if max(_distinct(cols[n][failing], False), _distinct(cols[n][rows], False)) > 1
            }
        ),
        "points": points,
        "hits": max(int(g["run"].hits) for g in group),
        "methods": ", ".join(methods),
        "modes": ", ".join(modes),
        "combinations": len(members),
        "worst_inputs": json.dumps({n: float(cols[n][worst]) for n in inputs})
        if worst is not None
        else "",
        "worst_got": float(cols["value"][worst]) if worst is not None else math.nan,
        "worst_truth": str(cols["reference"][worst]) if worst is not None else "",
        "worst_method": str(cols["method"][worst]) if worst is not None else "",
        "worst_mode": str(cols["mode"][worst]) if worst is not None else "",
        "worst_error": exception_text(cols["message"][worst])
        if worst is not None and "message" in cols and cols["outcome"][worst] == "error"
        else "",
        "expected": "expected" if expected else "unexpected",
        "expectation": "; ".join(reasons),
        "held": int(held.sum()),
        "failing": len(failing),
        "variants": json.dumps(variants),
    }
    record["text"] = finding_text(record)
    return record


def _variants(group: list[dict]) -> list[dict]:
    """The merged ways grouped by identical intervals, most ways first: each with its
    methods, modes and exact edges."""
    by_edges: dict[tuple, list] = {}
    for g in group:
        by_edges.setdefault((g["lo"], g["hi"]), []).append(g["member"])
    out = []
    for (lo, hi), members in by_edges.items():
        out.append(
            {
                "methods": [m for m in _METHOD_ORDER if any(m == a for a, _ in members)],
                "modes": [m for m in _MODE_ORDER if any(m == b for _, b in members)],
                "ways": len(members),
                "lo": lo[0],
                "lo_exact": bool(lo[1]),
                "lo_outside": lo[2],
                "lo_open": bool(lo[3]),
                "hi": hi[0],
                "hi_exact": bool(hi[1]),
                "hi_outside": hi[2],
                "hi_open": bool(hi[3]),
            }
        )
    autodiff_first = {m: i for i, m in enumerate(_METHOD_ORDER)}
    out.sort(key=lambda v: (-v["ways"], autodiff_first[v["methods"][0]]))
    return out


def stable_intervals(
    group: pd.DataFrame, axis: str, pieces, lookup: dict, memo: dict | None = None
) -> list[list[float]]:
    """The stable domain of one combination along ``axis``: its ok runs, with the exact
    edges of the failures around them where the bisection found them and the input just
    outside the failure is ok (``lookup``: :func:`edge_lookup` of the case's edges)."""
    if group.empty:
        return []
    columns = ("backend", "implementation", "method", "mode", "dtype", "partial")
    if "backend" not in group:
        group = group.assign(backend=DEFAULT_BACKEND)
    key = tuple(group[k].iloc[0] for k in columns)
    found = _intervals(group, axis, pieces, lookup, key, memo)
    out = []
    for k, (run, lo, hi, *_rest) in enumerate(found):
        if run.outcome != "ok":
            continue
        if k > 0 and found[k - 1][0].last == run.before and found[k - 1][4]:
            prev = found[k - 1]
            edge = lookup.get((*key, "end", float(group.at[prev[9][-1], axis])))
            if edge is not None and edge.outside_outcome == "ok":
                lo = float(edge.outside)
        if k + 1 < len(found) and found[k + 1][0].first == run.after and found[k + 1][3]:
            nxt = found[k + 1]
            edge = lookup.get((*key, "start", float(group.at[nxt[9][0], axis])))
            if edge is not None and edge.outside_outcome == "ok":
                hi = float(edge.outside)
        out.append([float(lo), float(hi)])
    return out
