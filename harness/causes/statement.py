"""A root cause in words: one sentence a maintainer can act on, with its scope (which
frameworks, methods and modes, "only under tf.function" where that is all), its input
regions as exact floats of the dtype, and its worst point."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from harness.causes.classify import FINITE_DIFFERENCES, outcome_class
from harness.causes.clauses import (
    OUTCOME_WORDS,
    VALUE_RIGHT,
    kink_clause,
    nonfinite_words,
    others_at_those_points,
    percent,
    shares_told,
    subnormal_zeros,
    value_clause,
)
from harness.causes.flush_words import chained, flush_where
from harness.causes.regions import CASES_LISTED, listed, regions_text
from harness.judge.findings_text import format_value
from harness.numerics.floats import FORMATS, to_format

__all__ = [
    "METHOD_WORDS",
    "MODE_WORDS",
    "root_text",
]

#: A finite value off the truth (class ``wrong``), by how far its worst member is
#: (:func:`harness.causes.classify.severity`): the statement says no more than that. Each
#: tier's word, and what it means told on its own (per framework, where they differ).
WRONG_TIERS = {
    4: ("wrong", "the wrong sign at ordinary inputs"),
    3: ("wrong", "at most 4 correct bits, a 0 or the wrong sign"),
    2: ("inaccurate", "bits lost beyond the tolerance, more than 4 bits right"),
    1: (
        "off by rounding noise",
        "a truth at most 4 eps times the function's own scale, an error at most 64 eps times it",
    ),
}
WRONG_WORDS = {tier: f"{word} ({means})" for tier, (word, means) in WRONG_TIERS.items()}


def _wrong(group: pd.DataFrame, titles, frameworks: list[str]) -> str:
    """The words for the class ``wrong``: its worst tier's; where the frameworks' worst
    members lie in different tiers, each framework's own, so that the statement holds
    for every framework it names ("wrong (TensorFlow and JAX: the wrong sign at ordinary
    inputs; PyTorch: at most 4 correct bits, ...)")."""
    tiers = group["impact"].astype(int).groupby(group["backend"]).max()
    top = int(tiers.max())
    if tiers.nunique() < 2:
        return WRONG_WORDS.get(top, OUTCOME_WORDS["wrong"])
    parts = []
    for tier in sorted(set(tiers), reverse=True):
        named = listed([titles(b) for b in frameworks if tiers.get(b) == tier])
        word, means = WRONG_TIERS[tier]
        parts.append(f"{named}: {means if word == WRONG_TIERS[top][0] else f'{word}, {means}'}")
    return f"{WRONG_TIERS[top][0]} ({'; '.join(parts)})"


def _what(row: dict, group: pd.DataFrame, titles) -> str:
    """What the values are, in words: per outcome class its members show (the worst of
    the class's members telling how far a finite value is off, per framework where
    they differ), most striking first."""
    classes = group["outcome"].map(outcome_class)
    # A finding of mixed outcomes ("wrong or nan", labelled by its worst class) shows
    # each of them: its counts say which its points have.
    shown = [_classes(o, n) for o, n in zip(group["outcome"], group.get("counts", classes))]
    words = []
    for c in ("nonfinite", "wrong", "missing", "error"):
        has = np.array([c in k for k in shown], bool)
        if not has.any():
            continue
        if c == "wrong":
            # How far a finite value is off, from the members whose worst is one.
            finite = has & np.isfinite(pd.to_numeric(group["worst_got"], errors="coerce"))
            words.append(
                (
                    _wrong(group[finite], titles, row["frameworks"].split(", "))
                    if finite.any()
                    else OUTCOME_WORDS["wrong"]
                )
                + subnormal_zeros(group[has])
            )
        elif c == "nonfinite":
            words.append(
                nonfinite_words(group[classes == c] if (classes == c).any() else group[has])
            )
        else:
            words.append(OUTCOME_WORDS[c])
    if not words:
        return OUTCOME_WORDS.get(row["outcome"], row["outcome"])
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _classes(outcome: str, counts) -> set[str]:
    """The outcome classes of a member: its own and those its counts (JSON) name."""
    try:
        named = json.loads(counts) if isinstance(counts, str) else {}
    except ValueError:
        named = {}
    return {outcome_class(outcome)} | {outcome_class(o) for o in named}


METHOD_WORDS = {
    "reverse": "reverse mode",
    "forward": "forward mode",
    "forward_over_reverse": "forward-over-reverse",
    "taylor": "Taylor mode (jet)",
    "finite_difference": "finite differences",
}
MODE_WORDS = {
    "eager": "eager",
    "function": "tf.function",
    "xla": "XLA (jit_compile=True)",
    "jit": "jax.jit",
    "compile": "torch.compile",
}


