"""Findings in words: the one line a reader needs (:mod:`harness.judge.findings`), with the
exact floats of the dtype written as the shortest decimals that read back as them."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from harness.backends.catalogue import SPECS
from harness.cases.schema import DEFAULT_BACKEND
from harness.judge.runs import SEVERITY
from harness.results import text_as_objects

__all__ = [
    "derivative_name",
    "exception_text",
    "finding_text",
    "format_value",
    "interval_text",
    "numbered",
    "rank",
    "severity",
    "statements",
]


def severity(outcome: str) -> int:
    """Higher is worse: wrong 7 ... inaccurate 1 (0: not a failure)."""
    return len(SEVERITY) - SEVERITY.index(outcome) if outcome in SEVERITY else 0


def exception_text(message: str) -> str:
    """The exception's own words of an ``error`` row's message: the harness prefixes
    where it happened (``jax forward (1 nested jax.jvp), order 1 (x), float32, eager
    mode: TypeError: ...``)."""
    text = str(message or "")
    if " mode: " in text:
        text = text.split(" mode: ", 1)[1]
    return text.strip()


def format_value(value: float, dtype: str) -> str:
    """The shortest decimal that reads back as ``value`` in ``dtype``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "nan"
    if dtype == "bfloat16":
        import ml_dtypes

        return str(ml_dtypes.bfloat16(value))
    if dtype == "float64":
        return repr(float(value))
    return str({"float16": np.float16, "float32": np.float32}[dtype](value))


_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def derivative_name(partial: Sequence[str]) -> str:
    """``f``, ``d/dx``, ``d³/dx³``, ``∂²/∂a∂b``."""
    n = len(partial)
    if n == 0:
        return "f"
    power = "" if n == 1 else str(n).translate(_SUPERSCRIPT)
    names = list(dict.fromkeys(partial))
    if len(names) == 1:
        return f"d{power}/d{names[0]}{power}"
    parts = "".join(
        f"∂{v}" + ("" if partial.count(v) == 1 else str(partial.count(v)).translate(_SUPERSCRIPT))
        for v in names
    )
    return f"∂{power}/{parts}"


def interval_text(f: dict, name: str, dtype: str) -> str:
    """``x ≥ 88.72284``, ``x in [87.33655, 88.72283]``, ``x in [~76.63, 78.27645]`` for one
    interval (``lo hi lo_exact hi_exact lo_open hi_open``); ``~``: an edge between two
    sweep points (not bisected)."""
    lo = ("" if f["lo_exact"] or f["lo_open"] else "~") + format_value(f["lo"], dtype)
    hi = ("" if f["hi_exact"] or f["hi_open"] else "~") + format_value(f["hi"], dtype)
    if f["lo"] == f["hi"]:
        return f"{name} = {lo}"
    if f["hi_open"] and not f["lo_open"]:
        return f"{name} ≥ {lo} (to {hi}, the last input judged)"
    if f["lo_open"] and not f["hi_open"]:
        return f"{name} ≤ {hi} (from {lo}, the first input judged)"
    return f"{name} in [{lo}, {hi}]"


def finding_text(f: dict) -> str:
    """The finding as one line: what, where (per variant of the merged ways), the worst
    point."""
    counts = json.loads(f["counts"])
    what = f["outcome"]
    if len(counts) > 1:
        what = " or ".join(sorted(counts, key=lambda o: -severity(o)))
    share = (
        f"{f['hits']} of {f['points']} points"
        if f["hits"] != f["points"]
        else (f"{f['points']} point" + ("s" if f["points"] != 1 else ""))
    )
    worst = ""
    if f["worst_inputs"]:
        # Inputs as the dtype holds them, to the digits that read back to the same float.
        at = ", ".join(
            f"{k} = {format_value(v, f['dtype'])}" for k, v in json.loads(f["worst_inputs"]).items()
        )
        truth = f["worst_truth"]
        truth = _short(truth) if truth else "not judged"
        if f["outcome"] == "error":  # it raised: the exception, not a value
            raised = str(f.get("worst_error") or "an exception").splitlines()[0][:200]
            worst = f"; at {at}: raised {raised}"
        elif f["outcome"] == "missing":  # no gradient: None, not a value
            worst = f"; at {at}: no gradient (None), truth {truth}"
        else:
            worst = f"; at {at}: got {format_value(f['worst_got'], f['dtype'])}, truth {truth}"
    if f["input"]:
        where = "; ".join(
            f"{interval_text(v, f['input'], f['dtype'])} "
            f"({', '.join(v['methods'])}; {', '.join(v['modes'])})"
            for v in json.loads(f["variants"])
        )
    else:
        ranges = json.loads(f.get("ranges") or "{}")
        span = ", ".join(
            f"{n} in [{format_value(a, f['dtype'])}, {format_value(b, f['dtype'])}]"
            if a != b
            else f"{n} = {format_value(a, f['dtype'])}"
            for n, (a, b) in ranges.items()
        )
        where = f"{f['hits']} grid points" + (f" ({span})" if span else "")
        where += f" ({f['methods']}; {f['modes']})"
    partly = ""
    if f.get("expected") == "unexpected" and f.get("held"):
        partly = f"; an expectation covers {f['held']} of its {f['failing']} failing values"
    names = (f.get("backends") or f.get("backend") or DEFAULT_BACKEND).split(", ")
    framework = ", ".join(SPECS[b].title if b in SPECS else b for b in names)
    return (
        f"{f['case']} · {framework} · {f['implementation']} · {f['derivative']} · "
        f"{f['dtype']}: {what} for {where}, {share}{worst}{partly}"
    )


