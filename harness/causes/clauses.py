"""The clauses a root cause's statement is built from, each from its own evidence: what
the function's own value was judged (``value_ok``), which other frameworks get the points
right and how many (``backends_ok``), what each framework picks at a kink (``kink``), a
NaN whose truth lies beyond the dtype."""

from __future__ import annotations

import json
import math

import pandas as pd

from harness.causes.regions import listed
from harness.judge.findings_text import format_value
from harness.numerics.floats import FORMATS, round_decimal

__all__ = [
    "OUTCOME_WORDS",
    "RIGHT_SHARE",
    "VALUE_RIGHT",
    "kink_clause",
    "nonfinite_words",
    "others_at_those_points",
    "overflows",
    "percent",
    "shares_told",
    "subnormal_zeros",
    "value_clause",
]


OUTCOME_WORDS = {
    "nonfinite": "NaN or infinite",
    "wrong": "wrong (at most 4 correct bits, a 0 or the wrong sign)",
    "zero": "0 where the truth is not",
    "inaccurate": "inaccurate (bits lost beyond the tolerance)",
    "missing": "missing (no gradient returned)",
    "error": "an exception",
}


def nonfinite_words(group: pd.DataFrame) -> str:
    """``NaN``, ``infinite`` (where the truth is finite: the outcome ``inf``) or both;
    where a NaN stands for a truth beyond the dtype, that the right value there is the
    infinity (the NaN is the defect, not the overflow)."""
    kinds = set(group["outcome"])
    word = {"nan": "NaN", "inf": "infinite"}.get(kinds.pop(), "") if len(kinds) == 1 else ""
    word = word or OUTCOME_WORDS["nonfinite"]
    beyond = [
        overflows(t, d)
        for o, t, d in zip(group["outcome"], group["worst_truth"], group["dtype"])
        if o == "nan"
    ]
    if beyond and all(beyond):
        if "inf" in set(group["outcome"]):  # an infinity for a finite truth: not there
            return f"{word} (where it is NaN, the truth lies beyond the dtype: its right value is ±inf)"
        return f"{word} (the truth lies beyond the dtype there: its right value is ±inf)"
    if any(beyond):
        return f"{word} (at some points the truth lies beyond the dtype, where ±inf is right)"
    return word


def overflows(truth, dtype: str) -> bool:
    """Whether the truth rounds to an infinity in ``dtype`` (directly, as judged)."""
    return math.isinf(round_decimal(truth, dtype))


#: What :func:`value_clause` returns where every member's value was judged right.
VALUE_RIGHT = "value right"


def value_clause(group: pd.DataFrame) -> str:
    """What the rows say of the function's own value (order 0) at the members' failing
    points (``value_ok``, :mod:`harness.causes.evidence`): :data:`VALUE_RIGHT` where it
    was judged right at every one of them; ``; the function's own value (order 0) is
    wrong at some of these points too: right at 40% of them in the worst finding`` where
    it was not (``is wrong at these points too: right at none of them ...`` where one
    member's value is wrong at every one); ``""`` where it was not judged at some member's points (a statement then
    claims nothing of it)."""
    shares = pd.to_numeric(group.get("value_ok", pd.Series(dtype=float)), errors="coerce")
    if shares.empty or (shares.dropna() >= 1.0).all():
        # Right wherever judged: said only where it was judged at every member's points.
        return VALUE_RIGHT if len(shares) and shares.notna().all() else ""
    least = float(shares.min())
    if least <= 0:  # "some" would say less than the rows: wrong at all of one's points
        return (
            "; the function's own value (order 0) is wrong at these points too: right at "
            "none of them in the worst finding"
        )
    return (
        "; the function's own value (order 0) is wrong at some of these points too: right "
        f"at {percent(least)} of them in the worst finding"
    )


def percent(share: float) -> str:
    """``40%``: 100% and 0% only where the share is exactly 1 or 0 (99.6% of the points
    is not all of them, and reads ``99%``)."""
    if share >= 1:
        return "100%"
    if share <= 0:
        return "0%"
    return f"{min(max(round(share * 100), 1), 99)}%"


