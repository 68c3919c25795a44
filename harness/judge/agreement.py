"""Where the frameworks agree and where they do not: one case's errors table, its back
ends side by side at the same points (:mod:`harness.report.frameworks_page` shows it).

At each point of each way (implementation, method), derivative and dtype, a back end's
*outcome* is the worst of its modes (a failure in ``jax.jit`` and not in eager mode is
the framework's failure at that point); ``flushed``, ``ref_unreliable`` and
``not_applicable`` rows are not judged and leave the back end out there. A point where
two or more back ends are judged is:

- ``split``: one back end is ``ok`` and another fails (one framework right, another
  wrong: the differences a framework engineer looks for first);
- ``differ``: every back end fails, not all in the same way;
- ``agree``: the same outcome in every judged back end.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from harness.cases.model import label_partial
from harness.judge.findings_text import derivative_name
from harness.judge.runs import SEVERITY

__all__ = ["AGREEMENT_COLUMNS", "AGREEMENT_READS", "agreement", "disagreements", "split_share"]

#: Outcomes that judge nothing about the framework.
_UNJUDGED = ("flushed", "ref_unreliable", "not_applicable")
_RANK = {o: len(SEVERITY) - i for i, o in enumerate(SEVERITY)}  # wrong 7 ... inaccurate 1
_RANK["ok"] = 0

#: :func:`agreement`'s columns beside the point's own (way, derivative, dtype, inputs).
AGREEMENT_COLUMNS = ["backends", "outcomes", "verdict"]

#: The errors table's columns :func:`agreement` reads, beside the inputs.
AGREEMENT_READS = ["implementation", "method", "partial", "dtype", "backend", "outcome"]


def agreement(errors: pd.DataFrame, inputs: Sequence[str]) -> pd.DataFrame:
    """One row per point judged in two or more back ends: ``implementation method
    derivative dtype`` and the inputs, then ``outcomes`` (a dict back end -> its worst
    outcome over its modes), ``backends`` (how many judged it) and ``verdict``
    (``split``, ``differ`` or ``agree``). Empty when the case ran in one back end."""
    if errors.empty or "backend" not in errors or errors["backend"].nunique() < 2:
        return pd.DataFrame(columns=_keys(inputs) + AGREEMENT_COLUMNS)
    # Only the columns it reads: a mask or sort of a wide table of Arrow strings takes
    # every column (the frameworks page's 2.3 s of 4.8 were these takes).
    frame = errors[[*AGREEMENT_READS, *inputs]]
    frame = frame[~frame["outcome"].astype(str).isin(_UNJUDGED)]
    # Labels as categories: a map or cast of one then takes a value per label, not per row.
    frame = frame.astype({c: "category" for c in ("partial", "outcome")})
    names = {p: derivative_name(label_partial(p, inputs)) for p in frame["partial"].unique()}
    frame = frame.assign(
        derivative=frame["partial"].map(names).astype(str),
        rank=frame["outcome"].astype(str).map(_RANK).fillna(len(SEVERITY)).astype(int),
    )
    keys = _keys(inputs)
    worst = frame.sort_values("rank", kind="stable").groupby([*keys, "backend"], sort=False).tail(1)
    # One row per point, one column per back end (its worst outcome; None: not judged).
    wide = (
        worst.assign(outcome=worst["outcome"].astype(str), backend=worst["backend"].astype(str))
        .set_index([*keys, "backend"])["outcome"]
        .unstack("backend")
    )
    judged = wide.notna().sum(axis=1)
    wide = wide[judged >= 2]
    if wide.empty:
        return pd.DataFrame(columns=keys + AGREEMENT_COLUMNS)
    names = list(wide.columns)
    outcomes = [
        {b: o for b, o in zip(names, row) if isinstance(o, str)}
        for row in wide.to_numpy(dtype=object)
    ]
    verdict = [_verdict(set(o.values())) for o in outcomes]
    out = wide.index.to_frame(index=False)
    out["backends"] = judged[judged >= 2].to_numpy()
    out["outcomes"] = outcomes
    out["verdict"] = verdict
    return out[keys + AGREEMENT_COLUMNS]


def _verdict(kinds: set[str]) -> str:
    return "agree" if len(kinds) == 1 else "split" if "ok" in kinds else "differ"


def disagreements(points: pd.DataFrame, axis: str, order: Sequence[str]) -> pd.DataFrame:
    """The points that are not ``agree``, grouped by way, derivative, dtype and pattern
    of outcomes (``pattern``: ``back end: outcome`` joined in ``order``): ``points`` and
    the range of ``axis`` they cover; splits first, then the worst outcome in the pattern
    (``severity``: wrong 7 ... inaccurate 1), then the most points."""
    cols = [
        "severity",
        "implementation",
        "method",
        "derivative",
        "dtype",
        "verdict",
        "pattern",
        "points",
        "lo",
        "hi",
    ]
    if points.empty:
        return pd.DataFrame(columns=cols)
    off = points[points["verdict"] != "agree"]
    if off.empty:
        return pd.DataFrame(columns=cols)
    pattern = [" · ".join(f"{b}: {o[b]}" for b in order if b in o) for o in off["outcomes"]]
    worst = [max(_RANK.get(v, len(SEVERITY)) for v in o.values()) for o in off["outcomes"]]
    off = off.assign(pattern=pattern, severity=worst)
    out = (
        off.groupby(
            ["implementation", "method", "derivative", "dtype", "verdict", "pattern"], sort=False
        )
        .agg(
            points=(axis, "size"), lo=(axis, "min"), hi=(axis, "max"), severity=("severity", "max")
        )
        .reset_index()
    )
    out["split"] = out["verdict"] == "split"
    out = out.sort_values(
        ["split", "severity", "points"], ascending=[False, False, False], kind="stable"
    )
    return out.reset_index(drop=True)[cols]


def _keys(inputs: Sequence[str]) -> list[str]:
    return ["implementation", "method", "derivative", "dtype", *inputs]


def split_share(points: pd.DataFrame) -> dict[str, int]:
    """Counts of compared points by verdict."""
    counts = points["verdict"].value_counts() if not points.empty else pd.Series(dtype=int)
    return {v: int(counts.get(v, 0)) for v in ("split", "differ", "agree")} | {
        "compared": int(len(points))
    }
