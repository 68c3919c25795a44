"""An experiment case's page: its findings, the experiment's own figures, outcomes per
quantity, stable domains and the worst values."""

from __future__ import annotations

import json

import pandas as pd

from harness.experiments.catalogue import get
from harness.report.findings_list import findings_list, statements
from harness.report.html import e, page
from harness.report.html import table as html_table
from harness.report.sections import expectations_section, outcomes_section, worst_section

__all__ = ["experiment_page"]


def experiment_page(
    case,
    errors: pd.DataFrame,
    summary: pd.DataFrame,
    facts: dict | None = None,
    findings: pd.DataFrame | None = None,
    notes: str = "",
) -> str:
    """The page of an experiment case: its findings, what and why, the experiment's own
    figures, the outcomes per quantity and the worst values."""
    exp = get(case.experiment)
    inputs = list(exp.inputs)
    stated = statements(findings if findings is not None else pd.DataFrame())
    parts = [
        f'<p><a href="index.html">&larr; all cases</a></p><h1>{e(case.title)}</h1>',
        notes,
        "<h2>Findings</h2>" + findings_list(stated, anchor=True),
    ]
    parts.append(f"<p><b>Source.</b> {e(case.source)}</p>")
    if case.notes:
        parts.append(f"<p><b>Notes.</b> {e(case.notes)}</p>")
    params = errors.attrs.get("parameters") or case.parameters
    parts.append(
        f"<p><b>Experiment</b> <code>{e(exp.name)}</code>: {e(exp.description)} "
        f"Parameters: <code>{e(json.dumps(params, sort_keys=True))}</code>.</p>"
    )
    parts.append(outcomes_section(errors))
    if case.expectations:
        parts.append("<h2>Expectations</h2>" + expectations_section(case, errors))
    parts.append(exp.render_page(errors, facts or {}))
    if not summary.empty:
        table = summary[
            [
                "implementation",
                "method",
                "mode",
                "dtype",
                "derivative",
                "ok",
                "points",
                "max_bits",
                "stable_domain",
            ]
        ]
        parts.append(
            f"<h2>Stable domains</h2><details><summary>{len(table)} combinations</summary>"
            f"{html_table(table, numeric=('ok', 'points', 'max_bits'))}</details>"
        )
    parts.append(worst_section(errors, inputs, "Worst values"))
    return page(f"{case.title} - harness report", "\n".join(parts))