def _short(decimal: str) -> str:
    """Eight significant digits of a reference's decimal, whatever its exponent (a true
    5.08e-435 is not a float64's 0)."""
    import mpmath

    try:
        with mpmath.workdps(30):
            return mpmath.nstr(mpmath.mpf(decimal), 8)
    except (ValueError, TypeError):
        return decimal


def rank(findings: pd.DataFrame) -> np.ndarray:
    """Positions of ``findings`` best first: unexpected first, those no expectation
    touches before those one covers in part; autodiff's before those only finite
    differences show (the method a user checks with, not the one they train with); then
    the worst, the widest. Ties keep their order."""
    keys = pd.DataFrame(
        {
            "unexpected": findings["expected"] == "unexpected",
            "untouched": (
                findings["held"].fillna(0).to_numpy() == 0 if "held" in findings else True
            ),
            "autodiff": findings["methods"] != "finite_difference",
            "severity": findings["severity"],
            "hits": findings["hits"],
        }
    ).reset_index(drop=True)
    return keys.sort_values(list(keys.columns), ascending=False, kind="stable").index.to_numpy()


def numbered(findings: pd.DataFrame) -> pd.DataFrame:
    """Findings of one case (:func:`harness.judge.findings.found`, its parts concatenated)
    in rank order (:func:`rank`), each with its ``id`` (``f1``, ``f2``, ...) before its
    ``probe`` and its ``group`` after its ``snippet``."""
    seen = findings.pop("seen") if "seen" in findings else None
    if findings.empty:
        return findings.drop(columns=["probe", "snippet"], errors="ignore")
    if seen is not None:  # in the order one table's groups would have found them
        findings = findings.iloc[sorted(range(len(seen)), key=seen.tolist().__getitem__)]
        findings = findings.reset_index(drop=True)
    out = findings.iloc[rank(findings)].reset_index(drop=True)
    out.insert(out.columns.get_loc("probe"), "id", [f"f{i + 1}" for i in range(len(out))])
    # Implementations that share a statement exactly (the same derivative, dtype,
    # outcome, interval, methods and modes: often the same expression behind two custom
    # gradients) form one group, reported as one line.
    same = ["backend", "derivative", "dtype", "outcome", "variants", "expected"]
    first = out.groupby(same, sort=False)["id"].transform("first")
    out.insert(out.columns.get_loc("snippet") + 1, "group", first)
    return out


def statements(findings: pd.DataFrame, texts: int | None = None) -> pd.DataFrame:
    """One row per statement (findings grouped by case and ``group``), ranked across
    cases, with the implementations joined and the text rewritten to name them all; the
    same statement in several back ends (the same interval, outcomes, points and methods;
    the modes each framework has aside) is one statement naming the frameworks
    (``backends``: their names, joined). With ``texts``, only the first ``texts``
    statements are written out (the others' ``text`` is empty)."""
    if findings.empty:
        return findings.assign(implementations=pd.Series(dtype=str), backends=pd.Series(dtype=str))
    # The groups in the order they first appear (as ``groupby(sort=False)``, without a
    # frame per group): each one's first row, its implementations and its size.
    keys = findings[["case", "group"]]
    whole = keys.notna().all(axis=1).to_numpy()
    groups: dict[tuple, list[int]] = {}
    for pos, (key, ok) in enumerate(zip(map(tuple, keys.to_numpy().tolist()), whole)):
        if ok:
            groups.setdefault(key, []).append(pos)
    impl = findings["implementation"].to_numpy()
    firsts = findings.iloc[[members[0] for members in groups.values()]]
    rows = text_as_objects(firsts).to_dict("records")
    for first, members in zip(rows, groups.values()):
        first["implementations"] = ", ".join(dict.fromkeys(impl[members]))
        first["members"] = len(members)
    merged: dict[tuple, list[dict]] = {}
    for r in rows:
        merged.setdefault(_across_backends(r), []).append(r)
    out = []
    for same in merged.values():
        first = dict(same[0])
        backends = [b for b in SPECS if any(r.get("backend") == b for r in same)]
        backends += [r["backend"] for r in same if r.get("backend") not in SPECS]
        first["backends"] = ", ".join(backends or [first.get("backend") or DEFAULT_BACKEND])
        first["members"] = sum(r["members"] for r in same)
        if len(same) > 1:
            first["modes"] = ", ".join(_union(r["modes"].split(", ") for r in same))
            variants = [json.loads(r["variants"] or "[]") for r in same]
            for k, v in enumerate(variants[0]):
                v["modes"] = _union(vs[k]["modes"] for vs in variants)
            first["variants"] = json.dumps(variants[0])
        out.append(first)
    # One ranking across cases, as each case ranks its own.
    order = rank(pd.DataFrame(out))
    wanted = len(out) if texts is None else texts
    for k, i in enumerate(order):
        r = out[i]
        r["text"] = (
            finding_text({**r, "implementation": r["implementations"]}) if k < wanted else ""
        )
    return pd.DataFrame(out).iloc[order].reset_index(drop=True)


_MODES = ("eager", "function", "xla", "jit", "compile")


def _union(lists) -> list[str]:
    seen = {m for ms in lists for m in ms if m}
    return [m for m in _MODES if m in seen] + sorted(seen - set(_MODES))


def _across_backends(r: dict) -> tuple:
    """What a statement says, whatever the back end: its modes (each framework has its
    own) and the count of merged ways aside."""
    variants = [
        {k: v for k, v in x.items() if k not in ("modes", "ways")}
        for x in json.loads(r.get("variants") or "[]")
    ]
    keys = ("case", "implementations", "derivative", "dtype", "outcome", "counts", "input")
    keys += ("lo", "hi", "ranges", "points", "hits", "methods", "expected")
    return (
        *(str(r.get(k)) for k in keys),
        bool(r.get("held")),  # rows, so per mode: whether an expectation covers part
        json.dumps(variants, sort_keys=True, default=str),
    )
