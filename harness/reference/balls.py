"""Taylor jets over Arb balls (python-flint): derivatives with proven error bounds.

The same multivariate jets as :mod:`harness.reference.jets` (the same
:class:`~harness.reference.jets.JetSpace` and product table), with every coefficient an
``arb``: a midpoint and a radius such that the true coefficient certainly lies in the
ball. Named functions compose through their Taylor coefficients at the argument's value,
from each operator's Arb rule in the operator table (:mod:`harness.operators.arb`: one
``arb_series`` evaluation, in a form that does not cancel where it can be avoided, a wide
ball where it cannot, never a wrong one).

What a ball cannot decide raises :class:`~harness.operators.arb.Unsupported` with the
reason: a function with no Arb rule, a branch (``where``, ``abs``, ``maximum``) whose condition's ball
straddles the switch, a division by a ball that contains 0, a logarithm of one that
reaches 0. Callers fall back to the mpmath value and say so.

Set the working precision with :func:`working_bits` (flint's context is global).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping

import flint
from flint import arb

from harness.cases import expressions as ex
from harness.operators import OPERATORS, ArbRule
from harness.operators.arb import Unsupported, coefficients, require_nonzero
from harness.reference.jets import JetSpace

__all__ = ["COMPARE", "BallJet", "evaluate", "pointwise_coefficients", "working_bits"]


@contextlib.contextmanager
def working_bits(bits: int):
    """Run the block at ``bits`` of Arb precision (restored afterwards)."""
    old = flint.ctx.prec
    flint.ctx.prec = int(bits)
    try:
        yield
    finally:
        flint.ctx.prec = old


class BallJet:
    """Taylor coefficients ``∂^α f / α!`` as Arb balls (index 0 = value)."""

    __slots__ = ("space", "c")

    def __init__(self, space: JetSpace, coeffs: list):
        self.space = space
        self.c = coeffs

    @classmethod
    def constant(cls, space: JetSpace, value) -> BallJet:
        return cls(space, [value] + [arb(0)] * (space.size - 1))

    @classmethod
    def variable(cls, space: JetSpace, name: str, value) -> BallJet:
        out = cls.constant(space, value)
        if name in space.names:
            unit = tuple(1 if n == name else 0 for n in space.names)
            k = space.position.get(unit)
            if k is not None:
                out.c[k] = arb(1)
        return out

    @property
    def value(self):
        return self.c[0]

    def is_constant(self) -> bool:
        return all(x.is_zero() for x in self.c[1:])

    def __add__(self, other: BallJet) -> BallJet:
        return BallJet(self.space, [a + b for a, b in zip(self.c, other.c)])

    def __sub__(self, other: BallJet) -> BallJet:
        return BallJet(self.space, [a - b for a, b in zip(self.c, other.c)])

    def __neg__(self) -> BallJet:
        return BallJet(self.space, [-a for a in self.c])

    def scale(self, s) -> BallJet:
        return BallJet(self.space, [a * s for a in self.c])

    def __mul__(self, other: BallJet) -> BallJet:
        if other.is_constant():
            return self.scale(other.c[0])
        if self.is_constant():
            return other.scale(self.c[0])
        a, b = self.c, other.c
        out = []
        for pairs in self.space.table:
            s = arb(0)
            for i, j in pairs:
                s += a[i] * b[j]
            out.append(s)
        return BallJet(self.space, out)

    def compose(self, coeffs: list) -> BallJet:
        """``Σ_k coeffs[k] · (self - self.value)^k`` (coeffs[k] = f^(k)(value)/k!). A
        coefficient that does not exist (NaN: ``elu`` at 0 from order 2) reaches the orders
        >= k only, as in :meth:`harness.reference.jets.Jet.compose`."""
        if self.is_constant():
            return BallJet.constant(self.space, coeffs[0])
        total = self.space.total
        missing = next((k for k in range(1, total + 1) if coeffs[k].is_nan()), None)
        delta = BallJet(self.space, [arb(0)] + list(self.c[1:]))
        out = BallJet.constant(self.space, coeffs[0])
        power = delta
        for k in range(1, missing or total + 1):
            out = out + power.scale(coeffs[k])
            if k < total:
                power = power * delta
        if missing is not None:
            degrees = (sum(a) for a in self.space.indices)
            out = BallJet(self.space, [c if d < missing else _NAN for c, d in zip(out.c, degrees)])
        return out

    def with_value(self, value) -> BallJet:
        """The same derivatives with another value (one computed without cancellation)."""
        return BallJet(self.space, [value] + list(self.c[1:]))

    def nan_derivatives(self) -> BallJet:
        """The value, and NaN (no ball) for every derivative: none exists here."""
        return BallJet(self.space, [self.c[0]] + [_NAN] * (self.space.size - 1))

    def reciprocal(self) -> BallJet:
        """``1 / self``, for a value certainly not 0."""
        x0 = self.value
        require_nonzero(x0, "a division")
        inv = 1 / x0
        coeffs = [inv]
        for _ in range(self.space.total):
            coeffs.append(-coeffs[-1] * inv)
        return self.compose(coeffs)

    def switch(self, other: BallJet, steady: frozenset[int] = frozenset()) -> BallJet:
        """At a switch point (exactly): :meth:`~harness.reference.jets.JetSpace.switch`,
        with balls the same only where their difference is exactly 0, and NaN (no ball)
        where no derivative is."""
        space = self.space
        return BallJet(space, space.switch(self.c, other.c, steady, _exactly_equal, _NAN))

    def derivative(self, partial) -> arb:
        """``∂^partial f``: the coefficient times ``α!`` (exact)."""
        alpha = tuple(partial.count(n) for n in self.space.names)
        factor = 1
        for a in alpha:
            factor *= math.factorial(a)
        return self.c[self.space.position[alpha]] * factor


_POWER = OPERATORS["pow"].arb.jet  # the ``**`` operator is the pow function


def pointwise_coefficients(rule: ArbRule, x0, n: int) -> list:
    """``f^(k)(x0)/k!`` for k = 0..n as balls, from a pointwise operator's Arb rule."""
    exact = rule.exact(x0, n) if rule.exact else None
    if exact is not None:
        return exact
    return coefficients(rule.series, rule.value, x0, n)


