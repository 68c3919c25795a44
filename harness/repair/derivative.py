"""The symbolic derivative of an expression: where a custom rule's candidates start.

A custom rule (``gradient:``, ``tangent:``) says what a framework should use for an
input's derivative instead of differentiating the formula's operations; the candidates
for one are the derivative of the function itself, written in the case language and then
rewritten by the saturation (:mod:`harness.repair.saturate`) into forms that round well.
:func:`differentiate` takes the derivative by the chain rule over the expression tree:
arithmetic by the usual rules, each function by its entry in :data:`DERIVATIVES` (the
derivative of the one-argument operators, written once, as data, in the case language of
their argument ``x``), ``where`` branch by branch, ``maximum`` and ``minimum`` by the
branch they take. The few simplifications it makes (a product by 0 or 1, a sum with 0)
keep the result small; it is a candidate, judged like any other before it is a repair.
"""

from __future__ import annotations

from functools import cache

from harness.cases import expressions as ex

__all__ = ["DERIVATIVES", "NotDifferentiable", "derivative_of", "differentiate"]

#: d/dx f(x) for the one-argument operators, in the case language of ``x``. Each is
#: checked against mpmath's numerical derivative of the operator (the tests).
DERIVATIVES: dict[str, str] = {
    "exp": "exp(x)",
    "expm1": "exp(x)",
    "exp2": "log(2) * exp2(x)",
    "log": "1 / x",
    "log1p": "1 / (1 + x)",
    "sqrt": "0.5 / sqrt(x)",
    "rsqrt": "-0.5 * rsqrt(x) / x",
    "square": "2 * x",
    "reciprocal": "-(1 / x) / x",
    "abs": "where(x >= 0, 1, -1)",
    "sin": "cos(x)",
    "cos": "-sin(x)",
    "tan": "1 + tan(x)**2",
    "sinh": "cosh(x)",
    "cosh": "sinh(x)",
    "tanh": "1 - tanh(x)**2",
    "atan": "1 / (1 + x**2)",
    "asinh": "1 / hypot(1, x)",
    "sigmoid": "sigmoid(x) * sigmoid(-x)",
    "softplus": "sigmoid(x)",
    "log_sigmoid": "sigmoid(-x)",
    "erf": "2 / sqrt(pi) * exp(-x**2)",
    "erfc": "-2 / sqrt(pi) * exp(-x**2)",
}

_ZERO, _ONE = ex.Num("0", 0.0), ex.Num("1", 1.0)


class NotDifferentiable(ValueError):
    """An operation the symbolic derivative has no rule for (named)."""


@cache
def derivative_of(func: str) -> ex.Node:
    """The parsed :data:`DERIVATIVES` entry of ``func``, in ``x``."""
    if func not in DERIVATIVES:
        raise NotDifferentiable(
            f"no symbolic derivative of {func} (those known: {', '.join(sorted(DERIVATIVES))})"
        )
    return ex.parse(DERIVATIVES[func], {"x"})


def _is(node: ex.Node, value: float) -> bool:
    return isinstance(node, ex.Num) and node.value == value


def _add(a: ex.Node, b: ex.Node) -> ex.Node:
    if _is(a, 0):
        return b
    if _is(b, 0):
        return a
    return ex.Binary("add", a, b)


def _sub(a: ex.Node, b: ex.Node) -> ex.Node:
    if _is(b, 0):
        return a
    if _is(a, 0):
        return _neg(b)
    return ex.Binary("sub", a, b)


def _neg(a: ex.Node) -> ex.Node:
    if _is(a, 0):
        return a
    if isinstance(a, ex.Unary):
        return a.arg
    return ex.Unary("neg", a)


def _mul(a: ex.Node, b: ex.Node) -> ex.Node:
    if _is(a, 0) or _is(b, 0):
        return _ZERO
    if _is(a, 1):
        return b
    if _is(b, 1):
        return a
    # (1 / g) * b = b / g: the chain rule's u'/u (log), not (1/u) * u'.
    for one, other in ((a, b), (b, a)):
        if isinstance(one, ex.Binary) and one.op == "div" and _is(one.left, 1):
            return _div(other, one.right)
    return ex.Binary("mul", a, b)


def _div(a: ex.Node, b: ex.Node) -> ex.Node:
    if _is(a, 0):
        return _ZERO
    if _is(b, 1):
        return a
    return ex.Binary("div", a, b)


def _substitute(node: ex.Node, arg: ex.Node) -> ex.Node:
    """``node`` (in ``x``) with ``arg`` for ``x``."""
    return ex.inline(ex.Call("_d", (arg,)), {"_d": (("x",), node)})


def differentiate(node: ex.Node, wrt: str) -> ex.Node:
    """d ``node`` / d ``wrt`` (raises :class:`NotDifferentiable` naming what it cannot
    take: a function without a :data:`DERIVATIVES` entry, a power of a varying
    exponent whose base may be negative is taken as exp(y log x))."""

    def d(n: ex.Node) -> ex.Node:
        if isinstance(n, ex.Var):
            return _ONE if n.name == wrt else _ZERO
        if isinstance(n, (ex.Num, ex.Const)):
            return _ZERO
        if isinstance(n, ex.Unary):
            return _neg(d(n.arg))
        if isinstance(n, ex.Binary):
            return _binary(n, d(n.left), d(n.right))
        if isinstance(n, ex.Where):
            return ex.Where(n.cond, d(n.then), d(n.otherwise))
        if isinstance(n, ex.Call):
            return _call(n, [d(a) for a in n.args])
        raise NotDifferentiable(f"no symbolic derivative of {ex.unparse(n)}")

    return d(node)


def _binary(n: ex.Binary, dl: ex.Node, dr: ex.Node) -> ex.Node:
    a, b = n.left, n.right
    if n.op == "add":
        return _add(dl, dr)
    if n.op == "sub":
        return _sub(dl, dr)
    if n.op == "mul":
        return _add(_mul(dl, b), _mul(a, dr))
    if n.op == "div":
        # (a/b)' = a'/b - (a/b) b'/b: the quotient itself, not a/b**2, which overflows.
        return _sub(_div(dl, b), _div(_mul(n, dr), b))
    if n.op == "pow":
        if _is(dr, 0):
            if isinstance(b, ex.Num):
                lower = b.value - 1
                power = {0.0: _ONE, 1.0: a}.get(lower) or ex.Binary(
                    "pow", a, ex.Num(repr(lower), lower)
                )
                return _mul(_mul(b, power), dl)
            return _mul(_mul(b, ex.Binary("pow", a, ex.Binary("sub", b, _ONE))), dl)
        # x**y = exp(y log x): (x**y)' = x**y (y' log x + y x'/x).
        log = ex.Call("log", (a,))
        return _mul(n, _add(_mul(dr, log), _div(_mul(b, dl), a)))
    raise NotDifferentiable(f"no symbolic derivative of {ex.unparse(n)}")


def _call(n: ex.Call, ds: list[ex.Node]) -> ex.Node:
    if n.func in ("maximum", "minimum") and len(n.args) == 2:
        a, b = n.args
        op = "ge" if n.func == "maximum" else "le"
        return ex.Where(ex.Compare(op, a, b), ds[0], ds[1])
    if len(n.args) != 1:
        raise NotDifferentiable(f"no symbolic derivative of {n.func} of {len(n.args)} arguments")
    return _mul(_substitute(derivative_of(n.func), n.args[0]), ds[0])
