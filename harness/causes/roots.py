"""Root causes: the findings of a study grouped by mechanism, each stated once.

Every finding gets a kind and a subject (:func:`harness.causes.classify.decide`); the
findings that share (kind, subject, outcome class) are one root cause, whose scope is the
union of theirs: frameworks, cases, implementations, methods, modes, dtypes, orders and
input regions (each member's edges stay exact floats of its own dtype, and the regions
are kept per case, dtype and input). The dtype is scope, not key: a mechanism that makes
softplus's second derivative 0 makes it 0 in float32 and in float64, at other inputs (the
edges of each dtype say where). A finding belongs to
exactly one root cause (its ``root_cause`` column); ``unsupported`` findings leave for the
table of combinations a framework does not offer (:func:`unsupported_table`), keyed by
(framework, the exception's text) with the dtypes merged.

The id is the key itself (``kernel:softplus:wrong``): readable, and the same from
one study to the next, so ``harness bug-report ID`` and a diff between versions keep it.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import numpy as np
import pandas as pd

from harness.cases.schema import BACKENDS
from harness.causes.classify import (
    FRAMEWORK_KINDS,
    SEVERITY_LABELS,
    crash_id,
    decide,
    outcome_class,
    severity,
    signature,
)
from harness.causes.frameworks_apart import apart
from harness.causes.statement import root_text
from harness.judge.findings_text import severity as severity_of
from harness.results import text_as_objects

__all__ = [
    "ROOT_CAUSE_COLUMNS",
    "UNSUPPORTED_COLUMNS",
    "classify_findings",
    "root_causes",
    "unsupported_table",
    "worst_first",
]

ROOT_CAUSE_COLUMNS = [
    "id",
    "kind",
    "primitive",  # the primitive (kernel), else the implementation or the exception
    "outcome",  # the outcome class: nonfinite, wrong, zero, inaccurate, missing, error
    "severity",
    "severity_label",
    "frameworks",
    "cases",
    "implementations",
    "methods",
    "modes",
    "dtypes",
    "orders",
    "regions",  # JSON [{case, dtype, input, lo, hi, lo_exact, hi_exact}] or grid ranges
    "findings",  # JSON ["case:f1", ...]
    "members",  # how many findings it absorbs
    "worst",  # JSON: the worst member's case, framework, implementation, point, got, truth
    "culprit",  # JSON per framework: the primitive's failing partial, input, got, truth
    "intermediate",
    "fixes",  # JSON: the case implementations that stay right there
    "text",
    "expected",  # expected, partly expected or unexpected
]
UNSUPPORTED_COLUMNS = [
    "framework",
    "what",
    "exception",
    "methods",
    "cases",
    "implementations",
    "dtypes",
    "orders",
    "findings",
    "expected",
]

_SEP = ", "


def classify_findings(
    findings: pd.DataFrame,
    refusals: Callable[[str], tuple[str, ...]],
    compilers: Callable[[str], dict] = lambda backend: {},
) -> pd.DataFrame:
    """``findings`` with ``kind``, ``subject``, ``impact`` (the severity tier) and
    ``root_cause`` (``refusals(backend)``: the exception types it refuses with;
    ``compilers(backend)``: its compiled modes' compilers)."""
    if findings.empty:
        return findings.assign(kind="", subject="", impact=0, root_cause="")
    kinds, subjects, impacts, roots = [], [], [], []
    # A hand-written rule proven not the derivative is one mechanism whatever its values
    # come to (a NaN at some points, a wrong value or no gradient at others): its
    # findings share one root cause, keyed by their most striking outcome class.
    proven: dict[str, list[int]] = {}
    for i, f in enumerate(text_as_objects(findings).to_dict("records")):
        kind, subject = decide(f, refusals(f["backend"]), compilers(f["backend"]))
        f["kind"] = kind
        kinds.append(kind)
        subjects.append(subject)
        impacts.append(severity(f))
        roots.append(_key(kind, subject, f))
        if kind == "rule" and any(not r["right"] for r in json.loads(f.get("rules") or "[]")):
            # (decide never makes a value, order 0, a rule's: it goes through none)
            proven.setdefault(subject, []).append(i)
    _value_crashes(findings, kinds, subjects, roots)
    for subject, members in proven.items():
        first = min(
            (outcome_class(findings["outcome"].iat[i]) for i in members), key=_STRIKING.index
        )
        for i in members:
            roots[i] = f"rule:{subject}:{first}"
    apart(findings, kinds, impacts, roots)  # one primitive, frameworks failing apart: as many
    return findings.assign(kind=kinds, subject=subjects, impact=impacts, root_cause=roots)


def _value_crashes(findings: pd.DataFrame, kinds: list, subjects: list, roots: list) -> None:
    """A crash of the value itself (an ``error`` at order 0 that is not a refusal) is the
    framework's kernel raising, whatever the method: kind ``kernel``, keyed by the
    framework and the exception. The same exception at the higher orders of that case,
    implementation and dtype is the same crash reached through the value (TensorFlow
    2.21's ``tf.experimental.numpy.hypot`` of bfloat16 raises ``AttributeError`` at
    every order): one root cause, not one per method."""
    crashed = [
        i for i, k in enumerate(kinds) if k == "method" and findings["outcome"].iat[i] == "error"
    ]
    if not crashed:
        return

    def where(i: int) -> tuple:
        text = findings["error_text"].iat[i]
        first = crash_id(text) if isinstance(text, str) and text else ""
        return tuple(findings[c].iat[i] for c in ("case", "backend", "implementation", "dtype")) + (
            first,
        )

    values = {where(i) for i in crashed if int(findings["order"].iat[i]) == 0 and where(i)[-1]}
    for i in crashed:
        key = where(i)
        if key in values:
            kinds[i] = "kernel"
            subjects[i] = f"{key[1]}:{key[-1]}"
            roots[i] = f"kernel:{subjects[i]}:error"


#: Outcome classes, the most striking first (what a merged root cause is keyed by).
_STRIKING = ("nonfinite", "wrong", "missing", "error")


def _key(kind: str, subject: str, f: dict) -> str:
    if kind == "unsupported":
        return f"unsupported:{f['backend']}:{subject}"
    return f"{kind}:{subject}:{outcome_class(f['outcome'])}"


def _union(values, order=None) -> str:
    seen = list(dict.fromkeys(v for text in values for v in str(text).split(_SEP) if v))
    if order:
        seen = [v for v in order if v in seen] + [v for v in seen if v not in order]
    return _SEP.join(seen)


_METHODS = ("reverse", "forward", "forward_over_reverse", "taylor", "finite_difference")
_MODES = ("eager", "function", "xla", "jit", "compile")
_DTYPES = ("float16", "bfloat16", "float32", "float64")


def root_causes(classified: pd.DataFrame, titles: Callable[[str], str] = str) -> pd.DataFrame:
    """One row per root cause of :func:`classify_findings`'s findings (unsupported ones
    aside), ranked: framework bugs, then the cases' own code, then the platform's flush,
    then expected ones; within
    each, the most severe and the widest first. ``titles(backend)``: its name for people."""
    rows = []
    found = classified[classified["kind"] != "unsupported"] if not classified.empty else classified
    for key, group in found.groupby("root_cause", sort=False):
        rows.append(_root(key, group, titles))
    out = pd.DataFrame(rows, columns=ROOT_CAUSE_COLUMNS)
    if out.empty:
        return out
    # Framework bugs (0), then the cases' own code (1), the platform's flush (2), then
    # what was expected (3).
    expected = (out["expected"] == "expected").to_numpy()
    kind = out["kind"]
    tier = np.where(
        expected,
        3,
        np.where(kind.isin(FRAMEWORK_KINDS), 0, np.where(kind == "platform", 2, 1)),
    )
    order = np.lexsort((-out["members"].to_numpy(), -out["severity"].to_numpy(), tier))
    return out.iloc[order].reset_index(drop=True)


def worst_first(members: pd.DataFrame) -> pd.DataFrame:
    """A root cause's findings, the worst first: those whose worst point is autodiff's
    (a finding merges methods; its worst point can be a finite difference's, which no
    framework code computes) and a derivative's before finite differences' and a value's,
    then by impact, severity and breadth. Among crashes, which raise and have no value to
    rank, the one with the fewest inputs comes first: the shortest script (TensorFlow's
    IndexError through ``abs`` rather than ``pow(x, y)``)."""
    method = members["worst_method"].where(members["worst_method"] != "", members["methods"])
    crash = members.get("outcome", pd.Series("", index=members.index)).eq("error")
    inputs = members.get("worst_inputs", pd.Series("", index=members.index)).map(
        lambda t: len(json.loads(t)) if isinstance(t, str) and t else 0
    )
    ranked = members.assign(
        _autodiff=method != "finite_difference",
        _derivative=members["order"] > 0,
        _simple=-inputs.where(crash, 0),
    )
    keys = ["_autodiff", "_derivative", "impact", "severity", "_simple", "hits"]
    return ranked.sort_values(keys, ascending=False, kind="stable")


def _root(key: str, group: pd.DataFrame, titles) -> dict:
    first = group.iloc[0]
    worst = worst_first(group)
    w = worst.iloc[0]
    expected = set(group["expected"])
    state = (
        "expected"
        if expected == {"expected"}
        else (
            "partly expected"
            if "expected" in expected or group["held"].gt(0).any()
            else "unexpected"
        )
    )
    # Each framework's example of the culprit: its most striking failure (a 0, a NaN, a
    # wrong value before bits lost), from the worst member that has one.
    striking = worst.assign(_bad=[severity_of(o) for o in worst["culprit_outcome"]])
    striking = striking.sort_values("_bad", ascending=False, kind="stable")
    culprit = {}
    # Only the columns read below (a findings row has about sixty).
    wanted = [c for c in striking.columns if c.startswith("culprit")]
    wanted += ["backend", "case", "implementation", "dtype"]
    for r in striking[wanted].itertuples(index=False):
        if r.culprit and r.backend not in culprit:
            culprit[r.backend] = {
                "primitive": r.culprit_primitive,
                "partial": r.culprit_partial,
                "outcome": r.culprit_outcome,
                "inputs": json.loads(r.culprit_inputs or "{}"),
                "got": float(r.culprit_got),
                "truth": str(r.culprit_truth),
                "method": r.culprit_method,
                "mode": getattr(r, "culprit_mode", "") or "eager",
                "case": r.case,
                "implementation": r.implementation,
                "dtype": r.dtype,
            }
    if first["kind"] == "platform":  # the flushed primitive, as each framework gives it
        for r in worst[["backend", "case", "implementation", "dtype", "flushed"]].itertuples():
            if r.flushed and r.backend not in culprit:
                culprit[r.backend] = {
                    **json.loads(r.flushed),
                    "outcome": "flushed",
                    "case": r.case,
                    "implementation": r.implementation,
                    "dtype": r.dtype,
                }
    fixes = sorted({x for text in group["fixes"] for x in json.loads(text or "[]")})
    row = {
        "id": key,
        "kind": first["kind"],
        "primitive": first["subject"],
        "outcome": key.rsplit(":", 1)[-1],
        "severity": int(group["impact"].max()),
        "severity_label": SEVERITY_LABELS[int(group["impact"].max())],
        "frameworks": _union(group["backend"], BACKENDS),
        "cases": _union(group["case"]),
        "implementations": _union(group["case"] + "." + group["implementation"]),
        "methods": _union(group["methods"], _METHODS),
        "modes": _union(group["modes"], _MODES),
        "dtypes": _union(group["dtype"], _DTYPES),
        "orders": _SEP.join(str(o) for o in sorted(set(group["order"].astype(int)))),
        "regions": json.dumps(_regions(group)),
        "findings": json.dumps([f"{c}:{i}" for c, i in zip(group["case"], group["id"])]),
        "members": len(group),
        "worst": json.dumps(
            {
                "case": w["case"],
                "framework": w["backend"],
                "implementation": w["implementation"],
                "partial": w["partial"],
                "derivative": w["derivative"],
                "inputs": json.loads(w["worst_inputs"] or "{}"),
                "got": float(w["worst_got"]),
                "truth": str(w["worst_truth"]),
                "method": w["worst_method"],
                "mode": w["worst_mode"],
                "finding": f"{w['case']}:{w['id']}",
                "dtype": w["dtype"],
                "outcome": str(w["outcome"]),
            }
        ),
        "culprit": json.dumps(culprit),
        "intermediate": _common(group["intermediate"]),
        "fixes": json.dumps(fixes),
        "expected": state,
    }
    row["text"] = root_text(row, group, titles)
    return row


def _common(values) -> str:
    found = [v for v in values if v]
    return max(set(found), key=found.count) if found else ""


def _regions(group: pd.DataFrame) -> list[dict]:
    """The members' input regions, merged per (case, dtype, input) where they overlap."""
    out: list[dict] = []
    keys = ["case", "dtype", "input"]
    order = {d: i for i, d in enumerate(_DTYPES)}
    groups = sorted(
        group.groupby(keys, sort=False), key=lambda kv: (kv[0][0], order.get(kv[0][1], 9), kv[0][2])
    )
    for (case, dtype, axis), g in groups:
        if not axis:
            ranges: dict[str, list[float]] = {}
            for text in g["ranges"]:
                for n, (a, b) in json.loads(text or "{}").items():
                    lo, hi = ranges.get(n, [a, b])
                    ranges[n] = [min(lo, a), max(hi, b)]
            out.append({"case": case, "dtype": dtype, "input": "", "ranges": ranges})
            continue
        spans = sorted(
            (float(lo), float(hi), bool(lx), bool(hx))
            for lo, hi, lx, hx in zip(g["lo"], g["hi"], g["lo_exact"], g["hi_exact"])
        )
        merged: list[list] = []
        for lo, hi, lx, hx in spans:
            if merged and lo <= merged[-1][1]:
                if hi > merged[-1][1]:
                    merged[-1][1], merged[-1][3] = hi, hx
            else:
                merged.append([lo, hi, lx, hx])
        for lo, hi, lx, hx in merged:
            out.append(
                {
                    "case": case,
                    "dtype": dtype,
                    "input": axis,
                    "lo": lo,
                    "hi": hi,
                    "lo_exact": lx,
                    "hi_exact": hx,
                }
            )
    return out


def unsupported_table(classified: pd.DataFrame, titles: Callable[[str], str] = str) -> pd.DataFrame:
    """The combinations a framework does not offer, one row per (framework, exception
    text): what was asked (the methods, and whether through a custom rule), where."""
    rows = []
    if classified.empty:
        return pd.DataFrame(columns=UNSUPPORTED_COLUMNS)
    found = classified[classified["kind"] == "unsupported"]
    # One row per (framework, through what, exception), the methods that raised it
    # merged: a finding whose modes raised two refusals counts in both rows.
    found = found.assign(
        what=[
            "through a hand-written rule"
            if json.loads(r.rules or "[]")
            else "through the expression's own kernels"
            for r in found.itertuples(index=False)
        ],
        exception=[[signature(t) for t in str(x).splitlines() if t] for x in found["error_text"]],
    ).explode("exception")
    for (backend, what, exception), g in found.groupby(["backend", "what", "exception"], sort=True):
        methods = _union(g["methods"], _METHODS)
        rows.append(
            {
                "framework": titles(backend),
                "what": what,
                "exception": exception,
                "methods": methods,
                "cases": _union(g["case"]),
                "implementations": _union(g["case"] + "." + g["implementation"]),
                "dtypes": _union(g["dtype"], _DTYPES),
                "orders": _SEP.join(str(o) for o in sorted(set(g["order"].astype(int)))),
                "findings": json.dumps([f"{c}:{i}" for c, i in zip(g["case"], g["id"])]),
                "expected": _union(g["expected"]),
            }
        )
    return pd.DataFrame(rows, columns=UNSUPPORTED_COLUMNS)
