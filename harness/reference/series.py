"""One-variable references by flint's power series: the fast path of the Arb oracle.

For the partials in one variable (all of softplus's and composition's; logistic's in
``t``, in ``r`` and in ``y0``), the expression is evaluated as an ``arb_series`` in that
variable, once per variable, compiled once per expression: one C call per operation,
where :func:`harness.reference.balls.evaluate` composes multivariate ball jets
coefficient by coefficient in Python. The rules, their branch choices and what is
undefined are the operator table's (:mod:`harness.operators.arb`); an exact switch point
falls back to the ball jets.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from flint import arb, arb_series

from harness.cases import expressions as ex
from harness.operators import OPERATORS, ArbRule
from harness.operators.arb import Generic, Unsupported, require_nonzero, series_value
from harness.reference.balls import COMPARE, evaluate
from harness.reference.jets import JetSpace

__all__ = ["evaluate_series"]


def evaluate_series(node: ex.Node, point: Mapping[str, arb], name: str, n: int) -> list:
    """``∂^k f / ∂name^k / k!`` for k = 0..n as balls, by one-variable power series in C
    (flint's ``arb_series``: one call per operation, where :func:`evaluate` composes
    multivariate jets coefficient by coefficient in Python). Falls back to
    :func:`evaluate` for what it does not cover (an exact switch point)."""
    key = (id(node), name, n)
    hit = _PROGRAMS.get(key)
    if hit is None:  # the node is kept with its program, so its id is never reused
        hit = _PROGRAMS[key] = (node, _compile(node, name, n))
    try:
        return list(hit[1](point).coeffs()) + [arb(0)] * (n + 1)
    except Generic:
        space = JetSpace((name,), {name: n}, n)
        jet = evaluate(node, point, space)
        return [jet.c[space.position[(k,)]] for k in range(n + 1)]


_POWER = OPERATORS["pow"].arb.line  # the ``**`` operator is the pow function

#: Compiled expressions: (id of the node, variable, order) -> (node, program).
_PROGRAMS: dict[tuple[int, str, int], tuple] = {}


def _compile(node: ex.Node, name: str, n: int) -> Callable[[Mapping[str, arb]], arb_series]:
    """The series of ``node`` in ``name`` to order ``n`` as nested Python closures, one per
    node, built once per expression (the tree is walked and dispatched once, not at every
    point). Constants are made at each call: their rounding depends on the precision."""
    prec = n + 1
    done: dict[ex.Node, Callable] = {}

    def go(m: ex.Node) -> Callable:
        hit = done.get(m)
        if hit is None:
            hit = done[m] = _make(m)
        return hit

    def _make(m: ex.Node) -> Callable:
        if isinstance(m, ex.Var):
            v = m.name
            if v == name:
                return lambda pt: arb_series([pt[v], 1], prec=prec)
            return lambda pt: arb_series([pt[v]], prec=prec)
        if isinstance(m, ex.Num):
            text = m.text
            return lambda pt: arb_series([arb(text)], prec=prec)
        if isinstance(m, ex.Const):
            return lambda pt: arb_series([arb.pi()], prec=prec)
        if isinstance(m, ex.Unary):
            f = go(m.arg)
            return lambda pt: -f(pt)
        if isinstance(m, ex.Binary):
            return _binary(m.op, go(m.left), go(m.right))
        if isinstance(m, ex.Where):
            return _where(m, go, COMPARE[m.cond.op])
        if isinstance(m, ex.Call):
            op = OPERATORS[m.func]
            if op.arb is None:
                return _unsupported(f"no Arb kernel for {m.func}()")
            if not op.pointwise:
                return _line(op.arb.line, [go(a) for a in m.args])
            return _kernel(op.arb, go(m.args[0]), prec)
        return _unsupported(f"cannot evaluate {type(m).__name__}")

    return go(node)


def _unsupported(message: str) -> Callable:
    """Raised where it is met, at a point (a branch of ``where`` not taken never is)."""

    def unsupported(pt):
        raise Unsupported(message)

    return unsupported


def _binary(op: str, a: Callable, b: Callable) -> Callable:
    if op == "add":
        return lambda pt: a(pt) + b(pt)
    if op == "sub":
        return lambda pt: a(pt) - b(pt)
    if op == "mul":
        return lambda pt: a(pt) * b(pt)
    if op == "div":

        def div(pt):
            x, y = a(pt), b(pt)
            require_nonzero(series_value(y), "a division")
            return x / y

        return div
    return lambda pt: _POWER(a(pt), b(pt))


def _where(m: ex.Where, go: Callable, compare: Callable) -> Callable:
    left, right = go(m.cond.left), go(m.cond.right)
    then, otherwise = go(m.then), go(m.otherwise)

    def where(pt):
        d = series_value(left(pt)) - series_value(right(pt))
        yes, no = compare(d)
        if d.is_zero() or not (yes or no):
            raise Generic
        return then(pt) if yes else otherwise(pt)

    return where


def _line(rule: Callable, args: list) -> Callable:
    return lambda pt: rule(*(a(pt) for a in args))


def _kernel(rule: ArbRule, arg: Callable, prec: int) -> Callable:
    def kernel(pt):
        u = arg(pt)
        x0 = series_value(u)
        if rule.exact is not None and rule.exact(x0, prec - 1) is not None:
            raise Generic  # an exact point: the ball jets' exact coefficients
        out = rule.series(u, x0)
        if rule.value is not None:
            c = list(out.coeffs()) or [arb(0)]
            c[0] = rule.value(x0)
            out = arb_series(c, prec=prec)
        return out

    return kernel