def _orders(text: str) -> str:
    orders = [int(o) for o in text.split(", ") if o]
    if len(orders) == 1:
        return f"order {orders[0]}"
    if orders == list(range(orders[0], orders[-1] + 1)):
        return f"orders {orders[0]}-{orders[-1]}"
    return "orders " + ", ".join(map(str, orders))


def _scope(row: dict, group: pd.DataFrame, titles) -> str:
    """``only under tf.function``, ``only in forward mode``: where the scope is a part;
    ``TensorFlow only under XLA (jit_compile=True)`` where one framework's is."""
    bits = []
    modes = row["modes"].split(", ")
    if "eager" not in modes:
        bits.append("only under " + listed([MODE_WORDS.get(m, m) for m in modes]))
    elif row["frameworks"].count(",") and "modes" in group:
        for backend in row["frameworks"].split(", "):
            own = group.loc[group["backend"] == backend, "modes"]
            mine = [m for m in modes if any(m in t.split(", ") for t in own)]
            if mine and "eager" not in mine:
                words = listed([MODE_WORDS.get(m, m) for m in mine])
                bits.append(f"{titles(backend)} only under {words}")
    methods = row["methods"].split(", ")
    # A rule localised (a culprit): finite differences go through no derivative rule;
    # where they fail too, it is through the value, told apart from the rule's methods.
    through = json.loads(row.get("culprit") or "{}") and len(methods) > 1
    fd = through and FINITE_DIFFERENCES in methods
    rules = [m for m in methods if m != FINITE_DIFFERENCES] if fd else methods
    if "reverse" not in methods:
        bits.append("only in " + listed([METHOD_WORDS.get(m, m) for m in rules]))
        if fd:
            bits[-1] += "; finite differences, which use no derivative rule, fail there too"
    return "; ".join(bits)


def _cases(names: str) -> str:
    """``a, b and c``; past :data:`CASES_LISTED`, ``60 cases (a, b, c and 57 more)``."""
    cases = names.split(", ")
    if len(cases) <= CASES_LISTED:
        return listed(cases)
    return f"{len(cases)} cases ({', '.join(cases[:3])} and {len(cases) - 3} more)"


def _worst(row: dict, titles) -> str:
    w = json.loads(row["worst"])
    dtype = w.get("dtype") or row["dtypes"].split(", ")[0]
    at = ", ".join(f"{k} = {format_value(v, dtype)}" for k, v in w["inputs"].items())
    if w.get("outcome", row["outcome"]) in ("error", "missing"):  # it raised, or gave None
        return (
            f"for example {w['case']}.{w['implementation']} {w['derivative']} at {at} "
            f"({titles(w['framework'])}, {METHOD_WORDS.get(w['method'], w['method'])}, "
            f"{MODE_WORDS.get(w['mode'], w['mode'])}, {dtype})"
        )
    return (
        f"worst: {w['case']}.{w['implementation']} {w['derivative']} at {at}: got "
        f"{format_value(w['got'], dtype)}, truth {_short(w['truth'], dtype)} ({titles(w['framework'])}, "
        f"{METHOD_WORDS.get(w['method'], w['method'])}, {MODE_WORDS.get(w['mode'], w['mode'])})"
    )


def _short(decimal: str, dtype: str = "float32") -> str:
    """The truth to the digits that tell the dtype's neighbours apart (9, or 17 for
    float64), whatever its exponent (a true 5.08e-435 is not a float64's 0)."""
    import mpmath

    try:
        with mpmath.workdps(40):
            return mpmath.nstr(mpmath.mpf(decimal), 17 if dtype == "float64" else 9)
    except (ValueError, TypeError):
        return str(decimal)


def _alone(culprit: dict, row: dict, titles) -> str:
    """Each framework's culprit judged on its own: its method, its partial at the input
    it receives, what it gives and the truth."""
    first = row["dtypes"].split(", ")[0]
    parts = []
    for b, c in culprit.items():
        dtype = c.get("dtype", first)
        at = ", ".join(f"{k} = {format_value(v, dtype)}" for k, v in c["inputs"].items())
        own = f" ({dtype})" if "," in row["dtypes"] else ""
        parts.append(
            f"{titles(b)} {c['method'].replace('_', '-')}: {c['primitive']} "
            f"d/d{c['partial'] or 'f'} at {at}: got {format_value(c['got'], dtype)}, truth "
            f"{_short(c['truth'], dtype)}{own}"
        )
    return "; ".join(parts)


