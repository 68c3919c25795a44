"""The worst failures of an errors table, and the terminal table of a case's summary
(the summary rows themselves are :func:`harness.judge.case_tables.summarise_case`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.judge.compare import NOT_JUDGED, OUTCOMES
from harness.judge.findings_text import format_value

__all__ = [
    "NOT_FAILURES",
    "compact",
    "format_summary",
    "ranked_failures",
    "worst_failure",
    "worst_of",
    "worst_point",
]

KEYS = ["backend", "implementation", "method", "mode", "dtype", "order", "partial"]
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
    "flushed": "flush",
    "not_applicable": "n/a",
}


#: Outcomes that are not failures of an implementation: right, not judged, the
#: platform's subnormal flush (reported apart), or a combination the framework cannot
#: express.
NOT_FAILURES = ("ok", *NOT_JUDGED)


def compact(frame: pd.DataFrame, most: int = 4096) -> pd.DataFrame:
    """``frame`` with its text columns of at most ``most`` distinct values as categoricals
    (the same values): grouping a large errors table and selecting each group's rows then
    moves small integer codes instead of strings (the softplus case's summary and
    findings took half the time)."""
    out = {}
    for name in frame.columns:
        col = frame[name]
        if pd.api.types.is_string_dtype(col.dtype) and not isinstance(
            col.dtype, pd.CategoricalDtype
        ):
            if col.nunique(dropna=False) <= most:
                col = col.astype("category")
        out[name] = col
    return pd.DataFrame(out, index=frame.index)


def ranked_failures(frame: pd.DataFrame) -> pd.DataFrame:
    """Judged rows that fail (not ``ok``, ``ref_unreliable`` or ``flushed``), worst
    first: failures without a number (error, missing, NaN) first, then by bits of error."""
    bad = frame[~frame["outcome"].isin(NOT_FAILURES)]
    rank = np.where(bad["bits"].isna(), np.inf, bad["bits"])
    return bad.iloc[np.argsort(-rank, kind="stable")]


def worst_of(rows: np.ndarray, bits: np.ndarray) -> int | None:
    """Of failing rows (positions into ``bits``), the worst, as :func:`ranked_failures`
    ranks them: the first of the highest rank (no number first, then bits of error);
    ``None`` for no rows."""
    if not len(rows):
        return None
    b = bits[rows]
    return int(rows[int(np.argmax(np.where(np.isnan(b), np.inf, b)))])


def worst_failure(frame: pd.DataFrame) -> pd.Series | None:
    """The first row of :func:`ranked_failures` (``None``: no failure), found without
    ordering the others."""
    bad = np.flatnonzero(~frame["outcome"].isin(NOT_FAILURES).to_numpy())
    at = worst_of(bad, frame["bits"].to_numpy(np.float64))
    return None if at is None else frame.iloc[at]


def worst_point(group: pd.DataFrame, inputs: list[str], row: pd.Series | None = None) -> str:
    """``inputs => got != wanted (error)`` for the worst row of ``group`` (``row``: its
    :func:`worst_failure`, where the caller has it)."""
    row = worst_failure(group) if row is None else row
    if row is None:
        return ""
    dtype = row["dtype"] if "dtype" in row else "float64"
    where = ", ".join(f"{n}={format_value(row[n], dtype)}" for n in inputs)
    if row["outcome"] in ("error", "missing", "not_applicable"):
        return f"{where} => {row['outcome']}: {row['message']}"
    return (
        f"{where} => {row['value']:.8g} != {row['reference_rounded']:.8g} "
        f"({row['outcome']}, {row['bits']:.1f} bits)"
    )


def format_summary(summary: pd.DataFrame) -> str:
    """A plain-text table for the terminal."""
    present = [o for o in OUTCOMES if summary[o].sum() > 0] or ["ok"]
    head = ["backend", "implementation", "method", "mode", "dtype", "d"] + [
        _SHORT[o] for o in present
    ]
    head += ["broken", "worst point"]
    body = []
    for r in summary.itertuples(index=False):
        d = r.partial or "f"
        body.append(
            [
                r.backend,
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
