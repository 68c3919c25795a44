"""The findings and platform notes of the report pages (:mod:`harness.judge.findings`).

A finding shared exactly by several implementations (the same derivative, dtype,
outcome, interval, methods and modes: two custom gradients around one expression) is
one *statement*: one line naming them all. The index ranks the statements, unexpected
first, each linking to its place on its case's page; a case page lists its statements
beside each derivative's band chart, whose edges are marked on the chart.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from harness.judge.findings_text import statements
from harness.report.html import COLOURS, e

__all__ = [
    "findings_list",
    "load_case_quietly",
    "platform_note",
    "stale_note",
    "statements",
]


def _chip(outcome: str) -> str:
    counts_colour = COLOURS.get(outcome, "#999")
    return f'<i class="sw" style="background:{counts_colour}"></i>'


def findings_list(
    stated: pd.DataFrame,
    link_case: bool = False,
    limit: int | None = None,
    anchor: bool = False,
    link_here: bool = False,
) -> str:
    """An ordered list of statements (each links to its case page when ``link_case``, to
    its place further down its own page when ``link_here``; each carries its anchor
    ``id`` on a case page when ``anchor``)."""
    if stated.empty:
        return '<p class="muted">None.</p>'
    shown = stated if limit is None else stated.head(limit)
    items = []
    for r in shown.itertuples(index=False):
        ident = f' id="{e(r.id)}"' if anchor else ""
        href = f"{e(r.case)}.html#{e(r.id)}"
        text = e(r.text)
        if link_case:
            text = f'<a href="{href}">{text}</a>'
        elif link_here:
            text = f'<a href="#{e(r.id)}">{text}</a>'
        note = ""
        if r.expectation:  # wholly, or (unexpected) on part of its failing values only
            which = "expected" if r.expected == "expected" else "partly expected"
            note = f' <span class="muted">({which}: {e(r.expectation)})</span>'
        repro = ""
        if anchor and getattr(r, "probe", ""):
            repro = f"<details><summary>reproduce</summary><pre>{e(r.probe)}</pre></details>"
        items.append(f"<li{ident}>{_chip(r.outcome)}{text}{note}{repro}</li>")
    more = ""
    if limit is not None and len(stated) > limit:
        rest = findings_list(stated.iloc[limit:], link_case, None, anchor, link_here)
        more = f"<details><summary>{len(stated) - limit} more</summary>{rest}</details>"
    return f'<ol class="findings">{"".join(items)}</ol>{more}'


def platform_note(flags_by_case: Mapping[str, dict], flushed: pd.DataFrame | None = None) -> str:
    """What the flush probe found, per back end, dtype and mode, and how many rows it
    explains (``flushed``: counts per back end, dtype and mode). ``flags_by_case`` maps a
    case to ``{backend: {dtype: {mode: flag}}}``."""
    merged: dict[tuple[str, str, str], dict] = {}
    for flags in flags_by_case.values():
        for backend, by_dtype in (flags or {}).items():
            for dtype, modes in (by_dtype or {}).items():
                for mode, flag in modes.items():
                    merged[(backend, dtype, mode)] = flag
    if not merged:
        return '<p class="muted">No flush probe was recorded.</p>'
    rows = []
    dtypes = ("float16", "bfloat16", "float32", "float64")
    for (backend, dtype, mode), flag in sorted(
        merged.items(), key=lambda kv: (kv[0][0], dtypes.index(kv[0][1]), kv[0][2])
    ):
        n = 0
        if flushed is not None and not flushed.empty:
            hit = flushed[(flushed["dtype"] == dtype) & (flushed["mode"] == mode)]
            if "backend" in hit:
                hit = hit[hit["backend"] == backend]
            n = int(hit["flushed"].sum())
        what = [w for w, on in (("inputs", flag["inputs"]), ("results", flag["results"])) if on]
        rows.append(
            f"<tr><td>{e(backend)}</td><td>{dtype}</td><td>{mode}</td>"
            f"<td>{e(', '.join(what) or 'nothing')}</td>"
            f'<td class="num">{n:,}</td></tr>'
        )
    return (
        "<p>This platform's subnormal numbers, probed once per run: a flushed input is read "
        "as 0, a flushed result written as 0. Rows a flush explains are <b>flushed</b>, "
        "reported here and never as findings against an implementation.</p>"
        "<table><tr><th>back end</th><th>dtype</th><th>mode</th><th>flushed</th>"
        "<th>flushed rows</th></tr>" + "".join(rows) + "</table>"
    )


def stale_note(case_id: str, recorded: str | None, current: str | None) -> str:
    """A warning when the results come from another version of the case file."""
    if not recorded or not current or recorded == current:
        return ""
    return (
        f'<p class="stale"><b>Stale results.</b> These results were computed from another '
        f"version of cases/{e(case_id)}.yaml (hash {e(recorded)}, now {e(current)}): its "
        "expectations, texts and points may not match them. Rerun the case "
        f"(<code>snakemake results/{e(case_id)}/errors.parquet</code>).</p>"
    )


def counts_text(counts: str) -> str:
    return ", ".join(f"{k} {v}" for k, v in json.loads(counts).items())


def load_case_quietly(cases: str | Path, case_id: str):
    """The case, or ``None`` where its file no longer loads (the page renders from the
    tables all the same)."""
    from harness.cases.load import load_case

    try:
        return load_case(Path(cases) / f"{case_id}.yaml")
    except Exception:  # noqa: BLE001 - the page still renders from the tables
        return None
