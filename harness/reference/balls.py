"""Taylor jets over Arb balls (python-flint): derivatives with proven error bounds.

The same multivariate jets as :mod:`harness.reference.jets` (the same
:class:`~harness.reference.jets.JetSpace` and product table), with every coefficient an
``arb``: a midpoint and a radius such that the true coefficient certainly lies in the
ball. Elementary functions compose through their Taylor coefficients at the argument's
value, taken from one ``arb_series`` evaluation (``exp``, ``log``, ``sqrt``, ``atan``,
``erf``, ...; ``sigmoid``, ``softplus``, ``tanh`` and the other composites written in
series arithmetic in a form that does not cancel where it can be avoided: a wide ball
where it cannot, never a wrong one).

What a ball cannot decide raises :class:`Unsupported` with the reason: a function with no
Arb kernel here, a branch (``where``, ``abs``, ``maximum``) whose condition's ball
straddles the switch, a division by a ball that contains 0, a logarithm of one that
reaches 0. Callers fall back to the mpmath value and say so.

Set the working precision with :func:`working_bits` (flint's context is global).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Mapping

import flint
from flint import arb, arb_series

from harness.cases import expressions as ex
from harness.reference.jets import JetSpace

__all__ = [
    "COMPARE",
    "KERNELS",
    "BallJet",
    "Undefined",
    "Unsupported",
    "evaluate",
    "require_nonzero",
    "require_positive",
    "working_bits",
]


class Unsupported(Exception):
    """The ball arithmetic cannot decide this expression at this point."""


class Undefined(Unsupported):
    """The expression certainly has no value here (a division by exactly 0, a logarithm
    of exactly 0 or less): no precision would change that."""


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
        """``Σ_k coeffs[k] · (self - self.value)^k`` (coeffs[k] = f^(k)(value)/k!)."""
        if self.is_constant():
            return BallJet.constant(self.space, coeffs[0])
        delta = BallJet(self.space, [arb(0)] + list(self.c[1:]))
        out = BallJet.constant(self.space, coeffs[0])
        power = delta
        for k in range(1, self.space.total + 1):
            out = out + power.scale(coeffs[k])
            if k < self.space.total:
                power = power * delta
        return out

    def derivative(self, partial) -> arb:
        """``∂^partial f``: the coefficient times ``α!`` (exact)."""
        alpha = tuple(partial.count(n) for n in self.space.names)
        factor = 1
        for a in alpha:
            factor *= math.factorial(a)
        return self.c[self.space.position[alpha]] * factor


def require_positive(x, what: str) -> None:
    if not x > 0:
        if x <= 0:
            raise Undefined(f"not defined here: {what} of {x.str(5)}, not positive")
        raise Unsupported(f"{what} of a ball that is not certainly positive ({x.str(5)})")


def require_nonzero(x, what: str) -> None:
    if not (x > 0 or x < 0):
        if x.is_zero():
            raise Undefined(f"not defined here: {what} by exactly 0")
        raise Unsupported(f"{what} of a ball that contains 0 ({x.str(5)})")


def _sigmoid(s, x0):
    if x0 >= 0:
        return 1 / (1 + (-s).exp())
    if x0 < 0:
        e = s.exp()
        return e / (1 + e)
    raise Unsupported("sigmoid at a ball that straddles 0")


def _softplus(s, x0):
    if x0 >= 0:
        return s + (1 + (-s).exp()).log()
    if x0 < 0:
        return (1 + s.exp()).log()
    raise Unsupported("softplus at a ball that straddles 0")


def _softplus_value(x0):
    """softplus(x0) to a relative (not absolute) error where it is tiny (x0 << 0)."""
    if x0 < 0:
        return x0.exp().log1p()
    return x0 + (-x0).exp().log1p()


def _tanh(s, x0):
    require_nonzero(x0, "tanh")  # tanh(0) = 0 is handled by the exact path below
    if x0 > 0:
        e = (-2 * s).exp()
        return (1 - e) / (1 + e)
    e = (2 * s).exp()
    return (e - 1) / (e + 1)


def _log(s, x0):
    require_positive(x0, "log")
    return s.log()


def _log1p(s, x0):
    require_positive(1 + x0, "log1p")
    return (1 + s).log()


def _sqrt(s, x0):
    require_positive(x0, "sqrt")
    return s.sqrt()


#: Per function: the series of f(x0 + t) from the series s = x0 + t, and the value f(x0)
#: computed on its own where the series' constant term would lose digits.
KERNELS: dict[str, tuple[Callable, Callable | None]] = {
    "exp": (lambda s, x0: s.exp(), None),
    "expm1": (lambda s, x0: s.exp(), lambda x0: x0.expm1()),
    "log": (_log, None),
    "log1p": (_log1p, lambda x0: x0.log1p()),
    "sqrt": (_sqrt, None),
    "sin": (lambda s, x0: s.sin(), None),
    "cos": (lambda s, x0: s.cos(), None),
    "tan": (lambda s, x0: s.tan(), None),
    "atan": (lambda s, x0: s.atan(), None),
    "sinh": (lambda s, x0: (s.exp() - (-s).exp()) / 2, lambda x0: x0.sinh()),
    "cosh": (lambda s, x0: (s.exp() + (-s).exp()) / 2, lambda x0: x0.cosh()),
    "tanh": (_tanh, lambda x0: x0.tanh()),
    "sigmoid": (_sigmoid, None),
    "softplus": (_softplus, _softplus_value),
    "log_sigmoid": (lambda s, x0: -_softplus(-s, -x0), lambda x0: -_softplus_value(-x0)),
    "erf": (lambda s, x0: s.erf(), None),
    "erfc": (lambda s, x0: s.erfc(), None),
}


def _kernel(name: str, x0, n: int) -> list:
    """``f^(k)(x0)/k!`` for k = 0..n as balls."""
    if name not in KERNELS:
        raise Unsupported(f"no Arb kernel for {name}()")
    series, value = KERNELS[name]
    coeffs = list(series(arb_series([x0, 1], prec=n + 1), x0).coeffs())
    coeffs += [arb(0)] * (n + 1 - len(coeffs))
    if value is not None:
        coeffs[0] = value(x0)
    return coeffs


def _reciprocal(u: BallJet) -> BallJet:
    x0 = u.value
    require_nonzero(x0, "a division")
    inv = 1 / x0
    coeffs = [inv]
    for _ in range(u.space.total):
        coeffs.append(-coeffs[-1] * inv)
    return u.compose(coeffs)


def _pow(left: BallJet, right: BallJet) -> BallJet:
    n = left.space.total
    if right.is_constant() and right.value.is_exact() and right.value.is_integer():
        c = int(right.value.unique_fmpz())
        if c < 0:
            require_nonzero(left.value, "a negative power")
        series = arb_series([left.value, 1], prec=n + 1) ** c
        coeffs = list(series.coeffs()) + [arb(0)] * (n + 1)
        return left.compose(coeffs[: n + 1])
    require_positive(left.value, "a real power")
    product = right * left.compose(_kernel("log", left.value, n))
    return product.compose(_kernel("exp", product.value, n))


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
                return left * _reciprocal(right)
            return _pow(left, right)
        if isinstance(n, ex.Where):
            d = go(n.cond.left).value - go(n.cond.right).value
            yes, no = COMPARE[n.cond.op](d)
            if not (yes or no):
                raise Unsupported("where(): the condition's ball straddles its switch point")
            chosen, other = (n.then, n.otherwise) if yes else (n.otherwise, n.then)
            if not d.is_zero():
                return go(chosen)
            # Exactly at the switch point.
            return _switch(go(chosen), go(other), space.steady(n.cond))
        if isinstance(n, ex.Call):
            if n.func == "pow":
                return _pow(go(n.args[0]), go(n.args[1]))
            if n.func == "abs":
                u = go(n.args[0])
                if u.value.is_zero():
                    return _switch(u, -u)
                require_nonzero(u.value, "abs")
                return u if u.value > 0 else -u
            if n.func in ("maximum", "minimum"):
                a, b = go(n.args[0]), go(n.args[1])
                d = a.value - b.value
                if d.is_zero():
                    return _switch(a, b)
                require_nonzero(d, n.func)
                return a if (d > 0) == (n.func == "maximum") else b
            if len(n.args) != 1:
                raise Unsupported(f"no Arb kernel for {n.func}()")
            u = go(n.args[0])
            if n.func == "tanh" and u.value.is_zero():
                # tanh is odd: its even coefficients at 0 vanish exactly.
                return u.compose(_tanh_at_zero(space.total))
            return u.compose(_kernel(n.func, u.value, space.total))
        raise Unsupported(f"cannot evaluate {type(n).__name__}")

    try:
        return go(node)
    finally:
        memo.clear()  # go and _go reach each other (a cycle): keep it from holding the jets


def _switch(chosen: BallJet, other: BallJet, steady: frozenset[int] = frozenset()) -> BallJet:
    """At a switch point (exactly): :meth:`~harness.reference.jets.JetSpace.switch`, with
    balls the same only where their difference is exactly 0, and NaN (no ball) where no
    derivative is."""
    space = chosen.space
    return BallJet(space, space.switch(chosen.c, other.c, steady, _exactly_equal, _NAN))


def _exactly_equal(a, b) -> bool:
    return (a - b).is_zero()


_NAN = arb.nan()


def _tanh_at_zero(n: int) -> list:
    # tanh t = t - t^3/3 + 2 t^5/15 - ...
    known = [arb(0), arb(1), arb(0), arb(-1) / 3, arb(0), arb(2) / 15]
    return known[: n + 1]
