"""A case's page, from its result tables (the report stage writes it, :mod:`harness.stages.report`).

Pages are self-contained: every figure is an SVG drawn by :mod:`harness.report.svgplot`
and inlined in the page (a run of one outcome is one shape, a line keeps the vertices
that move it by a pixel), styles are inline, the one script is inline (it shows a long
table's rows, written once as data, on demand), and there is no font or image from
anywhere else. A page opens from disk with no server and no network. Static SVG was
chosen over an interactive plotting library because it needs nothing at view time and
survives being mailed, archived or opened in ten years; the small multiples (one panel
per dtype and mode) replace toggles.

Everything shown is derived from ``results/summary.parquet`` and the per-case errors
tables; nothing is computed anew.
"""

from __future__ import annotations

import pandas as pd

from harness.causes.roots import root_causes
from harness.causes.study import title as title_of
from harness.judge.compare import input_columns
from harness.report.figures import axis_input, band_figure, bits_figure, plain
from harness.report.findings_list import findings_list, platform_note, stale_note, statements
from harness.report.html import e, page
from harness.report.html import table as html_table
from harness.report.root_causes_list import root_causes_section
from harness.report.sections import expectations_section, outcomes_section, worst_section

__all__ = ["case_notes", "case_page"]


def case_page(
    case_id: str,
    errors: pd.DataFrame,
    summary: pd.DataFrame,
    case=None,
    findings: pd.DataFrame | None = None,
    notes: str = "",
    stale: str = "",
) -> str:
    """A case's page: its root causes first (its findings grouped by the root cause the
    compare stage gave each; the whole scope and the reproducers are the index's), then
    its findings, each derivative's band chart (their edges marked on their own panels)
    and findings, the bits of error, stable domains, worst points, expectations.
    ``stale``: a stale-results warning, put first; ``notes``: the platform's flush,
    after the findings."""
    drawn = plain(errors)
    inputs = input_columns(errors)
    x_name = axis_input(errors, inputs)
    title = case.title if case else case_id
    findings = findings if findings is not None else pd.DataFrame()
    stated = statements(findings)
    parts = [f'<p><a href="index.html">&larr; all cases</a></p><h1>{e(title)}</h1>', stale]
    if "root_cause" in findings:
        mine = root_causes(findings, title_of)
        parts.append(
            f'<h2>Root causes ({len(mine)})</h2><p class="muted">The mechanisms behind this '
            "case's findings, as this case shows them; each links to its whole scope in the "
            "study (other cases too) and its reproducers on the index.</p>"
            + root_causes_section(mine, None, link_case=True, filters=False, index_links=True)
        )
    unexpected = stated[stated["expected"] == "unexpected"] if not stated.empty else stated
    # The first statements, each a link to its place under its derivative below (where
    # every statement is written, once).
    first = 25
    rest = (
        f'<p class="muted">{len(stated) - first} more under their derivatives below.</p>'
        if len(stated) > first
        else ""
    )
    parts.append(
        f"<h2>Findings</h2><p>{len(unexpected)} unexpected and "
        f"{len(stated) - len(unexpected)} expected (the derivatives below list theirs beside "
        "their charts).</p>" + findings_list(stated.head(first), link_here=True) + rest
    )
    parts.append(notes)
    if case is not None:
        parts.append(f"<p><b>Source.</b> {e(case.source)}</p>")
        if case.notes:
            parts.append(f"<p><b>Notes.</b> {e(case.notes)}</p>")
        impl_rows = [
            {
                "implementation": i.name,
                "kind": i.kind,
                "definition": i.registered or i.text,
                "description": i.description,
            }
            for i in case.implementations
        ]
        parts.append("<h2>Implementations</h2>" + html_table(pd.DataFrame(impl_rows)))
        if case.reference.registered:
            what = (
                f"Function: <code>{e(case.function_text)}</code>; reference: "
                if case.function_text
                else "Reference: "
            )
            said = (
                f"{what}the registered <code>{e(case.reference.registered)}</code>, verified.</p>"
            )
            parts.append("<p>" + said)
        else:
            parts.append(
                f"<p>Function: <code>{e(case.function_text)}</code>; reference: "
                f"<code>{e(case.reference.text)}</code> in mpmath, verified.</p>"
            )
    parts.append(outcomes_section(errors))
    parts.append("<h2>Expectations</h2>" + expectations_section(case, errors))
    by_partial = {str(p): g for p, g in drawn.groupby("partial", observed=True)}
    for partial in sorted(by_partial, key=lambda p: (len(p), p)):
        label = partial or "f"
        sub = by_partial[partial]
        mine = stated[stated["partial"] == partial] if not stated.empty else stated
        own = findings[findings["partial"] == partial] if not findings.empty else findings
        marks = [
            (r.backend, r.dtype, mode, x, r.outcome)
            for r in own.itertuples(index=False)
            for mode in str(r.modes).split(", ")
            for x, is_open in ((r.lo, r.lo_open), (r.hi, r.hi_open))
            if not is_open
        ]
        parts.append(f'<h2 id="d-{e(label)}">Derivative {e(label)} (order {len(partial)})</h2>')
        # The chart at the page's full width (its labels stay readable), its findings below.
        parts.append(
            f'<figure class="plot">{band_figure(sub, x_name, label, marks)}</figure>'
            f"<h3>Findings of {e(label)}</h3>{findings_list(mine, anchor=True)}"
        )
        parts.append(f'<figure class="plot">{bits_figure(sub, x_name, label)}</figure>')
        dom = summary[(summary.case == case_id) & (summary.partial == partial)]
        if not dom.empty:
            domain = dom[
                [
                    "backend",
                    "implementation",
                    "method",
                    "mode",
                    "dtype",
                    "ok",
                    "points",
                    "max_bits",
                    "stable_domain",
                ]
            ]
            parts.append(
                f"<details><summary>Stable domain ({len(domain)} combinations)"
                f"</summary>{html_table(domain, numeric=('ok', 'points', 'max_bits'))}"
                "</details>"
            )
    parts.append(worst_section(errors, inputs, "Worst points"))
    return page(f"{title} - harness report", "\n".join(parts))


def case_notes(case_id: str, case, meta: dict, summary: pd.DataFrame) -> str:
    """A case page's notes: stale results, and the platform's flush with its rows."""
    stale = stale_note(case_id, meta.get("case_hash"), case.content_hash if case else None)
    flags = {"flush": meta.get("flush")}
    flushed = summary[summary["flushed"] > 0] if "flushed" in summary else None
    flush = ""
    if flushed is not None and not flushed.empty:
        flush = "<h2>Platform: subnormal numbers</h2>" + platform_note(
            {case_id: flags.get("flush")}, flushed
        )
    return stale + flush
