"""A case implementation's candidate repairs: its expression or one of its rules rewritten.

Each equivalent form of the implementation's expression
(:func:`harness.repair.saturate.saturate`) is a candidate, its rules kept; where it has
hand-written rules (``gradient:``, ``tangent:``), each form of one rule, the others
kept; and custom rules from the function's own derivative
(:mod:`harness.repair.derivative`), first-order and nested. :func:`combined` joins the
best expression with the best rules, for a second round where no part alone is right
everywhere. Each
candidate is an implementation of the case file's own shape (:meth:`Candidate.mapping`),
so that a copy of the case with the candidates added (:func:`with_candidates`) runs in
the study like any case, where they are judged. A candidate is not a repair: nothing here
judges it. A registered implementation (Python code) and a nested rule are not rewritten;
:func:`candidates` says so in its ``skipped``.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.cases import expressions as ex
from harness.cases.model import Case, Implementation, NestedRule
from harness.repair.derivative import NotDifferentiable, differentiate
from harness.repair.saturate import Saturation, saturate

__all__ = ["Candidate", "Candidates", "candidates", "combined", "described", "with_candidates"]


@dataclass(frozen=True)
class Candidate:
    """``part`` (``expression``, ``gradient:b``, ``tangent:x``) of the implementation
    replaced by ``form``."""

    implementation: str
    number: int
    part: str
    form: str
    mapping: dict

    @property
    def name(self) -> str:
        return f"{self.implementation}_candidate_{self.number}"


@dataclass(frozen=True)
class Candidates:
    """The candidates, each searched part's :class:`Saturation` and what was not
    searched, with why."""

    found: tuple[Candidate, ...]
    searches: dict[str, Saturation]
    skipped: tuple[str, ...]


def _rule(rule) -> str | dict:
    """A rule as a case file writes it (a nested one as its mapping)."""
    if isinstance(rule, NestedRule):
        out = {"expression": ex.unparse(rule.expression)}
        out["gradient"] = {p: _rule(r) for p, r in rule.gradient.items()}
        if rule.pattern != "nested_function":
            out["pattern"] = rule.pattern
        return out
    return ex.unparse(rule)


def _mapping(impl: Implementation) -> dict:
    """The implementation as a case file writes it."""
    out: dict = {"expression": ex.unparse(impl.expression)}
    for key, rules in (("gradient", impl.gradient), ("tangent", impl.tangent)):
        if rules:
            out[key] = {name: _rule(rule) for name, rule in rules.items()}
    return out


def candidates(
    case: Case, implementation: str, per_part: int = 6, symbolic: bool = True, **limits
) -> Candidates:
    """Up to ``per_part`` candidates per rewritten part of ``case``'s ``implementation``
    (``limits``: :func:`saturate`'s), the original form left out; with ``symbolic``,
    custom rules from the function's own derivative besides."""
    impl = case.implementation(implementation)
    if impl.registered or impl.expression is None:
        return Candidates((), {}, (f"{implementation}: registered code, not an expression",))
    # The expression (its values, and the derivatives no rule gives), then each rule.
    parts: dict[str, ex.Node] = {"expression": impl.expression}
    skipped = []
    for key, rules in (("gradient", impl.gradient), ("tangent", impl.tangent)):
        for name, rule in (rules or {}).items():
            if isinstance(rule, ex.Node):
                parts[f"{key}:{name}"] = rule
            else:
                skipped.append(f"{implementation}: {key} of {name} is a nested rule")
    base, found, searches = _mapping(impl), [], {}
    for part, node in parts.items():
        search = searches[part] = saturate(node, alternatives=per_part + 1, **limits)
        forms = [f for f in search.forms if f != node and defined(f)][:per_part]
        for form in forms:
            mapping = {k: dict(v) if isinstance(v, dict) else v for k, v in base.items()}
            text = ex.unparse(form)
            if part == "expression":
                mapping["expression"] = text
            else:
                key, name = part.split(":")
                mapping[key][name] = text
            mapping["description"] = (
                f"A candidate repair of {implementation} ({part} rewritten by equality "
                "saturation); not yet judged."
            )
            found.append(Candidate(implementation, len(found) + 1, part, text, mapping))
    if symbolic:
        _symbolic_rules(case, impl, base, per_part, found, searches, skipped, limits)
    return Candidates(tuple(found), searches, tuple(skipped))


def _constant(node: ex.Node) -> float | None:
    if isinstance(node, ex.Num):
        return node.value
    if isinstance(node, ex.Unary) and isinstance(node.arg, ex.Num):
        return -node.arg.value
    return None


def defined(node: ex.Node) -> bool:
    """False where the form takes a logarithm or a root of a constant outside its
    domain (``exp(log(-1))``: an identity applied without its domain, NaN everywhere)."""
    for n in ex.walk(node):
        if isinstance(n, ex.Call) and n.func in ("log", "sqrt", "rsqrt") and n.args:
            value = _constant(n.args[0])
            if value is not None and (value < 0 or (value == 0 and n.func != "sqrt")):
                return False
    return True


def described(mapping: dict, implementation: str, part: str) -> dict:
    """``mapping`` with a description saying what candidate it is."""
    mapping["description"] = f"A candidate repair of {implementation} ({part}); not yet judged."
    return mapping


def _symbolic_rules(case, impl, base, per_part, found, searches, skipped, limits) -> None:
    """Custom rules from the function's own derivative (:mod:`harness.repair.derivative`),
    each input's rewritten by the saturation: first-order rules (``gradient:`` and
    ``tangent:`` alike, so that reverse and forward mode both go through them), and,
    where the case asks orders 2 and more, nested rules whose own derivative is again
    the symbolic one, rewritten."""
    names = list(case.input_names)
    functions = {f.name: (f.params, f.expression) for f in case.functions}
    expression = ex.inline(impl.expression, functions)
    try:
        firsts = {p: differentiate(expression, p) for p in names}
    except NotDifferentiable as exc:
        skipped.append(f"{impl.name}: no symbolic rule ({exc})")
        return
    forms = {}
    for p, node in firsts.items():
        search = searches[f"rule:{p}"] = saturate(node, alternatives=2 * per_part, **limits)
        forms[p] = tuple(f for f in search.forms if defined(f))[:per_part]
    count = min(len(f) for f in forms.values())
    for k in range(min(count, per_part)):
        texts = {p: ex.unparse(forms[p][k]) for p in names}
        mapping = {
            "expression": base["expression"],
            "gradient": {p: f"dy * {t}" for p, t in texts.items()},
            "tangent": {p: f"dx * {t}" for p, t in texts.items()},
        }
        form = "; ".join(f"d/d{p}: {t}" for p, t in texts.items())
        part = "rule (symbolic, first order)"
        found.append(
            Candidate(impl.name, len(found) + 1, part, form, described(mapping, impl.name, part))
        )
    if max((len(p) for p in case.partials), default=0) < 2:
        return
    try:
        seconds = {
            (k, p, q): differentiate(forms[p][k], q)
            for k in range(min(count, 2))
            for p in names
            for q in names
        }
    except NotDifferentiable as exc:
        skipped.append(f"{impl.name}: no nested rule ({exc})")
        return
    # Two forms of each first derivative, each with its own second derivative as taken
    # and its two smallest other rewrites: six nested rules at most.
    for k in range(min(count, 2)):
        for j in range(3):
            gradient, form = {}, []
            for p in names:
                inner = {}
                for q in names:
                    node = seconds[(k, p, q)]
                    # The derivative as taken, then its smallest other rewrite.
                    options = [
                        node,
                        *(f for f in saturate(node, alternatives=3, **limits).forms if f != node),
                    ]
                    second = options[min(j, len(options) - 1)]
                    inner[q] = f"dy * {ex.unparse(second)}"
                    form.append(f"d2/d{p}d{q}: {ex.unparse(second)}")
                gradient[p] = {"expression": ex.unparse(forms[p][k]), "gradient": inner}
            mapping = {"expression": base["expression"], "gradient": gradient}
            part = "rule (symbolic, nested)"
            text = "; ".join([*(f"d/d{p}: {gradient[p]['expression']}" for p in names), *form])
            if any(c.form == text for c in found):
                continue
            found.append(
                Candidate(
                    impl.name, len(found) + 1, part, text, described(mapping, impl.name, part)
                )
            )


def with_candidates(data: dict, found: Candidates) -> dict:
    """A copy of a case file's ``data`` with the candidates added as implementations."""
    out = dict(data)
    out["implementations"] = {
        **data["implementations"],
        **{c.name: c.mapping for c in found.found},
    }
    return out


def combined(found: Candidates, ranked, rules: int = 2) -> tuple[Candidate, ...]:
    """The best rewrite of the expression that fixes something, with each of the best
    ``rules`` rule candidates that do (``ranked``: the judged candidates, best first, each
    with ``name``, ``part`` and ``fixed``): the expression's values and the rule's
    derivatives are each their part's best, so a repair may need both."""
    by_name = {c.name: c for c in found.found}
    useful = [by_name[j.name] for j in ranked if j.fixed > 0 and j.name in by_name]
    expressions = [c for c in useful if c.part == "expression"]
    ruled = [c for c in useful if c.part != "expression"][:rules]
    if not expressions or not ruled:
        return ()
    best = expressions[0]
    out = []
    for rule in ruled:
        mapping = {k: v for k, v in rule.mapping.items()}
        mapping["expression"] = best.mapping["expression"]
        part = f"expression and {rule.part}"
        form = f"{best.form}; {rule.form}"
        number = len(found.found) + len(out) + 1
        out.append(
            Candidate(
                best.implementation,
                number,
                part,
                form,
                described(mapping, best.implementation, part),
            )
        )
    return tuple(out)
