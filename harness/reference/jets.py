"""Truncated multivariate Taylor arithmetic ("jets") in mpmath: exact derivatives.

A jet holds the Taylor coefficients ``c[α] = ∂^α f / α!`` of a function at a point, for
the multi-indices ``α`` of a :class:`JetSpace` (per-variable degree bounds and a total
degree bound). Arithmetic on jets is exact up to the working precision: there is no
step size, so there is none of ``mpmath.diff``'s trouble at tiny or huge arguments.
One evaluation of an expression over jets yields every wanted partial at once.

Elementary functions compose as ``f(u) = Σ_k f^(k)(u0)/k! · (u - u0)^k``. Their
coefficients ``f^(k)(u0)/k!`` are computed without cancellation where a formula allows:

- ``sigmoid``, ``softplus``, ``tanh``: derivatives of ``σ`` are polynomials in
  ``σ(x)`` and ``σ(-x)``, both computed directly, so ``σ'(1000) = σ(1000)σ(-1000)``
  ≈ 5e-435 comes out right where ``1 - σ(1000)`` would cancel to 0; for ``|x| < 1``
  polynomials in ``σ(x) - 1/2 = tanh(x/2)/2``, whose terms do not cancel near 0
  (``tanh''(1e-150) = -2e-150``, where the σ, σ(-x) terms cancel exactly);
  ``tanh^(k)(x) = 2^(k+1) σ^(k)(2x)`` and ``softplus^(k) = σ^(k-1)``;
- ``tan``: derivative polynomials in ``tan x`` with non-negative coefficients and one
  parity per order, so no term cancels another;
- ``log1p``, ``expm1``: their own value kernels, then ``1/(1+x)`` and ``exp`` terms.

Cancellation inside the expression itself (``log(1 + exp(x))`` at large ``x``) is real.
Jet addition and subtraction record the bits it costs (:func:`cancelled_bits`), and
:mod:`harness.reference.verify` accepts a precision only when enough bits survive: comparing
two precisions alone is fooled by a *total* cancellation, which gives the same exact
0 at both. (Not tracked: cancellation inside a product's coefficient sums and an
ill-conditioned kernel argument such as ``log`` of a value absorbed to exactly 1.)

Non-differentiable points (``abs`` at 0, ``maximum`` at a tie with different slopes,
``where`` where its condition's sides meet and the branches differ) give NaN for the
partials that do not exist there, and only those (``|x|·y`` at x = 0 keeps ``∂/∂y``); a
derivative a kernel lacks (``x**2.5`` has none of order 3 at 0) reaches only the orders
from it on. The reference marks them unreliable.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from functools import cache

import mpmath

from harness.cases import expressions as ex
from harness.operators import OPERATORS

__all__ = ["Jet", "JetSpace", "cancelled_bits", "evaluate", "space_for"]

_mp = mpmath.mp

# The most bits lost to cancellation in one jet addition or subtraction since the last
# evaluate(); a total cancellation (nonzero operands, zero result) counts as every bit.
_LOST = [0]
_ALL_BITS = 1 << 30


def cancelled_bits() -> int:
    """Bits lost to cancellation by the last :func:`evaluate` (``2**30``: total)."""
    return _LOST[0]


def _sum(a: list, b: list, sign: int) -> list:
    out = []
    lost = _LOST[0]
    for x, y in zip(a, b):
        r = x + y if sign > 0 else x - y
        xs, ys = x._mpf_, y._mpf_
        # Cancellation needs two nonzero finite operands of effectively opposite signs.
        if xs[1] and ys[1] and (xs[0] != ys[0]) == (sign > 0):
            rs = r._mpf_
            top = max(xs[2] + xs[3], ys[2] + ys[3])
            lost = max(lost, top - (rs[2] + rs[3]) if rs[1] else _ALL_BITS)
        out.append(r)
    _LOST[0] = lost
    return out


class JetSpace:
    """The multi-indices kept: ``α_v <= max_degree[v]`` and ``|α| <= total``."""

    def __init__(self, names: Sequence[str], max_degree: Mapping[str, int], total: int):
        self.names = tuple(names)
        self.max_degree = tuple(int(max_degree.get(n, 0)) for n in self.names)
        self.total = int(total)
        ranges = [range(d + 1) for d in self.max_degree]
        idx = [a for a in itertools.product(*ranges) if sum(a) <= self.total]
        idx.sort(key=lambda a: (sum(a), a))
        self.indices: tuple[tuple[int, ...], ...] = tuple(idx)
        self.position = {a: i for i, a in enumerate(self.indices)}
        # Product table: for each output k, the pairs (i, j) with α_i + α_j = α_k.
        table: list[list[tuple[int, int]]] = [[] for _ in idx]
        for i, a in enumerate(idx):
            for j, b in enumerate(idx):
                c = tuple(x + y for x, y in zip(a, b))
                k = self.position.get(c)
                if k is not None:
                    table[k].append((i, j))
        self.table = tuple(tuple(t) for t in table)
        self.size = len(idx)
        # The variables of each coefficient, and per set of variables the (non-value)
        # coefficients that involve only those: a function's jet along their subspace.
        self.support = tuple(frozenset(i for i, e in enumerate(a) if e) for a in idx)
        self.degree = tuple(sum(a) for a in idx)
        self.along = {
            s: tuple(k for k in range(1, self.size) if self.support[k] <= s)
            for s in set(self.support)
        }

    def steady(self, condition: ex.Compare) -> frozenset[int]:
        """Positions of the variables a ``where`` condition does not depend on."""
        moving = ex.names_in(condition.left) | ex.names_in(condition.right)
        return frozenset(i for i, v in enumerate(self.names) if v not in moving)

    def switch(self, chosen: list, other: list, steady, same: Callable, missing) -> list:
        """The coefficients at a switch point: the function is ``chosen`` here and
        ``other`` arbitrarily near (``abs`` and ``maximum`` at a kink, ``where`` where its
        condition's sides meet).

        ``∂^α`` is taken along the variables of ``α``, so it exists (and is ``chosen``'s)
        where the two pieces are ``same`` on every coefficient along those variables up to
        the order of ``α`` (they are then the same function to that order there: x**2 and
        2x - 1 at 1 share f' = 2, not f''), or where no variable of ``α`` can move the
        switch (it lies outside the condition: ``steady``, variable positions). Elsewhere
        it does not exist: ``missing``, for those ``α`` only (``|x|·y`` at x = 0 keeps
        ``∂/∂y``).
        """
        out = [chosen[0]]
        for k in range(1, self.size):
            support, order = self.support[k], self.degree[k]
            if support <= steady or all(
                same(chosen[j], other[j]) for j in self.along[support] if self.degree[j] <= order
            ):
                out.append(chosen[k])
            else:
                out.append(missing)
        return out

    def constant(self, value) -> Jet:
        return Jet(self, [value] + [_mp.zero] * (self.size - 1))

    def variable(self, name: str, value) -> Jet:
        coeffs = [value] + [_mp.zero] * (self.size - 1)
        if name in self.names:
            unit = tuple(1 if n == name else 0 for n in self.names)
            k = self.position.get(unit)
            if k is not None:
                coeffs[k] = _mp.one
        return Jet(self, coeffs)

    def derivative(self, jet: Jet, partial: Sequence[str]):
        """``∂^partial f`` from the jet (coefficient times ``α!``)."""
        alpha = tuple(partial.count(n) for n in self.names)
        c = jet.c[self.position[alpha]]
        factor = 1
        for a in alpha:
            factor *= math.factorial(a)
        return c * factor


@cache
def space_for(partials: tuple[tuple[str, ...], ...], names: tuple[str, ...]) -> JetSpace:
    """The smallest space that holds every partial in ``partials``."""
    max_degree = {n: max((p.count(n) for p in partials), default=0) for n in names}
    total = max((len(p) for p in partials), default=0)
    return JetSpace(names, max_degree, total)


class Jet:
    """Taylor coefficients in a :class:`JetSpace` (list of mpf, index 0 = value)."""

    __slots__ = ("space", "c")

    def __init__(self, space: JetSpace, coeffs: list):
        self.space = space
        self.c = coeffs

    @property
    def value(self):
        return self.c[0]

    def is_constant(self) -> bool:
        return all(not x for x in self.c[1:])

    def __add__(self, other: Jet) -> Jet:
        return Jet(self.space, _sum(self.c, other.c, 1))

    def __sub__(self, other: Jet) -> Jet:
        return Jet(self.space, _sum(self.c, other.c, -1))

    def __neg__(self) -> Jet:
        return Jet(self.space, [-x for x in self.c])

    def scale(self, s) -> Jet:
        return Jet(self.space, [s * x for x in self.c])

    def __mul__(self, other: Jet) -> Jet:
        a, b = self.c, other.c
        if self.is_constant():
            return other.scale(a[0])
        if other.is_constant():
            return self.scale(b[0])
        out = []
        for pairs in self.space.table:
            s = _mp.zero
            for i, j in pairs:
                s += a[i] * b[j]
            out.append(s)
        return Jet(self.space, out)

    def reciprocal(self) -> Jet:
        """``1 / self`` (NaN everywhere at 0)."""
        x = self.c[0]
        if x == 0:
            return Jet(self.space, [_mp.nan] * self.space.size)
        inv = 1 / x
        coeffs = [inv]
        for _ in range(self.space.total):
            coeffs.append(-coeffs[-1] * inv)
        return self.compose(coeffs)

    def with_value(self, value) -> Jet:
        """The same derivatives with another value (one computed without cancellation)."""
        return Jet(self.space, [value] + list(self.c[1:]))

    def nan_derivatives(self) -> Jet:
        """The value, and NaN for every derivative (none exists here)."""
        return Jet(self.space, [self.c[0]] + [_mp.nan] * (self.space.size - 1))

    def switch(self, other: Jet, steady: frozenset[int] = frozenset()) -> Jet:
        """The jet at a switch point (:meth:`JetSpace.switch`), NaN where no derivative
        is: ``self`` holds here, ``other`` arbitrarily near."""
        return Jet(self.space, self.space.switch(self.c, other.c, steady, _equal, _mp.nan))

    def compose(self, coeffs: Sequence) -> Jet:
        """``Σ_k coeffs[k] · (self - self.value)^k`` (coeffs[k] = f^(k)(value)/k!)."""
        if self.is_constant():
            return self.space.constant(coeffs[0])
        total = self.space.total
        # A coefficient that does not exist (NaN: f has no k-th derivative at the value)
        # reaches the orders >= k only: the lower ones are exact without it (elu at 0
        # keeps its value and f'). Multiplying it in would spread NaN * 0 everywhere.
        missing = next((k for k in range(1, total + 1) if _mp.isnan(coeffs[k])), None)
        delta = Jet(self.space, [_mp.zero] + list(self.c[1:]))
        out = self.space.constant(coeffs[0])
        power = delta
        for k in range(1, (missing or total + 1)):
            if coeffs[k] != 0:
                out = out + power.scale(coeffs[k])
            if k < total:
                power = power * delta
        if missing is not None:
            degrees = (sum(a) for a in self.space.indices)
            out = Jet(self.space, [c if d < missing else _mp.nan for c, d in zip(out.c, degrees)])
        return out


def _equal(a, b) -> bool:
    return a == b


_POWER = OPERATORS["pow"].mpmath  # the ``**`` operator is the pow function

_COMPARE = {
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
}


def evaluate(node: ex.Node, point: Mapping[str, object], space: JetSpace) -> Jet:
    """Evaluate an expression over jets at ``point`` (input name -> mpf value).

    Call under ``mpmath.workdps(...)``: every operation uses the current precision.
    Afterwards :func:`cancelled_bits` tells how many bits cancellation cost.
    """
    _LOST[0] = 0
    variables = {name: space.variable(name, value) for name, value in point.items()}
    memo: dict[ex.Node, Jet] = {}

    def go(n: ex.Node) -> Jet:
        hit = memo.get(n)
        if hit is not None:
            return hit
        out = _go(n)
        memo[n] = out
        return out

    def _go(n: ex.Node) -> Jet:
        if isinstance(n, ex.Var):
            return variables[n.name]
        if isinstance(n, ex.Num):
            return space.constant(_mp.mpf(n.text))
        if isinstance(n, ex.Const):
            return space.constant(+_mp.pi)
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
        if isinstance(n, ex.Call):
            op = OPERATORS[n.func]
            if not op.pointwise:
                return op.mpmath(*(go(a) for a in n.args))
            u = go(n.args[0])
            return u.compose(op.mpmath(u.value, space.total))
        if isinstance(n, ex.Where):
            left, right = go(n.cond.left).value, go(n.cond.right).value
            cond = _COMPARE[n.cond.op](left, right)
            chosen, other = (n.then, n.otherwise) if cond else (n.otherwise, n.then)
            if left != right:
                return go(chosen)
            # The condition's sides meet: the other branch holds arbitrarily near.
            return go(chosen).switch(go(other), space.steady(n.cond))
        raise TypeError(f"cannot evaluate {n!r}")

    return go(node)
