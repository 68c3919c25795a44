"""Summaries of an errors table: counts per outcome and the worst point per combination."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .compare import OUTCOMES

__all__ = ["combination_summary", "format_summary", "worst_point"]

KEYS = ["implementation", "method", "mode", "dtype", "order", "partial"]
_SHORT = {
    "ok": "ok",
    "inaccurate": "inacc",
    "wrong": "wrong",
    "nan": "nan",
    "inf": "inf",
    "zero": "zero",
    "missing": "miss",
    "error": "err",
    "ref_unreliable": "unrel",
}


def worst_point(group: pd.DataFrame, inputs: list[str]) -> str:
    """``inputs => got != wanted (error)`` for the row with the most bits of error."""
    judged = group[group["outcome"] != "ref_unreliable"]
    bad = judged[judged["outcome"] != "ok"]
    if bad.empty:
        return ""
    # Failures without a number (error, missing) rank first, then by bits of error.
    order = bad.assign(_rank=np.where(bad["bits"].isna(), np.inf, bad["bits"]))
    row = order.sort_values("_rank", ascending=False, kind="stable").iloc[0]
    where = ", ".join(f"{n}={row[n]:.6g}" for n in inputs)
    if row["outcome"] in ("error", "missing"):
        return f"{where} => {row['outcome']}: {row['message']}"
    return (
        f"{where} => {row['value']:.8g} != {row['reference_rounded']:.8g} "
        f"({row['outcome']}, {row['bits']:.1f} bits)"
    )


def combination_summary(errors: pd.DataFrame, inputs: list[str]) -> pd.DataFrame:
    """One row per (implementation, method, mode, dtype, order, partial)."""
    rows = []
    for key, group in errors.groupby(KEYS, sort=False, observed=True):
        counts = group["outcome"].value_counts()
        judged = group[group["outcome"] != "ref_unreliable"]["bits"]
        rows.append(
            {
                **dict(zip(KEYS, key)),
                "points": len(group),
                **{o: int(counts.get(o, 0)) for o in OUTCOMES},
                "median_bits": float(judged.median()) if judged.notna().any() else np.nan,
                "max_bits": float(judged.max()) if judged.notna().any() else np.nan,
                "expected_broken": int((group["expected"] == "broken").sum()),
                "worst": worst_point(group, inputs),
            }
        )
    return pd.DataFrame(rows)


def format_summary(summary: pd.DataFrame) -> str:
    """A plain-text table for the terminal."""
    present = [o for o in OUTCOMES if summary[o].sum() > 0] or ["ok"]
    head = ["implementation", "method", "mode", "dtype", "d"] + [_SHORT[o] for o in present]
    head += ["broken", "worst point"]
    body = []
    for r in summary.itertuples(index=False):
        d = r.partial or "f"
        body.append(
            [
                r.implementation,
                r.method,
                r.mode,
                r.dtype,
                d,
                *[str(getattr(r, o)) for o in present],
                str(r.expected_broken) if r.expected_broken else "",
                r.worst,
            ]
        )
    widths = [
        max(len(h), *(len(row[i]) for row in body)) if body else len(h) for i, h in enumerate(head)
    ]
    widths[-1] = 0
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in body]
    return "\n".join(lines)
