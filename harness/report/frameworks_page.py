"""``reports/frameworks.html``: the back ends side by side (:mod:`harness.judge.agreement`).

Per case, the points judged in two or more frameworks and how many of them split (one
framework ok, another failing), differ (all failing, not alike) or agree; the splits and
differences grouped by way, derivative, dtype and pattern, the worst first; the findings
that not every framework shares, those where another framework is right first; and for
the derivatives with the most splits, the frameworks' outcome bands stacked.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from harness.backends.catalogue import SPECS
from harness.judge.agreement import AGREEMENT_READS, agreement, disagreements, split_share
from harness.judge.compare import OUTCOMES, input_columns
from harness.report.figures import axis_input, band_edges
from harness.report.findings_list import findings_list, load_case_quietly, statements
from harness.report.html import COLOURS, e, key, page
from harness.report.html import table as html_table
from harness.report.svgplot import Chart, runs
from harness.results import atomic_write_text, read_table

__all__ = ["frameworks_page", "render_frameworks"]

_FIGURES = 12  # band charts, the derivatives with the worst splits first
_ORDER = tuple(SPECS)


def _title(backend: str) -> str:
    return SPECS[backend].title if backend in SPECS else backend


def _bands(points: pd.DataFrame, axis: str, heading: str) -> str:
    """One panel: a band per (implementation, method, back end), coloured by the back
    end's outcome along ``axis`` (the worst over the other inputs at each value), each
    run of one outcome one shape (:mod:`harness.report.svgplot`)."""
    code = {o: i for i, o in enumerate(OUTCOMES)}
    worse = {o: (0 if o == "ok" else 1 + OUTCOMES.index(o)) for o in OUTCOMES}
    rows = []
    for (impl, method), g in points.groupby(["implementation", "method"], sort=True):
        present = {b for o in g["outcomes"] for b in o}
        rows += [(impl, method, b) for b in _ORDER if b in present]
    xs = np.sort(points[axis].unique()).astype(float)
    where = {x: i for i, x in enumerate(xs)}
    grid = np.full((len(rows), len(xs)), np.nan)
    for r, (impl, method, backend) in enumerate(rows):
        g = points[(points.implementation == impl) & (points.method == method)]
        for x, outcomes in zip(g[axis], g["outcomes"]):
            o = outcomes.get(backend)
            if o is None:
                continue
            old = grid[r, where[x]]
            if np.isnan(old) or worse[o] > worse[OUTCOMES[int(old)]]:
                grid[r, where[x]] = code[o]
    labels = [f"{i} / {m} / {_title(b)}" for i, m, b in rows]
    left, row_h, top = 12 + 4.6 * max(len(s) for s in labels), 12, 24
    width = left + 620
    chart = Chart(width, top + row_h * len(rows) + 44)
    edges = band_edges(xs)
    p = chart.panel(left, top, 600, row_h * len(rows), xs, heading, axis, (edges[0], edges[-1]))
    px = p.scale(edges)
    boxes: dict[int, list] = {}
    for r in range(len(rows)):
        for start, stop, c in runs(grid[r]):
            boxes.setdefault(int(c), []).append(
                (px[start], px[stop], top + r * row_h, top + (r + 1) * row_h)
            )
    for c in sorted(boxes):
        p.fill(COLOURS[OUTCOMES[c]], boxes[c])
    # A line between ways: the frameworks of one way sit together.
    for r in range(1, len(rows)):
        if rows[r][:2] != rows[r - 1][:2]:
            p.hline(top + r * row_h, "white", 2)
    for r, label in enumerate(labels):
        chart.text(left - 4, top + r * row_h + row_h - 3, label, 7, "end")
    return f'<figure class="plot">{chart.svg()}</figure>'


def frameworks_page(cases: Sequence[dict], findings: pd.DataFrame) -> str:
    """The page. ``cases``: one dict per case with ``case``, ``title``, ``inputs``,
    ``axis``, ``backends`` (run) and ``points`` (:func:`harness.judge.agreement.agreement`)."""
    overview, table_parts, judged = [], [], {}
    for c in cases:
        points = c["points"]
        counts = split_share(points)
        overview.append(
            {
                "case": c["case"],
                "frameworks": ", ".join(_title(b) for b in c["backends"]),
                "compared": counts["compared"],
                "split": counts["split"],
                "differ": counts["differ"],
                "agree": counts["agree"],
            }
        )
        off = disagreements(points, c["axis"], _ORDER)
        if not off.empty:
            table_parts.append(off.assign(case=c["case"], axis=c["axis"]))
        for k, g in points.groupby(["implementation", "derivative", "dtype"], sort=False):
            judged[(c["case"], *k)] = {b for o in g["outcomes"] for b in o}
    off = pd.concat(table_parts, ignore_index=True) if table_parts else pd.DataFrame()
    if not off.empty:
        off["split"] = off["verdict"] == "split"
        off = off.sort_values(
            ["split", "severity", "points"], ascending=[False, False, False], kind="stable"
        ).drop(columns="split")
    parts = [
        '<p><a href="index.html">&larr; all cases</a></p>',
        "<h1>Frameworks side by side</h1>",
        "<p>Every case runs in each framework it can be written in (TensorFlow, JAX, "
        "PyTorch), judged against the same mpmath reference. Here the frameworks meet at "
        "the same points: at each point of each implementation, method, derivative and "
        "dtype, a framework's outcome is the worst over its modes (TensorFlow eager, "
        "function, XLA; JAX eager, jit; PyTorch eager, compile). A point is <b>split</b> "
        "when one framework is ok and another fails there, <b>differ</b> when all fail "
        "but not alike, <b>agree</b> otherwise. Flushed, unreliable and not-applicable "
        "rows are not judged.</p>",
        "<h2>Cases</h2>",
        _overview(pd.DataFrame(overview)),
        "<h2>Where one framework is right and another wrong</h2>",
        _disagreement_table(off),
        "<h2>Findings not every framework shares</h2>",
        _unshared(findings, judged, off),
        "<h2>Outcome bands, the frameworks stacked</h2>",
        "<p>The derivatives with the worst splits, one band per implementation, method "
        "and framework, coloured by outcome along the swept input.</p>",
        key(),
        _figures(cases, off),
    ]
    return page("Frameworks side by side - harness report", "\n".join(parts))


def _overview(frame: pd.DataFrame) -> str:
    if frame.empty:
        return '<p class="muted">No case ran in more than one framework.</p>'
    frame = frame.assign(case=[f'<a href="{e(c)}.html">{e(c)}</a>' for c in frame["case"]])
    return html_table(frame, numeric=("compared", "split", "differ", "agree"), raw=("case",))


def _disagreement_table(off: pd.DataFrame) -> str:
    if off.empty:
        return '<p class="muted">The frameworks agree at every point compared.</p>'
    shown = off[
        [
            "case",
            "implementation",
            "method",
            "derivative",
            "dtype",
            "verdict",
            "pattern",
            "points",
            "axis",
            "lo",
            "hi",
        ]
    ].rename(columns={"axis": "input", "lo": "from", "hi": "to"})
    shown = shown.assign(pattern=[_titled(p) for p in shown["pattern"]])
    head, rest = shown.head(40), shown.iloc[40:]
    out = html_table(head, numeric=("points", "from", "to"))
    if len(rest):
        out += (
            f"<details><summary>{len(rest)} more</summary>"
            f"{html_table(rest, numeric=('points', 'from', 'to'))}</details>"
        )
    return out


def _titled(pattern: str) -> str:
    parts = []
    for item in pattern.split(" · "):
        backend, _, outcome = item.partition(": ")
        parts.append(f"{_title(backend)}: {outcome}")
    return " · ".join(parts)


def _unshared(findings: pd.DataFrame, judged: dict, off: pd.DataFrame) -> str:
    """Statements whose frameworks are fewer than those that judged the same
    implementation, derivative and dtype; first those with split points."""
    stated = statements(findings)
    if stated.empty:
        return '<p class="muted">None.</p>'
    splits = set()
    if not off.empty:
        split = off[off["verdict"] == "split"]
        splits = set(zip(split.case, split.implementation, split.derivative, split.dtype))
    picked, first = [], []
    for i, r in enumerate(stated.itertuples(index=False)):
        k = (r.case, r.implementations.split(", ")[0], r.derivative, r.dtype)
        ran = judged.get(k, set())
        if len(ran) >= 2 and set(str(r.backends).split(", ")) < ran:
            picked.append(i)
            first.append(k in splits)
    if not picked:
        return '<p class="muted">None: every finding holds in every framework that ran it.</p>'
    order = sorted(range(len(picked)), key=lambda j: not first[j])  # stable: splits first
    shown = stated.iloc[[picked[j] for j in order]].reset_index(drop=True)
    shared = len(stated) - len(picked)
    return (
        findings_list(shown, link_case=True, limit=40)
        + f'<p class="muted">{shared} other findings hold alike in every framework that '
        "judged the same implementation, derivative and dtype (the index lists them all).</p>"
    )


def _figures(cases: Sequence[dict], off: pd.DataFrame) -> str:
    if off.empty:
        return '<p class="muted">None.</p>'
    by_case = {c["case"]: c for c in cases}
    top = off[off["verdict"] == "split"].drop_duplicates(["case", "derivative", "dtype"])
    out = []
    for r in top.head(_FIGURES).itertuples(index=False):
        c = by_case[r.case]
        pts = c["points"]
        pts = pts[(pts.derivative == r.derivative) & (pts.dtype == r.dtype)]
        out.append(_bands(pts, c["axis"], f"{r.case} · {r.derivative} · {r.dtype}"))
    return "".join(out) or '<p class="muted">None.</p>'


def render_frameworks(
    results: str | Path = "results", reports: str | Path = "reports", cases: str | Path = "cases"
) -> Path:
    """Write ``reports/frameworks.html`` from each case's errors table and
    ``results/findings.parquet``; returns its path."""
    results = Path(results)
    summary = read_table(results / "summary.parquet")
    found = results / "findings.parquet"
    findings = read_table(found) if found.exists() else pd.DataFrame()
    rows = []
    for case_id in sorted(summary.case.unique()):
        path = results / case_id / "errors.parquet"
        backends = summary.loc[summary.case == case_id, "backend"].unique()
        if len(backends) < 2 or not path.exists():
            continue
        case = load_case_quietly(cases, case_id)
        columns = pq.read_schema(path).names
        inputs = list(case.input_names) if case else input_columns(pd.DataFrame(columns=columns))
        errors = pd.read_parquet(path, columns=[*AGREEMENT_READS, *inputs])
        rows.append(
            {
                "case": case_id,
                "backends": [b for b in _ORDER if b in set(backends)],
                "inputs": inputs,
                "axis": axis_input(errors, inputs),
                "points": agreement(errors, inputs),
            }
        )
    out = Path(reports) / "frameworks.html"
    atomic_write_text(out, frameworks_page(rows, findings))
    return out