COMPARE = {
    "lt": lambda d: (d < 0, d >= 0),
    "le": lambda d: (d <= 0, d > 0),
    "gt": lambda d: (d > 0, d <= 0),
    "ge": lambda d: (d >= 0, d < 0),
    "eq": lambda d: (d.is_zero(), d > 0 or d < 0),
    "ne": lambda d: (d > 0 or d < 0, d.is_zero()),
}


def evaluate(node: ex.Node, point: Mapping[str, arb], space: JetSpace) -> BallJet:
    """The ball jet of ``node`` at ``point`` (input name -> exact arb), at the current
    precision; raises :class:`Unsupported` where balls cannot decide."""
    variables = {name: BallJet.variable(space, name, value) for name, value in point.items()}
    # By identity: a value-keyed memo would hash the node's whole subtree at every visit.
    memo: dict[int, BallJet] = {}

    def go(n: ex.Node) -> BallJet:
        hit = memo.get(id(n))
        if hit is None:
            hit = memo[id(n)] = _go(n)
        return hit

    def _go(n: ex.Node) -> BallJet:
        if isinstance(n, ex.Var):
            return variables[n.name]
        if isinstance(n, ex.Num):
            return BallJet.constant(space, arb(n.text))
        if isinstance(n, ex.Const):
            return BallJet.constant(space, arb.pi())
        if isinstance(n, ex.Unary):
            return -go(n.arg)
        if isinstance(n, ex.Binary):
            left, right = go(n.left), go(n.right)
            if n.op == "add":
                return left + right
            if n.op == "sub":
                return left - right
            if n.op == "mul":
                return left * right
            if n.op == "div":
                return left * right.reciprocal()
            return _POWER(left, right)
        if isinstance(n, ex.Where):
            d = go(n.cond.left).value - go(n.cond.right).value
            yes, no = COMPARE[n.cond.op](d)
            if not (yes or no):
                raise Unsupported("where(): the condition's ball straddles its switch point")
            chosen, other = (n.then, n.otherwise) if yes else (n.otherwise, n.then)
            if not d.is_zero():
                return go(chosen)
            # Exactly at the switch point.
            return go(chosen).switch(go(other), space.steady(n.cond))
        if isinstance(n, ex.Call):
            op = OPERATORS[n.func]
            rule = op.arb
            if rule is None:
                raise Unsupported(f"no Arb kernel for {n.func}()")
            if not op.pointwise:
                return rule.jet(*(go(a) for a in n.args))
            u = go(n.args[0])
            return u.compose(pointwise_coefficients(rule, u.value, space.total))
        raise Unsupported(f"cannot evaluate {type(n).__name__}")

    try:
        return go(node)
    finally:
        memo.clear()  # go and _go reach each other (a cycle): keep it from holding the jets


def _exactly_equal(a, b) -> bool:
    return (a - b).is_zero()


_NAN = arb.nan()
