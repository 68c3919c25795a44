"""The census page's summary: the share right per framework and dtype, the root causes
by kind and framework, and the clean bills (the kernels each framework computes right at
every value judged, :mod:`harness.census.bills`)."""

from __future__ import annotations

import pandas as pd

from harness.backends.catalogue import SPECS, TITLES
from harness.census.bills import cause_counts, clean_kernels
from harness.numerics.floats import DTYPES
from harness.report.html import table

__all__ = ["census_summary"]


def _shares(bills: pd.DataFrame, backends: list[str]) -> str:
    """Values judged right, per framework (rows) and dtype (columns), by every method."""
    dtypes = [d for d in DTYPES if d in set(bills["dtype"])]
    rows = []
    for b in backends:
        mine = bills[bills["backend"] == b]
        row = {"framework": TITLES[b]}
        for d in [*dtypes, "all"]:
            sel = mine if d == "all" else mine[mine["dtype"] == d]
            judged, ok = int(sel["judged"].sum()), int(sel["ok"].sum())
            row[d] = f"{ok / judged:.2%} of {judged:,}" if judged else "-"
        rows.append(row)
    return table(pd.DataFrame(rows), numeric=[*dtypes, "all"])


def _counts(causes: pd.DataFrame, backends: list[str]) -> str:
    counts = cause_counts(causes, backends)
    counts.columns = [TITLES.get(c, c) for c in counts.columns]
    frame = counts.reset_index()
    return table(frame, numeric=list(counts.columns))


def _bills(bills: pd.DataFrame, backends: list[str]) -> str:
    """Per framework: the kernels right at every value judged by autodiff in every dtype,
    those right by every method too, and those clean in some dtypes only."""
    autodiff = clean_kernels(bills, "clean_autodiff")
    every = clean_kernels(bills, "clean")
    rows = []
    for b in backends:
        mine = bills[bills["backend"] == b]
        whole = autodiff.get(b, [])
        some = (
            mine[mine["clean_autodiff"] & ~mine["operator"].isin(whole)]
            .groupby("operator", sort=True)["dtype"]
            .agg(lambda d: ", ".join(x for x in DTYPES if x in set(d)))
        )
        partly = "; ".join(f"{op} ({dtypes})" for op, dtypes in some.items())
        rows.append(
            {
                "framework": TITLES[b],
                "kernels judged": int(mine["operator"].nunique()),
                "right everywhere by autodiff": ", ".join(whole) or "none",
                "by finite differences too": ", ".join(every.get(b, [])) or "none",
                "right by autodiff in some dtypes only": partly or "none",
            }
        )
    return table(pd.DataFrame(rows), numeric=["kernels judged"])


def census_summary(bills: pd.DataFrame, causes: pd.DataFrame | None) -> str:
    """The summary's HTML (empty where nothing was judged)."""
    if bills.empty:
        return ""
    backends = [b for b in SPECS if b in set(bills["backend"])]
    parts = [
        "<h2>Summary</h2><p>Values judged right, by every method and mode, per framework "
        "and dtype:</p>",
        _shares(bills, backends),
    ]
    if causes is not None and len(causes):
        parts += [
            f"<p>{len(causes)} root causes by kind and framework (one in two frameworks "
            "counts in each; <i>all</i> counts it once):</p>",
            _counts(causes, backends),
        ]
    parts += [
        '<h3 id="clean-bills">Clean bills</h3><p>A kernel is right everywhere in a '
        "framework where every value judged (its value and its derivatives of every order "
        "run, in every mode and dtype, wherever the reference is certified) is right. "
        "Values the framework refused to compute are not judged; "
        "<code>results/census/clean_bills.csv</code> has each kernel, framework and dtype "
        "with its counts.</p>",
        _bills(bills, backends),
    ]
    return "".join(parts)
