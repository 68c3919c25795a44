"""A case's judged tables beside its errors table: its summary (one row per
implementation, method, mode, dtype and derivative, with the stable domains), written by
the compare stage (:func:`write_summary`) with its findings, and read back by the
later stages (:func:`case_summary`, :func:`case_findings`: a stale or missing one is
refused, never judged again; the collect stage: :mod:`harness.stages.collect`).

Stable domain. The input ranges where every point is ``ok``:

- one swept input (ties such as ``a = b = t`` count as one): the maximal runs of
  consecutive points, in input order, that are all ``ok``, written as closed intervals
  ``[lo, hi]`` of the input's values; a run is broken by any point that is not ``ok``
  (a ``ref_unreliable`` point neither breaks nor extends a run: it is not judged);
- several swept inputs (a 2-D grid): the same runs along each input of the values at
  which *every* grid point is ``ok`` (the projection of the all-ok set), reported per
  input; a value at which any point fails is outside. This is conservative: it never
  claims a region where some point failed.

The domain is kept both as text (``x: [1e-19, 2e19]; [3, 4]``) and as JSON
(``{"x": [[lo, hi], ...]}``). A run of one point is an interval ``[v, v]``.

"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from harness.cases.points import segment_index
from harness.judge.axes import Axes
from harness.judge.compare import OUTCOMES
from harness.judge.findings import RUN_COLUMNS, edge_lookup, stable_intervals
from harness.judge.findings_text import format_value
from harness.judge.summary import KEYS, NOT_FAILURES, worst_of, worst_point
from harness.results import ResultsError, read_metadata, read_table

__all__ = [
    "case_findings",
    "case_summary",
    "domain_text",
    "file_digest",
    "stable_domain",
    "summarise_case",
    "write_summary",
]


def _runs(values: np.ndarray, ok: np.ndarray, piece: np.ndarray) -> list[list[float]]:
    """Closed intervals of consecutive all-ok values (``values`` sorted ascending); a run
    ends at a value that is not ok and where the sampled interval (``piece``) changes."""
    out: list[list[float]] = []
    start = end = None
    last_piece = None
    for v, good, k in zip(values, ok, piece):
        if start is not None and (not good or k != last_piece):
            out.append([float(start), float(end)])
            start = end = None
        if good:
            if start is None:
                start = v
            end = v
        last_piece = k
    if start is not None:
        out.append([float(start), float(end)])
    return out


def stable_domain(
    group: pd.DataFrame, free_inputs: Sequence[str], segments: dict | None = None
) -> dict[str, list]:
    """``{input: [[lo, hi], ...]}`` where every point is ``ok``: what was evaluated, so a
    run ends at a point that is not ok, at an unreliable reference (not judged, so not
    known to be ok), and at a gap between the intervals the input was sampled from
    (``segments``, :func:`harness.cases.points.segments`). A ``flushed`` point (a platform
    effect, reported apart) neither ends nor extends a run."""
    outcome = group["outcome"].to_numpy(object)
    kept = outcome != "flushed"
    bad = outcome[kept] != "ok"
    out = {}
    for name in free_inputs:
        values, any_bad = _any_per_value(group[name].to_numpy(np.float64)[kept], bad)
        pieces = (segments or {}).get(name)
        piece = segment_index(values, pieces) if pieces else np.zeros(len(values), int)
        out[name] = _runs(values, ~any_bad, piece)
    return out


def _any_per_value(values: np.ndarray, flags: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values (ascending, NaN left out) and whether any of each one's
    ``flags`` is set: a groupby's ``any`` by sorting once. 0.0 and -0.0 are one value,
    shown with the sign of its first row (as a groupby keeps it)."""
    keep = ~np.isnan(values)
    values, flags = values[keep], flags[keep]
    distinct, inverse = np.unique(values, return_inverse=True)
    any_set = np.bincount(inverse, weights=flags.astype(np.float64), minlength=len(distinct)) > 0
    zero = np.flatnonzero(distinct == 0)
    if len(zero):
        distinct[zero[0]] = values[np.flatnonzero(values == 0)[0]]
    return distinct, any_set


def domain_text(domain: dict[str, list], dtype: str = "float64") -> str:
    """``x: [1e-30, 88.72283]; [...] | y: none``, each bound the shortest decimal that
    reads back as that float of ``dtype`` (an exact edge printed rounded is another
    input)."""
    parts = []
    for name, runs in domain.items():
        text = "; ".join(
            f"[{format_value(lo, dtype)}, {format_value(hi, dtype)}]" for lo, hi in runs
        )
        text = text or "none"
        parts.append(f"{name}: {text}")
    return " | ".join(parts)