def kink_clause(group: pd.DataFrame, titles) -> str:
    """What the frameworks pick at the kinks their members meet (:mod:`harness.causes.kinks`)."""
    seen: dict[str, list[dict]] = {}
    for b, text in zip(group["backend"], group["kink"]):
        if isinstance(text, str) and text and b not in seen:
            seen[b] = json.loads(text)
    kinks = next(iter(seen.values()))
    where = "; ".join(
        f"{k['primitive']} at "
        + ", ".join(f"{n} = {format_value(v, 'float64')}" for n, v in k["inputs"].items())
        + f" ({k['where']})"
        for k in kinks
    )
    said = (
        f"at a kink: {where}, where the derivative exists only as the two sides together "
        "and each framework takes a one-sided slope of its own"
    )
    chose = []
    for b, ks in seen.items():
        parts = [
            f"{k['primitive']}: "
            + (
                f"the branch {k['branch']}"
                if k["name"] == "where"
                else ", ".join(
                    f"d/d{p} = {format_value(v, 'float64')}" for p, v in k["picks"].items()
                )
            )
            for k in ks
            if k["name"] == "where" or k["picks"]
        ]
        if parts:
            chose.append(f"{titles(b)} takes {'; '.join(parts)}")
    right, _ = others_at_those_points(group)
    tail = f" ({'. '.join(chose)})" if chose else ""
    if right:
        tail += f"; {shares_told(right, titles)}"
    return said + tail


#: The share of a finding's points another framework must get right to be named right.
RIGHT_SHARE = 0.5


def others_at_those_points(group: pd.DataFrame) -> tuple[dict[str, float], dict[str, float]]:
    """The other frameworks at the members' failing points (their ``backends_ok``): those
    right at :data:`RIGHT_SHARE` of them or more in every member, with their least share
    (the statement names them right), and those that fail there too."""
    shares: dict[str, list[float]] = {}
    for text in group.get("backends_ok", pd.Series(dtype=object)):
        for b, v in json.loads(text or "{}").items():
            shares.setdefault(b, []).append(float(v))
    least = {b: min(v) for b, v in shares.items() if b not in set(group["backend"])}
    right = {b: v for b, v in least.items() if v >= RIGHT_SHARE}
    return right, {b: v for b, v in least.items() if b not in right}


def shares_told(right: dict[str, float], titles) -> str:
    """``JAX gets 100% of these points right``, ``JAX and PyTorch get 100% and 98% of
    these points right`` (each one's least share over the findings)."""
    if not right:
        return ""
    names = listed([titles(b) for b in right])
    shares = listed([percent(v) for v in right.values()])
    return f"{names} get{'s' if len(right) == 1 else ''} {shares} of these points right"


def subnormal_zeros(group: pd.DataFrame) -> str:
    """`` (where it gives 0, the truth is below float32's smallest normal, 1.1754944e-38)``
    where every 0 among the members' worst values stands for a subnormal truth: a flush
    of subnormal results (the platform's, or a kernel's own where the platform keeps them), which a
    reader tells apart from a 0 for an ordinary number."""
    zeros = group[pd.to_numeric(group["worst_got"], errors="coerce") == 0]
    if zeros.empty:
        return ""
    for truth, dtype in zip(zeros["worst_truth"], zeros["dtype"]):
        if not 0 < abs(round_decimal(truth, dtype)) < FORMATS[dtype].smallest_normal:
            return ""
    dtypes = [d for d in FORMATS if d in set(zeros["dtype"])]  # float16 ... float64
    least = {d: format_value(FORMATS[d].smallest_normal, d) for d in dtypes}
    # "Where it gives 0": the worst point may be another value than 0 (got 2e-38 for a
    # truth of 6e-38), and the clause is about the zeros only.
    if len(dtypes) == 1:
        return f" (where it gives 0, the truth is below {dtypes[0]}'s smallest normal, {least[dtypes[0]]})"
    each = listed([f"{d}'s {v}" for d, v in least.items()])
    return f" (where it gives 0, the truth is below its dtype's smallest normal: {each})"
