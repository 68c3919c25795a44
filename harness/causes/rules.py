"""Whether a hand-written rule is the derivative, checked exactly (Arb balls).

A forward rule (``tangent``) gives each input's share of the output's tangent in the
inputs and ``dx``; it is checked the same way against ``dx`` times the partial (an input
it leaves out contributes 0).

A custom gradient is a rule per input, in the inputs and the upstream gradient ``dy``;
the true vector-Jacobian product is ``dy`` times the function's partial. Each rule on an
implementation's path (its own, and those of the case functions its expression calls)
is evaluated exactly at a point, with ``dy`` = 1 and with ``dy`` = 2 (a rule that forgets
``dy`` is right at 1 only), against the partial of the function it belongs to; a nested
rule's first-order factor is checked the same way, and its own rules one level down. A
case function's arguments are taken exactly at the point (their expressions evaluated
in Arb). A rule that is not the derivative is a ``rule`` root cause whatever the
precision; one that is, but fails in floats, is unstable. No framework here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import mpmath

from harness.cases import expressions as ex
from harness.cases.model import Case, Implementation, NestedRule
from harness.cases.synthetic import expression_case

__all__ = ["check_rules"]

_TOLERANCE = mpmath.mpf(2) ** -40  # far below any rounding of the dtypes judged


def _value(node: ex.Node, names: Sequence[str], args: Mapping[str, float], partial=()):
    """The exact value (centre of a ball that decides every dtype) of ``node`` or of its
    ``partial`` at ``args``; ``None`` where Arb gives none."""
    from harness.reference.certify import certify_point

    case = expression_case("rule", {"r": node}, list(names), len(partial))
    ball = certify_point(case, {n: float(args[n]) for n in names}, [tuple(partial)])
    found = ball[tuple(partial)]
    return found.centre() if found.bounded else None


def _close(a, b) -> bool:
    with mpmath.workdps(40):
        scale = max(abs(a), abs(b))
        return scale == 0 or abs(a - b) <= _TOLERANCE * scale


def _with_seed(node: ex.Node, value: float, seed: str = "dy") -> ex.Node:
    """``node`` with the upstream gradient (``dy``) or the input's tangent (``dx``) set."""
    return ex.inline(
        ex.Call("__rule__", (ex.Num(repr(value), value),)), {"__rule__": ((seed,), node)}
    )


def _check_tangent(body, params, tangent, args, label: str, functions) -> list[dict]:
    """Each input's share of the tangent against ``dx`` times the partial (at ``dx`` = 1
    and 2); an input the rule leaves out contributes 0, right only where the partial is."""
    out = []
    body = ex.inline(body, functions)
    for p in params:
        truth = _value(body, params, args, (p,))
        if truth is None:
            continue
        if p not in tangent:
            right = truth == 0
            out.append({**_verdict(label, p, right, 0, truth, args, seed="dx"), "left_out": True})
            continue
        rule = ex.inline(tangent[p], functions)
        out.append(_seeded(rule, params, args, truth, label, p, "dx"))
    return out


def _seeded(rule, params, args, truth, label: str, p: str, seed: str) -> dict:
    """A rule in the ``seed`` (``dy`` or ``dx``) against the seed times the partial, at 1
    and at 2: right at 1 only, it forgets the seed (the verdict at 2 says so)."""
    ones = _value(_with_seed(rule, 1.0, seed), params, args)
    twos = _value(_with_seed(rule, 2.0, seed), params, args)
    right_one = ones is not None and _close(ones, truth)
    if right_one and twos is not None and not _close(twos, 2 * truth):
        return _verdict(label, p, False, twos, 2 * truth, args, 2, seed)
    return _verdict(label, p, right_one and twos is not None, ones, truth, args, seed=seed)


def _check(body, params, gradient, args, label: str, functions, depth: int = 0) -> list[dict]:
    out = []
    body = ex.inline(body, functions)
    for p, rule in gradient.items():
        truth = _value(body, params, args, (p,))
        if truth is None:
            continue
        if isinstance(rule, NestedRule):
            factor = _value(ex.inline(rule.expression, functions), params, args)
            right = factor is not None and _close(factor, truth)
            out.append(_verdict(label, p, right, factor, truth, args))
            if depth == 0 and rule.gradient:
                out += _check(
                    rule.expression, params, rule.gradient, args, f"{label}'", functions, 1
                )
            continue
        out.append(_seeded(ex.inline(rule, functions), params, args, truth, label, p, "dy"))
    return out


def _verdict(label, p, right, got, truth, args, times: int = 1, seed: str = "dy") -> dict:
    return {
        "rule": label,
        "kind": "tangent" if seed == "dx" else "gradient",
        "input": p,
        seed: times,
        "right": bool(right),
        "got": None if got is None else mpmath.nstr(got, 17),
        "truth": mpmath.nstr(truth, 17),
        "at": {k: float(v) for k, v in args.items()},
    }


def check_rules(case: Case, impl: Implementation, point: Mapping[str, float]) -> list[dict]:
    """Every hand-written rule on ``impl``'s path checked exactly at ``point`` (the
    case's inputs): ``[{rule, kind, input, dy | dx, right, got, truth, at}]``, ``kind``
    ``gradient`` (at the upstream gradient ``dy``) or ``tangent`` (at the input's tangent
    ``dx``), ``got`` and ``truth`` decimal strings at that seed (1, or 2 where the rule is
    right at 1 only)."""
    if impl.expression is None:
        return []
    names = list(case.input_names)
    functions = {f.name: (f.params, f.expression) for f in case.functions}
    out = []
    if impl.gradient:
        out += _check(impl.expression, names, impl.gradient, point, impl.name, functions)
    if impl.tangent:
        out += _check_tangent(impl.expression, names, impl.tangent, point, impl.name, functions)
    ruled = {f.name: f for f in case.functions if f.ruled}
    seen = set()
    for node in ex.walk(impl.expression):
        if not (isinstance(node, ex.Call) and node.func in ruled) or node in seen:
            continue
        seen.add(node)
        f = ruled[node.func]
        args = {}
        for param, arg in zip(f.params, node.args):
            value = _value(ex.inline(arg, functions), names, point)
            if value is None:
                break
            args[param] = float(value)
        else:
            params = list(f.params)
            if f.gradient:
                out += _check(f.expression, params, f.gradient, args, f.name, functions)
            if f.tangent:
                out += _check_tangent(f.expression, params, f.tangent, args, f.name, functions)
    return out
