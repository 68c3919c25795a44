"""Sections every case page shares (expression and experiment cases): the outcome counts,
the expectations and whether they held, and the worst values."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from harness.judge.compare import OUTCOMES, covers
from harness.judge.findings_text import format_value
from harness.judge.summary import ranked_failures
from harness.report.html import key
from harness.report.html import table as html_table

__all__ = ["expectations_section", "outcomes_section", "worst_section"]


def _worst(errors: pd.DataFrame, inputs: Sequence[str], n: int = 25) -> pd.DataFrame:
    ranked = ranked_failures(errors).head(n)
    if ranked.empty:
        return pd.DataFrame()
    out = pd.DataFrame(
        {
            "where": ranked.implementation
            + " / "
            + ranked.method
            + " / "
            + ranked["mode"]
            + " / "
            + ranked.dtype
            + " / "
            + ranked.partial.replace("", "f"),
            "inputs": [
                ", ".join(f"{k}={format_value(r[k], r['dtype'])}" for k in inputs)
                for _, r in ranked.iterrows()
            ],
            "got": [
                "raised" if o == "error" else format_value(v, d)
                for v, d, o in zip(ranked["value"], ranked["dtype"], ranked["outcome"])
            ],
            "wanted": ranked["reference"],
            "outcome": ranked["outcome"].astype(str),
            "bits": ranked["bits"],
            "message": ranked["message"],
        }
    )
    return out


def outcomes_section(errors: pd.DataFrame) -> str:
    """How many rows have each outcome, with the colour key."""
    counts = errors.outcome.value_counts()
    found = ", ".join(f"<b>{o}</b> {int(counts.get(o, 0))}" for o in OUTCOMES if counts.get(o, 0))
    return f"<h2>Outcomes</h2>{key()}<p>{found}</p>"


def worst_section(errors: pd.DataFrame, inputs: Sequence[str], heading: str) -> str:
    """The worst judged values (a table), under ``heading``."""
    worst = _worst(errors, inputs)
    body = (
        html_table(worst, numeric=("bits",))
        if not worst.empty
        else "<p>Every judged value is ok.</p>"
    )
    return f"<h2>{heading}</h2>{body}"


def expectations_section(case, errors: pd.DataFrame) -> str:
    """The case's expectations with the rows each covers, held and broken."""
    if case is None or not case.expectations:
        return '<p class="muted">The case declares no expectations.</p>'
    rows = []
    for exp in case.expectations:
        mask = covers(exp, errors, case)
        g = errors[mask & (errors.expected_outcome == exp.outcome)]
        held, broken = int((g.expected == "held").sum()), int((g.expected == "broken").sum())
        scope = ", ".join(
            filter(
                None,
                [
                    "/".join(exp.implementations),
                    exp.methods and "/".join(exp.methods),
                    exp.modes and "/".join(exp.modes),
                    exp.dtypes and "/".join(exp.dtypes),
                    exp.orders and "order " + "/".join(map(str, exp.orders)),
                    exp.partial and "partial " + case.label(exp.partial),
                    *(f"{k} in [{lo!r}, {hi!r}]" for k, (lo, hi) in exp.where.items()),
                ],
            )
        )
        status = "held" if broken == 0 and held else ("broken" if broken else "no points")
        rows.append(
            {
                "expectation": f"{scope} => {exp.outcome}",
                "reason": exp.reason,
                "held": held,
                "broken": broken,
                "status": status,
            }
        )
    return html_table(pd.DataFrame(rows), numeric=("held", "broken"))
