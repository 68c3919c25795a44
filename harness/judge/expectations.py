"""Which rows a case's expectations cover, and whether each held (the ``expected``,
``expected_outcome`` and ``expectation_reason`` columns of the errors table)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.cases.model import Case, Expectation

__all__ = ["apply_expectations", "covers"]


def apply_expectations(out: pd.DataFrame, case) -> None:
    """Set ``expected_outcome``, ``expectation_reason`` and ``expected`` (in place)."""
    out["expected_outcome"] = ""
    out["expectation_reason"] = ""
    for e in case.expectations:
        mask = covers(e, out, case)
        out.loc[mask, "expected_outcome"] = e.outcome
        out.loc[mask, "expectation_reason"] = e.reason
    covered = out["expected_outcome"] != ""
    # A flushed row is the platform's doing: it neither holds nor breaks an expectation.
    judged = covered & ~out["outcome"].isin(["ref_unreliable", "flushed", "not_applicable"])
    out["expected"] = np.where(
        judged,
        np.where(out["outcome"] == out["expected_outcome"], "held", "broken"),
        np.where(covered, "unjudged", ""),
    )


def covers(e: Expectation, frame: pd.DataFrame, case: Case) -> np.ndarray:
    """Rows of ``frame`` (errors or evaluations) that expectation ``e`` covers."""
    mask = frame["implementation"].isin(e.implementations).to_numpy().copy()
    if e.backends is not None and "backend" in frame:
        mask &= frame["backend"].isin(e.backends).to_numpy()
    for column, allowed in (
        ("method", e.methods),
        ("mode", e.modes),
        ("dtype", e.dtypes),
        ("order", e.orders),
    ):
        if allowed is not None:
            mask &= frame[column].isin(allowed).to_numpy()
    if e.partial is not None:
        mask &= (frame["partial"] == case.label(e.partial)).to_numpy()
    for name, (lo, hi) in e.where.items():
        x = frame[name].to_numpy(np.float64)
        mask &= (x >= lo) & (x <= hi)
    return mask
