"""Whether a hand-written rule is the derivative, checked exactly (Arb balls).

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


def _with_dy(node: ex.Node, value: float) -> ex.Node:
    return ex.inline(
        ex.Call("__rule__", (ex.Num(repr(value), value),)), {"__rule__": (("dy",), node)}
    )


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
        rule = ex.inline(rule, functions)
        ones = _value(_with_dy(rule, 1.0), params, args)
        twos = _value(_with_dy(rule, 2.0), params, args)
        right_one = ones is not None and _close(ones, truth)
        if right_one and twos is not None and not _close(twos, 2 * truth):
            # Right at dy = 1 only: the rule forgets the upstream gradient.
            out.append(_verdict(label, p, False, twos, 2 * truth, args, 2))
        else:
            out.append(_verdict(label, p, right_one and twos is not None, ones, truth, args))
    return out


def _verdict(label, p, right, got, truth, args, dy: int = 1) -> dict:
    return {
        "rule": label,
        "input": p,
        "dy": dy,
        "right": bool(right),
        "got": None if got is None else mpmath.nstr(got, 17),
        "truth": mpmath.nstr(truth, 17),
        "at": {k: float(v) for k, v in args.items()},
    }


def check_rules(case: Case, impl: Implementation, point: Mapping[str, float]) -> list[dict]:
    """Every hand-written rule on ``impl``'s path checked exactly at ``point`` (the
    case's inputs): ``[{rule, input, dy, right, got, truth, at}]``, ``got`` and ``truth``
    as decimal strings at the upstream gradient ``dy`` (1, or 2 where the rule is right at
    1 only)."""
    if impl.expression is None:
        return []
    names = list(case.input_names)
    functions = {f.name: (f.params, f.expression) for f in case.functions}
    out = []
    if impl.gradient:
        out += _check(impl.expression, names, impl.gradient, point, impl.name, functions)
    ruled = {f.name: f for f in case.functions if f.gradient}
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
            out += _check(f.expression, list(f.params), f.gradient, args, f.name, functions)
    return out
