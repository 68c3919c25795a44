"""Constants a case may write: bounded in magnitude, so the reference can evaluate them.

``x * 9**9**9**9`` is a valid expression, but its constant has about 10**(3.7e8) digits in
its exponent: mpmath would try to build it and grow without end. Every constant
subexpression (one without variables) is estimated here in binary logarithm, at low
precision and without forming the value where a power or an exponential would be
too large: ``|log2 |c|| <= 2**20`` (about 10**±315,652, far beyond every dtype and cheap
at any precision the reference works at) or the case is refused with the subexpression.
"""

from __future__ import annotations

import mpmath

from harness.cases import expressions as ex

__all__ = ["LIMIT_BITS", "check"]

#: The largest |log2 |c|| a constant subexpression may have.
LIMIT_BITS = 2**20

# Functions whose value can be exponentially larger than their argument.
_EXPONENTIAL = frozenset({"exp", "expm1", "sinh", "cosh"})


def check(node: ex.Node) -> None:
    """Raise :class:`~harness.cases.expressions.ExpressionError` naming the first constant
    subexpression of ``node`` whose magnitude is beyond ``2**±LIMIT_BITS``."""
    with mpmath.workprec(64):
        _value(node)


def _value(node: ex.Node):
    """The constant's value (an mpf at 64 bits), or None where it depends on a variable
    or is not estimated (every subexpression is still checked)."""
    if isinstance(node, ex.Num):
        return mpmath.mpf(node.text)
    if isinstance(node, ex.Const):
        return +mpmath.pi
    if isinstance(node, ex.Var):
        return None
    if isinstance(node, ex.Unary):
        v = _value(node.arg)
        return None if v is None else -v
    if isinstance(node, ex.Binary):
        a, b = _value(node.left), _value(node.right)
        if a is None or b is None:
            return None
        if node.op == "pow":
            return _power(node, a, b)
        if node.op == "div":
            return None if b == 0 else _bounded(node, a / b)
        return _bounded(node, {"add": a + b, "sub": a - b, "mul": a * b}[node.op])
    if isinstance(node, ex.Call):
        args = [_value(a) for a in node.args]
        if node.func in _EXPONENTIAL and args[0] is not None:
            _refuse_if(node, abs(args[0]) * mpmath.log(mpmath.e, 2))
            return None
        if node.func == "pow" and None not in args:
            return _power(node, *args)
        return None
    if isinstance(node, ex.Where):
        for part in (node.cond.left, node.cond.right, node.then, node.otherwise):
            _value(part)
        return None
    return None


def _power(node: ex.Node, a, b):
    if a == 0:
        return None
    _refuse_if(node, abs(b) * abs(mpmath.log(abs(a), 2)))
    return a**b


def _bounded(node: ex.Node, value):
    if value != 0 and mpmath.isfinite(value):
        _refuse_if(node, abs(mpmath.log(abs(value), 2)))
    return value


def _refuse_if(node: ex.Node, log2_magnitude) -> None:
    if not mpmath.isfinite(log2_magnitude) or log2_magnitude > LIMIT_BITS:
        raise ex.ExpressionError(
            f"the constant {ex.unparse(node)} is about 2**{mpmath.nstr(log2_magnitude, 3)} in "
            f"magnitude, beyond 2**{LIMIT_BITS} (about 10**315652): the reference cannot "
            "evaluate it in bounded time and memory"
        )