def _exact(value: float, dtype: str) -> str:
    """``value`` to the digits that read back to it: in ``dtype`` where it is one of its
    floats, else as the float64 it is (a rule is checked exactly, at the argument its call
    receives in exact arithmetic, 1e+24 and not float32's 1.0000000138e+24)."""
    shown = format_value(value, dtype)
    return shown if float(to_format(np.array([float(shown)]), dtype)[0]) == value else repr(value)


def root_text(row: dict, group: pd.DataFrame, titles) -> str:
    """The root cause as one statement (see the module's docstring)."""
    frameworks = ", ".join(titles(b) for b in row["frameworks"].split(", "))
    first = row["dtypes"].split(", ")[0]
    dtype = " and ".join(row["dtypes"].rsplit(", ", 1))
    what = _what(row, group, titles)
    scope = _scope(row, group, titles)
    scope = f" ({scope})" if scope else ""
    example = json.loads(row["worst"]).get("case")
    where = regions_text(json.loads(row["regions"]), first, example)
    orders = _orders(row["orders"])
    kind, subject = row["kind"], row["primitive"]
    culprit = json.loads(row["culprit"] or "{}")
    if kind == "kernel" and row["outcome"] == "error":
        verb = "raise" if "," in row["implementations"] else "raises"
        head = (
            f"{frameworks}: {row['implementations']} {verb} computing the value itself, and so "
            f"at {orders} in {dtype}{scope}: {_raised(row, group, subject)}"
        )
    elif kind == "kernel" and not culprit:
        # Localised to a primitive whose own value is wrong: the value kernel, not a rule.
        value = value_clause(group)
        value = "; the function's own value is right there" if value == VALUE_RIGHT else value
        # Only the value (order 0) fails: no derivative to speak of, nor a clause on it.
        through = (
            f"the function's value is {what}"
            if orders == "order 0"
            else f"the derivatives through it are {what} at {orders}"
        )
        head = (
            f"{frameworks}: the value of {subject.split(':')[0]} is wrong at the inputs it "
            f"receives (judged alone), and so {through} in {dtype}{scope}"
            f"{'' if orders == 'order 0' else value}"
        )
    elif kind == "kernel":
        value = value_clause(group)
        rule = "fails where its value is right" if value == VALUE_RIGHT else "fails"
        head = (
            f"{frameworks}: the derivative rule of {subject} {rule}, and the derivatives "
            f"through it are {what} in {dtype}{scope}"
            f"{'' if value == VALUE_RIGHT else value}. Judged alone at the input it "
            "receives: " + _alone(culprit, row, titles)
        )
    elif kind == "kink":
        head = (
            f"{frameworks}: {subject.split(':')[0]} is {what} at {orders} in {dtype}{scope}: "
            + (kink_clause(group, titles))
        )
    elif kind == "platform":
        own = [d for d in FORMATS if d in set(group["dtype"])]
        right, _ = others_at_those_points(group)
        told = shares_told(right, titles)
        head = (
            f"{frameworks}: the platform's flush of subnormal numbers: the derivative of "
            f"{subject.split(':')[0]} at the input it receives {flush_where(group, own)} "
            f"and {chained(culprit)} the derivatives {what} at {orders} in "
            f"{dtype}{scope}. Judged alone at the input it receives: "
            + _alone(culprit, row, titles)
            + (f"; {told}" if told else "")
        )
    elif kind == "mode" and culprit:
        name, mode = subject.split("@", 1)[0], subject.rsplit(":", 1)[-1]
        head = (
            f"{frameworks}: under {MODE_WORDS.get(mode, mode)}, the derivative of {name} is "
            f"{what} at {orders} in {dtype}{scope}, where eager mode is right (a compiler's "
            f"rewrite of {name}'s rule, whichever implementation contains it). Judged alone "
            "under that mode at the input it receives: " + _alone(culprit, row, titles)
        )
    elif kind == "mode":
        name, behind = subject.rsplit("@", 1)
        by = "" if behind in row["frameworks"].split(", ") else f" compiled by {behind}"
        head = (
            f"{frameworks}: {name}{by} is {what} at {orders} in {dtype}{scope}; the other "
            "modes get these points right (a compiler's or graph rewrite's effect)"
        )
    elif kind == "method":
        if row["outcome"] == "error":
            verb = "raise" if "," in row["implementations"] else "raises"
            head = (
                f"{frameworks}: {row['implementations']} {verb} at {orders} in {dtype}{scope}: "
                f"{_raised(row, group, subject)}"
            )
        else:
            head = (
                f"{frameworks}: {subject} is {what} at {orders} in {dtype}{scope}; another "
                "method gets these points right"
            )
    elif kind == "framework":
        right, failing = others_at_those_points(group)
        told = shares_told(right, titles)
        also = listed([f"{titles(b)} (right at {percent(v)})" for b, v in failing.items()] or [""])
        if not right:
            head = (
                f"{frameworks}: {subject} is {what} at {orders} in {dtype}{scope}; no other "
                f"framework gets most of these points right in every finding: {also}"
            )
        elif failing:
            head = (
                f"{frameworks}: {subject} is {what} at {orders} in {dtype}{scope}; {told}, "
                f"while {also} fail{'s' if len(failing) == 1 else ''} there too"
            )
        else:
            head = (
                f"only in {frameworks}: {subject} is {what} at {orders} in {dtype}{scope}; {told}"
            )
    elif kind == "rule":
        wrong = [
            (r, d)
            for t, d in zip(group["rules"], group["dtype"])
            for r in json.loads(t or "[]")
            if not r["right"]
        ]
        if wrong:
            r, own = wrong[0]  # checked at its finding's worst point, in that one's dtype
            at = ", ".join(f"{k} = {_exact(v, own)}" for k, v in r["at"].items())
            seed = "dx" if r.get("kind") == "tangent" else "dy"
            which = "forward rule" if seed == "dx" else "rule"
            gives = (
                f"leaves d/d{r['input']} out (0)"
                if r.get("left_out")
                else f"gives {_short(r['got'] or 'nan')}"
            )
            why = (
                f"its {which} {r['rule']} for d/d{r['input']} is not the derivative: at {at} "
                f"with {seed} = {r.get(seed, 1)} it {gives} where {seed} "
                f"times the derivative is {_short(r['truth'])}"
            )
        else:
            why = (
                "its rule is the derivative in exact arithmetic, but its formula loses it in floats"
            )
        head = f"{frameworks}: {subject} is {what} at {orders} in {dtype}{scope}: {why}"
    elif subject == FINITE_DIFFERENCES:
        head = (
            f"{frameworks}: the finite differences' stencil (a central difference of the "
            f"case's own values) is {what} at {orders} in {dtype} in {_cases(row['cases'])}; "
            "autodiff gets these points right or fails apart"
        )
    else:
        wall = row["intermediate"]
        why = (
            f"{wall} lies beyond {dtype} there"
            if wall
            else "the terms of its value or derivatives cancel or round away"
        )
        fixes = json.loads(row["fixes"])
        fix = (
            f"; {', '.join(fixes)} stay{'s' if len(fixes) == 1 else ''} right there"
            if fixes
            else ""
        )
        judged = pd.to_numeric(group.get("localised", pd.Series(dtype=float)), errors="coerce")
        some = int((judged.fillna(0) > 0).sum())
        if len(judged) and some == len(judged):
            because = f"every primitive is right at its own inputs, but {why}"
        elif some:
            because = (
                f"every primitive judged alone is right at its own inputs (in {some} of its "
                f"{len(judged)} findings; the others' values were not localised), but {why}"
            )
        elif wall:
            because = f"{wall} lies beyond {dtype} there (its primitives were not all judged alone)"
        else:
            # A registered implementation (a solver) has no primitives to judge alone, and
            # a finding not localised was not: nothing is claimed of what is inside.
            because = (
                "no primitive was judged alone at these points, so no cause inside it is named"
            )
        head = f"{frameworks}: {subject} is {what} at {orders} in {dtype}{scope}: {because}{fix}"
    return f"{head}{_also(row)}. {row['members']} findings ({where}); {_worst(row, titles)}"


def _also(row: dict) -> str:
    """`` (so is the value of c.doc_custom_gradient: the same expression)`` where a value's
    root cause holds other implementations of the same expression (evidence ``same_value``)."""
    if row["kind"] not in ("formula", "method", "framework", "mode") or "." not in row["primitive"]:
        return ""
    mine = row["primitive"].split("@")[0]
    others = [i for i in row["implementations"].split(", ") if i and i != mine]
    if not others:
        return ""
    told = "is the value" if len(others) == 1 else "are the values"
    return f" (so {told} of {listed(others)}: the same expression)"


def _raised(row, group, subject: str) -> str:
    """The exception a crash's members share (their key, :func:`decide`), in the words of
    the member the statement shows (its dtypes and shapes, which the key leaves out)."""
    example = json.loads(row["worst"]).get("finding", "")
    shown = group[group["case"] + ":" + group["id"] == example]
    texts = [t for t in [*shown["error_text"], *group["error_text"]] if isinstance(t, str) and t]
    return texts[0].splitlines()[0][:200].rstrip(".") if texts else subject
