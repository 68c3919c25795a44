"""One-variable references by flint's power series: the fast path of the Arb oracle.

For the partials in one variable (all of softplus's and composition's; logistic's in
``t``, in ``r`` and in ``y0``), the expression is evaluated as an ``arb_series`` in that
variable, once per variable, compiled once per expression: one C call per operation, where :func:`harness.reference.balls.evaluate` composes multivariate ball jets
coefficient by coefficient in Python. The kernels, their branch choices and what is
undefined are :mod:`harness.reference.balls`'s; an exact switch point falls back to it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from flint import arb, arb_series

from harness.cases import expressions as ex
from harness.reference.balls import (
    COMPARE,
    KERNELS,
    Unsupported,
    evaluate,
    require_nonzero,
    require_positive,
)
from harness.reference.jets import JetSpace

__all__ = ["evaluate_series"]


class _Generic(Exception):
    """A node the one-variable series path leaves to the general ball jets."""


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
    except _Generic:
        space = JetSpace((name,), {name: n}, n)
        jet = evaluate(node, point, space)
        return [jet.c[space.position[(k,)]] for k in range(n + 1)]


#: Compiled expressions: (id of the node, variable, order) -> (node, program).
_PROGRAMS: dict[tuple[int, str, int], tuple] = {}


def _value(s: arb_series):
    c = s.coeffs()
    return c[0] if c else arb(0)


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
            if m.func == "pow":
                a, b = go(m.args[0]), go(m.args[1])
                return lambda pt: _series_pow(a(pt), b(pt))
            if m.func in ("abs", "maximum", "minimum"):
                return _branch(m.func, [go(a) for a in m.args])
            if len(m.args) != 1 or m.func not in KERNELS:
                return _unsupported(f"no Arb kernel for {m.func}()")
            return _kernel(m.func, go(m.args[0]), prec)
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
            require_nonzero(_value(y), "a division")
            return x / y

        return div
    return lambda pt: _series_pow(a(pt), b(pt))


def _where(m: ex.Where, go: Callable, compare: Callable) -> Callable:
    left, right = go(m.cond.left), go(m.cond.right)
    then, otherwise = go(m.then), go(m.otherwise)

    def where(pt):
        d = _value(left(pt)) - _value(right(pt))
        yes, no = compare(d)
        if d.is_zero() or not (yes or no):
            raise _Generic
        return then(pt) if yes else otherwise(pt)

    return where


def _branch(func: str, args: list) -> Callable:
    def branch(pt):
        values = [a(pt) for a in args]
        d = _value(values[0]) - (_value(values[1]) if len(values) > 1 else arb(0))
        if not (d > 0 or d < 0):
            raise _Generic
        if func == "abs":
            return values[0] if d > 0 else -values[0]
        return values[0] if (d > 0) == (func == "maximum") else values[1]

    return branch


def _kernel(func: str, arg: Callable, prec: int) -> Callable:
    series, exact_value = KERNELS[func]

    def kernel(pt):
        u = arg(pt)
        x0 = _value(u)
        if func == "tanh" and x0.is_zero():
            raise _Generic
        out = series(u, x0)
        if exact_value is not None:
            c = list(out.coeffs()) or [arb(0)]
            c[0] = exact_value(x0)
            out = arb_series(c, prec=prec)
        return out

    return kernel


def _series_pow(a, b):
    c = b.coeffs()
    exponent = c[0] if c else arb(0)
    constant = all(x.is_zero() for x in c[1:])
    if constant and exponent.is_exact() and exponent.is_integer():
        k = int(exponent.unique_fmpz())
        if k < 0:
            require_nonzero(_value(a), "a negative power")
        return a**k
    require_positive(_value(a), "a real power")
    return (b * a.log()).exp()
