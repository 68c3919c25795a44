"""One-variable references by flint's power series: the fast path of the Arb oracle.

Where every partial asked for is in one variable (softplus, composition, a sweep in
``t``), the expression is evaluated as an ``arb_series`` in that variable: one C call per
operation, where :func:`harness.reference.balls.evaluate` composes multivariate ball jets
coefficient by coefficient in Python. The kernels, their branch choices and what is
undefined are :mod:`harness.reference.balls`'s; an exact switch point falls back to it.
"""

from __future__ import annotations

from collections.abc import Mapping

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
    try:
        return list(_series_of(node, point, name, n).coeffs()) + [arb(0)] * (n + 1)
    except _Generic:
        space = JetSpace((name,), {name: n}, n)
        jet = evaluate(node, point, space)
        return [jet.c[space.position[(k,)]] for k in range(n + 1)]


def _series_of(node: ex.Node, point: Mapping[str, arb], name: str, n: int):
    # By identity: a value-keyed memo would hash the node's whole subtree at every visit.
    memo: dict[int, arb_series] = {}

    def const(value) -> arb_series:
        return arb_series([value], prec=n + 1)

    def go(m: ex.Node) -> arb_series:
        hit = memo.get(id(m))
        if hit is None:
            hit = memo[id(m)] = _go(m)
        return hit

    def value(s: arb_series):
        c = s.coeffs()
        return c[0] if c else arb(0)

    def _go(m: ex.Node) -> arb_series:
        if isinstance(m, ex.Var):
            x = point[m.name]
            return arb_series([x, 1] if m.name == name else [x], prec=n + 1)
        if isinstance(m, ex.Num):
            return const(arb(m.text))
        if isinstance(m, ex.Const):
            return const(arb.pi())
        if isinstance(m, ex.Unary):
            return -go(m.arg)
        if isinstance(m, ex.Binary):
            a, b = go(m.left), go(m.right)
            if m.op == "add":
                return a + b
            if m.op == "sub":
                return a - b
            if m.op == "mul":
                return a * b
            if m.op == "div":
                require_nonzero(value(b), "a division")
                return a / b
            return _series_pow(a, b, value, n)
        if isinstance(m, ex.Where):
            d = value(go(m.cond.left)) - value(go(m.cond.right))
            yes, no = COMPARE[m.cond.op](d)
            if d.is_zero() or not (yes or no):
                raise _Generic
            return go(m.then) if yes else go(m.otherwise)
        if isinstance(m, ex.Call):
            if m.func == "pow":
                return _series_pow(go(m.args[0]), go(m.args[1]), value, n)
            if m.func in ("abs", "maximum", "minimum"):
                args = [go(a) for a in m.args]
                d = value(args[0]) - (value(args[1]) if len(args) > 1 else arb(0))
                if not (d > 0 or d < 0):
                    raise _Generic
                if m.func == "abs":
                    return args[0] if d > 0 else -args[0]
                return args[0] if (d > 0) == (m.func == "maximum") else args[1]
            if len(m.args) != 1 or m.func not in KERNELS:
                raise Unsupported(f"no Arb kernel for {m.func}()")
            u = go(m.args[0])
            x0 = value(u)
            if m.func == "tanh" and x0.is_zero():
                raise _Generic
            series, exact_value = KERNELS[m.func]
            out = series(u, x0)
            if exact_value is not None:
                c = list(out.coeffs()) or [arb(0)]
                c[0] = exact_value(x0)
                out = arb_series(c, prec=n + 1)
            return out
        raise Unsupported(f"cannot evaluate {type(m).__name__}")

    try:
        return go(node)
    finally:
        memo.clear()  # go and _go reach each other (a cycle): keep it from holding the jets


def _series_pow(a, b, value, n: int):
    c = b.coeffs()
    exponent = c[0] if c else arb(0)
    constant = all(x.is_zero() for x in c[1:])
    if constant and exponent.is_exact() and exponent.is_integer():
        k = int(exponent.unique_fmpz())
        if k < 0:
            require_nonzero(value(a), "a negative power")
        return a**k
    require_positive(value(a), "a real power")
    return (b * a.log()).exp()
