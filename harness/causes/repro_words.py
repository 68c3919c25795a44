"""What a root cause's reproducers compute, in words, so that every number a page or a bug
report prints beside a script or a probe command is that command's own: the script of a
``kernel`` or ``mode`` root cause computes the primitive alone at the input it receives,
while ``harness probe`` computes the case's implementation at the finding's worst point,
another point with another value."""

from __future__ import annotations

import json
import math

from harness.judge.findings_text import format_value

__all__ = ["probe_words", "script_words"]


def _where(rep: dict) -> str:
    dtype = str(rep.get("dtype") or "float64")
    try:
        inputs = json.loads(rep.get("inputs") or "{}")
    except (TypeError, ValueError):
        inputs = {}
    at = ", ".join(f"{k} = {format_value(v, dtype)}" for k, v in inputs.items())
    partial = str(rep.get("derivative") or "f")
    what = "the value" if partial == "f" else f"d/d{partial}"
    how = ", ".join(str(rep[k]).replace("_", "-") for k in ("method", "mode") if rep.get(k))
    return f"{rep.get('target') or 'it'}, {what} at {at or 'its point'} ({dtype}, {how})"


def script_words(rep: dict) -> str:
    """``the script computes primitive softplus(u), d/duu at u = 20.0 (float32, reverse,
    eager) and prints got 0.0; the certified truth there is 2.06e-09 (it shows the
    failure)``."""
    got = rep.get("got")
    got = "nan" if got is None or (isinstance(got, float) and math.isnan(got)) else repr(got)
    state = (
        "it shows the failure"
        if rep.get("reproduces")
        else "it does not show the failure: the standalone script computes another value "
        "than the harness recorded; only the probe command, which computes it as the "
        "harness did, reproduces the finding"
    )
    return (
        f"the script computes {_where(rep)} and prints got {got}; the certified truth there "
        f"is {rep.get('truth')} ({state})"
    )


def probe_words(rep: dict) -> str:
    """What the probe command computes: the finding's worst point in its case (where the
    script is a primitive alone, said to be another point than the script's)."""
    alone = str(rep.get("target") or "").startswith("primitive ")
    what = (
        "the case's implementation at the finding's worst point (not the script's primitive)"
        if alone
        else "the same value with the harness"
    )
    return what
