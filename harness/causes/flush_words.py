"""The platform's flush in words (:mod:`harness.causes.statement`'s ``platform`` root
causes): where the flushed derivative lies against each dtype's smallest normal."""

from __future__ import annotations

import json

import pandas as pd

from harness.causes.regions import listed
from harness.judge.findings_text import format_value
from harness.numerics.floats import FORMATS

__all__ = ["chained", "flush_where"]


def flush_where(group: pd.DataFrame, dtypes: list[str]) -> str:
    """Where the flushed derivative lies: below the smallest normal, or (Taylor mode,
    :func:`harness.numerics.flush.at_threshold`) above it with its Taylor coefficient
    below it. ``dtypes``: the members' own, each one's smallest normal named."""
    flushes = [json.loads(t) for t in group.get("flushed", []) if isinstance(t, str) and t]
    edge = {bool(x.get("threshold")) for x in flushes}
    named = [f"{d}'s {format_value(FORMATS[d].smallest_normal, d)}" for d in dtypes]
    least = (
        f"{dtypes[0]}'s smallest normal ({named[0].split(' ', 1)[1]})"
        if len(dtypes) == 1
        else f"its dtype's smallest normal ({listed(named)})"
    )
    if edge == {True}:
        return (
            f"is at least {least} but less than k! times it (k the order): its Taylor "
            "coefficient f^(k)/k!, which Taylor mode (jet) carries, is subnormal and is "
            "written as 0, so it is 0,"
        )
    if True in edge:
        return (
            f"is below {least}, or its Taylor coefficient f^(k)/k! is (Taylor mode), "
            "and is written as 0,"
        )
    return f"is below {least} and is written as 0,"


def chained(culprit: dict) -> str:
    """What carries the flushed derivative to the function's: ``the rest of the chain rule
    makes``; where the flushed primitive is the whole differentiated expression in every
    framework (a census's ``sigmoid(x)``, as the localisation records it), there is no
    chain rule to speak of: ``this, the primitive being the whole function, makes``. (A
    primitive whose truth merely equals the function's, softplus's ``exp`` at -706.7, is
    not the whole function.)"""
    whole = bool(culprit) and all(c.get("whole") is True for c in culprit.values())
    if whole:
        return "this, the primitive being the whole function, makes"
    return "the rest of the chain rule makes"
