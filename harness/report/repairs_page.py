"""The study's repairs page (``reports/repairs.html``, the ``repairs`` target): for each
case and implementation a repair was searched for, the share right before and after, the
alternatives as Herbie's accuracy-versus-cost table, where the best still fails, and its
code in each framework (checked bit for bit when it was written).

It reads the tables ``harness repair --table`` writes (``results/repairs/<case>.parquet``)
and the modules ``--code`` writes beside them (``results/repairs/<case>/``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from harness.report.html import e, page, table

__all__ = ["read_repairs", "repairs_page"]

#: The alternatives table's columns, as the page shows them.
_COLUMNS = {
    "candidate": "candidate",
    "kind": "verdict",
    "part": "what changed",
    "form": "form",
    "right": "right",
    "judged": "judged",
    "share": "share right",
    "regressions": "regressions",
    "fixed": "fixed",
    "cost": "cost",
}


def _verdict(row) -> str:
    if row["kind"] == "original":
        return "the original"
    if row["kind"] == "repair":
        return "repair, right everywhere" if row["everywhere"] else "repair (best)"
    return "accepted" if row["accepted"] else "rejected"


def _section(rows: pd.DataFrame, codes: Mapping[str, str]) -> str:
    original = rows[rows["kind"] == "original"].iloc[0]
    best = rows[rows["kind"] == "repair"]
    case, impl = original["case"], original["implementation"]
    head = f"<h2>{e(case)}: {e(impl)}</h2>"
    before = f"{original['right']} of {original['judged']} judged values right"
    if best.empty:
        said = (
            f"<p>No repair: {e(before)}, and no candidate is right wherever the original "
            "is and right somewhere it fails.</p>"
        )
    else:
        b = best.iloc[0]
        said = (
            f"<p>Before: {e(before)} ({original['share']:.1%}). After: {b['right']} of "
            f"{b['judged']} ({b['share']:.1%}), {b['fixed']} fixed, no regression: "
            f"<code>{e(b['form'])}</code> ({e(b['part'])}).</p>"
        )
        if b["still"]:
            said += f"<p>Where it still fails: {e(b['still'])}.</p>"
    shown = rows.assign(kind=rows.apply(_verdict, axis=1))[list(_COLUMNS)]
    numeric = ["right", "judged", "share right", "regressions", "fixed", "cost"]
    alternatives = table(shown.rename(columns=_COLUMNS), numeric=numeric)
    code = "".join(
        f"<h3>{e(name)}</h3><pre>{e(text)}</pre>" for name, text in sorted(codes.items())
    )
    return head + said + alternatives + code


def repairs_page(tables: Mapping[str, pd.DataFrame], codes: Mapping[str, Mapping[str, str]]) -> str:
    """The page: ``tables`` by case (``harness repair --table``), ``codes`` by case, then
    file name, the modules' text."""
    intro = (
        "<h1>Repairs</h1><p>For each implementation a formula or rule root cause names, "
        "the candidates <code>harness repair</code> found (rewrites by equality saturation, "
        "custom rules from the function's own derivative, the best joined, regimes), each "
        "judged by the study's own stages beside the original. A repair is right wherever "
        "the original is and right somewhere it fails; cost is the operations per value. "
        'Back to the <a href="index.html">index</a>.</p>'
    )
    sections = []
    for case in sorted(tables):
        frame = tables[case]
        for impl, rows in frame.groupby("implementation", sort=True):
            mine = {n: t for n, t in codes.get(case, {}).items() if n.startswith(f"{impl}_")}
            sections.append(_section(rows, mine))
    if not sections:
        sections.append("<p>No implementation was searched.</p>")
    return page("Repairs", intro + "".join(sections))


def read_repairs(results: str | Path) -> tuple[dict, dict]:
    """``(tables, codes)`` from ``results/repairs/``."""
    from harness.results import read_table

    folder = Path(results) / "repairs"
    tables, codes = {}, {}
    for path in sorted(folder.glob("*.parquet")):
        tables[path.stem] = read_table(path)
        code = folder / path.stem
        codes[path.stem] = {
            p.name: p.read_text(encoding="utf-8") for p in sorted(code.glob("*.py"))
        }
    return tables, codes