def summarise_case(
    errors: pd.DataFrame,
    inputs: Sequence[str],
    domains: bool = True,
    segments: dict | None = None,
    edges: pd.DataFrame | None = None,
    memo: dict | None = None,
    axes: Axes | None = None,
) -> pd.DataFrame:
    """Summary rows of one case's errors table, or of a part of it (``domains=False``:
    skip the stable domains, the slow part, for a terminal summary; ``segments``: the
    intervals each input was sampled from, which a stable domain never bridges; ``memo``:
    the runs :func:`harness.judge.findings.found` found in the same table, see there;
    ``axes``: the inputs as the whole table has them, :class:`harness.judge.axes.Axes`).
    The rows are in the order of :data:`harness.judge.summary.KEYS`."""
    free = (axes or Axes.of(errors, inputs)).independent()
    lookup = edge_lookup(edges)
    rows = []
    # Only the columns a summary row reads (taking a group's rows costs per column).
    used = [*KEYS, *inputs, *RUN_COLUMNS, "case", "reference_rounded", "message"]
    narrow = errors[[c for c in dict.fromkeys(used) if c in errors]].reset_index(drop=True)
    # Per-row facts of the whole table, read per group by position (no pandas per group).
    outcome_all = np.asarray(narrow["outcome"].to_numpy(), dtype=object)
    failing_all = ~narrow["outcome"].isin(NOT_FAILURES).to_numpy()
    bits_all = narrow["bits"].to_numpy(np.float64)
    expected_all = np.asarray(narrow["expected"].to_numpy(), dtype=object)
    for key, group in narrow.groupby(KEYS, sort=True, observed=True):
        at = group.index.to_numpy()
        names, hits = np.unique(outcome_all[at].astype(str), return_counts=True)
        counts = dict(zip(names.tolist(), hits.tolist()))
        bits = bits_all[at][outcome_all[at] != "ref_unreliable"]
        bits = bits[~np.isnan(bits)]
        expected = expected_all[at]
        w = worst_of(at[failing_all[at]], bits_all)
        w = None if w is None else narrow.iloc[w]
        worst = {}
        if w is not None:
            worst = {
                "worst_inputs": json.dumps({n: float(w[n]) for n in inputs}),
                "worst_got": float(w["value"]),
                "worst_wanted": w["reference"],
                "worst_outcome": str(w["outcome"]),
            }
        if domains and len(free) == 1:
            # One swept input: the ok runs, with the exact edges the bisection found.
            pieces = (segments or {}).get(free[0])
            domain = {free[0]: stable_intervals(group, free[0], pieces, lookup, memo)}
        else:
            domain = stable_domain(group, free, segments) if domains else {}
        rows.append(
            {
                "case": group["case"].iloc[0],
                **dict(zip(KEYS, key)),
                "derivative": key[-1] or "f",
                "points": len(group),
                **{o: int(counts.get(o, 0)) for o in OUTCOMES},
                # Failures no declared expectation covers: the findings to read first.
                "unexpected_failures": int((failing_all[at] & (expected == "")).sum()),
                "expected_held": int((expected == "held").sum()),
                "expected_broken": int((expected == "broken").sum()),
                "median_bits": float(np.median(bits)) if len(bits) else np.nan,
                "max_bits": float(bits.max()) if len(bits) else np.nan,
                "worst_inputs": worst.get("worst_inputs", ""),
                "worst_got": worst.get("worst_got", np.nan),
                "worst_wanted": worst.get("worst_wanted", ""),
                "worst_outcome": worst.get("worst_outcome", ""),
                "worst": worst_point(group, list(inputs), w),
                "stable_domain": domain_text(domain, str(group["dtype"].iloc[0]))
                if domains
                else "",
                "stable_domain_json": json.dumps(domain) if domains else "",
            }
        )
    return pd.DataFrame(rows)


def file_digest(path: str | Path) -> str:
    import hashlib

    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def write_summary(summary: pd.DataFrame, errors_path: str | Path, meta: dict) -> Path:
    """``summary.parquet`` beside a case's errors table (the compare stage writes it, so
    collect and the case's page read it instead of summarising again), tagged with the
    errors file's digest so a stale one is never used."""
    from harness.results import write_table

    out = Path(errors_path).with_name("summary.parquet")
    write_table(summary, out, {**meta, "errors_sha256": file_digest(errors_path)})
    return out


def _stage_table(errors_path: str | Path, name: str, leave_out=()) -> pd.DataFrame:
    """The table ``name`` the compare stage wrote beside ``errors_path`` (its columns
    ``leave_out`` aside): only it judges, so a table that is missing, or was written from
    another errors table (its ``errors_sha256`` differs), is refused with what to rerun,
    never recomputed here."""
    beside = Path(errors_path).with_name(name)
    if not beside.exists():
        raise ResultsError(
            f"{beside}: missing (the compare stage writes it beside {Path(errors_path).name}); "
            "rerun the case's compare stage"
        )
    if read_metadata(beside).get("errors_sha256") != file_digest(errors_path):
        raise ResultsError(
            f"{beside}: written from another {Path(errors_path).name} than the one beside it "
            "now; rerun the case's compare stage"
        )
    return read_table(beside, leave_out=leave_out)


def case_summary(errors_path: str | Path) -> pd.DataFrame:
    """The summary of one case, as the compare stage wrote it (``summary.parquet``)."""
    return _stage_table(errors_path, "summary.parquet")


def case_findings(errors_path: str | Path, leave_out=()) -> pd.DataFrame:
    """The findings of one case, as the compare stage wrote them (``findings.parquet``),
    without the columns ``leave_out``."""
    return _stage_table(errors_path, "findings.parquet", leave_out)
