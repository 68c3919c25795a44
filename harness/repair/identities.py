"""The identities a repair may rewrite with, as data, each held to the certified reference.

Each :class:`Identity` is two expressions of the case language (:mod:`harness.cases.
expressions`, over the operator table's functions) equal as functions on a domain: the
rewrite search (equality saturation) may replace either side by the other, so the rule
set is written once, here, and nowhere else. An identity the search relies on is only as
good as its proof: :func:`check_identity` evaluates both sides' Taylor jets in Arb ball
arithmetic (:mod:`harness.reference.balls`, the reference's own code), the value and
every derivative to order 4, at seeded points of the domain, and names each point where
the two sides' balls are apart. A wrong identity is a failing test, never a silent bad
repair. Equal as functions, the two sides differ as programs: which side is accurate in
which dtype is for the judging to say, not for this table.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

__all__ = ["IDENTITIES", "Identity", "IdentityCheck", "check_identity", "parsed"]

#: The smallest magnitude sampled on either side of 0 (an interval across 0 is sampled on
#: both sides, log-uniformly in magnitude; 0 itself is a kink of some identities).
_TINY = 1e-8


@dataclass(frozen=True)
class Identity:
    """``lhs == rhs`` for every point of ``domain`` (each variable's closed interval)."""

    name: str
    lhs: str
    rhs: str
    domain: Mapping[str, tuple[float, float]]
    why: str = ""
    tags: tuple[str, ...] = field(default=())

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.domain)


def _both(*names: str, lo: float = -30.0, hi: float = 30.0) -> dict[str, tuple[float, float]]:
    return {n: (lo, hi) for n in names}


def _positive(*names: str, hi: float = 1e6) -> dict[str, tuple[float, float]]:
    return {n: (_TINY, hi) for n in names}


#: The rule set. ``why``: what the rewrite buys where a float computes it.
IDENTITIES: tuple[Identity, ...] = (
    # -- algebra ----------------------------------------------------------------------
    Identity("quotient_of_square", "a / b**2", "(a / b) / b", _both("a", "b"),
             "b**2 under- or overflows where a/b and (a/b)/b do not (seed 000)", ("algebra",)),
    Identity("quotient_of_exps", "exp(a) / exp(b)", "exp(a - b)", _both("a", "b"),
             "each exp overflows alone where their ratio does not", ("algebra",)),
    Identity("product_of_exps", "exp(a) * exp(b)", "exp(a + b)", _both("a", "b"),
             "each exp over- or underflows alone where their product does not",
             ("algebra",)),
    Identity("quotient_by_logs", "exp(log(a) - log(b))", "a / b", _positive("a", "b"),
             "the division itself, without two logarithms' rounding", ("algebra",)),
    Identity("log_of_product", "log(a * b)", "log(a) + log(b)", _positive("a", "b"),
             "a*b under- or overflows where each logarithm does not", ("algebra",)),
    Identity("log_of_quotient", "log(a / b)", "log(a) - log(b)", _positive("a", "b"),
             "a/b under- or overflows where each logarithm does not", ("algebra",)),
    Identity("quotient_of_product", "a / (b * c)", "(a / b) / c", _both("a", "b", "c"),
             "b*c under- or overflows where the two quotients do not", ("algebra",)),
    Identity("share_of_sum", "a / (b + a)", "1 / (1 + b / a)", _positive("a", "b"),
             "a and b + a overflow together, b / a need not (the logistic solution's "
             "exponential form)", ("algebra",)),
    Identity("over_exp", "a / exp(u)", "a * exp(-u)", {"a": (-30.0, 30.0), "u": (-200.0, 200.0)},
             "exp(u) overflows where exp(-u) underflows to a harmless 0", ("algebra",)),
    Identity("fraction_less_one", "(a - b) / b", "a / b - 1", _both("a", "b"),
             "one division of a constant numerator", ("algebra",)),
    Identity("double_negation", "-(-x)", "x", _both("x"), "two negations are none",
             ("algebra",)),
    Identity("reciprocal", "1 / a", "reciprocal(a)", _both("a"), "one kernel", ("algebra",)),
    Identity("square", "a * a", "square(a)", _both("a"), "one kernel", ("algebra",)),
    Identity("log_of_exp", "log(exp(x))", "x", _both("x"),
             "exp(x) overflows for x > 709 in float64", ("algebra",)),
    Identity("sqrt_of_square", "sqrt(x**2)", "abs(x)", _both("x"),
             "x**2 under- or overflows", ("algebra",)),
    # -- the operator table's functions ---------------------------------------------------
    Identity("log1p", "log(1 + x)", "log1p(x)", {"x": (-0.99, 1e6)},
             "1 + x rounds away x's low bits near 0", ("functions",)),
    Identity("expm1", "exp(x) - 1", "expm1(x)", _both("x"),
             "exp(x) - 1 cancels near 0", ("functions",)),
    Identity("softplus", "log(1 + exp(x))", "softplus(x)", _both("x", lo=-200.0, hi=200.0),
             "exp(x) overflows (NaN gradients at x = 100 in float32: seed 002)", ("functions",)),
    Identity("softplus_stable", "softplus(x)", "maximum(x, 0) + log1p(exp(-abs(x)))",
             _both("x", lo=-200.0, hi=200.0),
             "the stable form, exp of a non-positive number only", ("functions",)),
    Identity("sigmoid", "1 / (1 + exp(-x))", "sigmoid(x)", _both("x", lo=-200.0, hi=200.0),
             "exp(-x) overflows for x below about -88 in float32", ("functions",)),
    Identity("sigmoid_of_exp", "exp(x) / (1 + exp(x))", "sigmoid(x)",
             _both("x", lo=-200.0, hi=200.0), "exp(x) overflows, inf/inf", ("functions",)),
    Identity("sigmoid_of_negative", "1 / (1 + exp(x))", "sigmoid(-x)",
             _both("x", lo=-200.0, hi=200.0),
             "exp(x) overflows for x above about 88 in float32 (the documented custom "
             "gradient's rule, seed 002)", ("functions",)),
    Identity("sigmoid_difference", "sigmoid(x) - sigmoid(-x)", "tanh(x / 2)", _both("x"),
             "the difference cancels near 0, where tanh(x/2) is about x/2 (softplus's "
             "third derivative)", ("functions",)),
    Identity("sigmoid_difference_negated", "sigmoid(-x) - sigmoid(x)", "-tanh(x / 2)",
             _both("x"), "the same, the other way round", ("functions",)),
    Identity("sigmoid_complement", "1 - sigmoid(x)", "sigmoid(-x)", _both("x"),
             "1 - sigmoid(x) cancels for large x", ("functions",)),
    Identity("log_sigmoid", "log(sigmoid(x))", "-softplus(-x)", _both("x", lo=-200.0, hi=200.0),
             "sigmoid(x) underflows to 0 for very negative x", ("functions",)),
    Identity("log_sigmoid_kernel", "log_sigmoid(x)", "-softplus(-x)",
             _both("x", lo=-200.0, hi=200.0), "the kernel's own definition", ("functions",)),
    Identity("tanh_by_sigmoid", "tanh(x)", "2 * sigmoid(2 * x) - 1", _both("x"),
             "an identity between kernels (not a stable rewrite near 0)", ("functions",)),
    Identity("hypot", "sqrt(x**2 + y**2)", "hypot(x, y)", _both("x", "y", lo=-1e6, hi=1e6),
             "x**2 + y**2 under- or overflows", ("functions",)),
    Identity("logaddexp", "log(exp(a) + exp(b))", "logaddexp(a, b)",
             _both("a", "b", lo=-200.0, hi=200.0), "each exp overflows", ("functions",)),
    Identity("xlogy", "x * log(y)", "xlogy(x, y)", {"x": (-30.0, 30.0), "y": (_TINY, 1e6)},
             "0 * log(0) is NaN, xlogy(0, 0) is 0", ("functions",)),
    Identity("xlog1py", "x * log1p(y)", "xlog1py(x, y)", {"x": (-30.0, 30.0), "y": (-0.99, 1e6)},
             "0 * log1p(-1) is NaN, xlog1py(0, -1) is 0", ("functions",)),
)  # fmt: skip


def parsed(identity: Identity):
    """``(lhs, rhs)`` as expression trees (raises :class:`ExpressionError` for a side that
    is not in the case language, or names a variable its domain lacks)."""
    from harness.cases import expressions as ex

    names = set(identity.names)
    return ex.parse(identity.lhs, names), ex.parse(identity.rhs, names)


@dataclass(frozen=True)
class IdentityCheck:
    """What :func:`check_identity` found: the points decided and those where the two
    sides are apart (``"x = 0.5: d^2/dx^2 lhs [..] rhs [..]"``), or undecided (a ball
    straddling a branch, a precision lost)."""

    identity: str
    decided: int
    apart: tuple[str, ...]
    undecided: tuple[str, ...]

    @property
    def holds(self) -> bool:
        return not self.apart and self.decided > 0


def sample(domain: Mapping[str, tuple[float, float]], count: int, seed: int) -> list[dict]:
    """``count`` points of ``domain`` (float64, seeded): each variable log-uniform in
    magnitude on each side of 0 its interval reaches (at least :data:`_TINY` away from
    it), half the points on each side of an interval across 0."""
    rng = np.random.default_rng(seed)
    columns = {}
    for name, (lo, hi) in domain.items():
        if not lo < hi:
            raise ValueError(f"{name}: the domain [{lo}, {hi}] is empty")
        sides = []  # (least magnitude, greatest, sign)
        if hi > 0:
            sides.append((lo if lo > 0 else _TINY, hi, 1.0))
        if lo < 0:
            sides.append((-hi if hi < 0 else _TINY, -lo, -1.0))
        values = []
        for k in range(count):
            low, high, sign = sides[k % len(sides)]
            exponent = rng.uniform(math.log(low), math.log(max(high, low)))
            values.append(sign * math.exp(exponent))
        rng.shuffle(values)
        columns[name] = values
    return [{n: columns[n][k] for n in domain} for k in range(count)]


def check_identity(
    identity: Identity, count: int = 24, order: int = 4, bits: int = 160, seed: int = 0
) -> IdentityCheck:
    """Both sides' Arb jets (each variable to ``order``, mixed partials to total
    ``order``) at ``count`` seeded points of the domain, at ``bits`` of precision; a
    coefficient whose two balls do not overlap puts the point among the apart ones, a
    pair of balls too wide to tell (a radius over 2^-(bits/2) of the jet's largest coefficient) or a side
    Arb cannot decide among the undecided."""
    from flint import arb

    from harness.operators.arb import Unsupported
    from harness.reference.balls import evaluate, working_bits
    from harness.reference.jets import JetSpace

    lhs, rhs = parsed(identity)
    names = identity.names
    space = JetSpace(names, {n: order for n in names}, order)
    points = sample(identity.domain, count, seed + zlib.crc32(identity.name.encode()))
    decided, apart, undecided = 0, [], []
    width = 2.0 ** -(bits // 2)
    with working_bits(bits):
        for point in points:
            where = ", ".join(f"{n} = {v!r}" for n, v in point.items())
            balls = {n: arb(v) for n, v in point.items()}
            try:
                left = evaluate(lhs, balls, space).c
                right = evaluate(rhs, balls, space).c
            except (Unsupported, ZeroDivisionError) as exc:
                undecided.append(f"{where}: {exc}")
                continue
            verdict = _compare(left, right, space.indices, names, width)
            if verdict is None:
                decided += 1
            elif verdict.startswith("apart: "):
                apart.append(f"{where}: {verdict[7:]}")
            else:
                undecided.append(f"{where}: {verdict}")
    return IdentityCheck(identity.name, decided, tuple(apart), tuple(undecided))


def _compare(left, right, indices, names, width: float) -> str | None:
    """``None`` where every coefficient's two balls overlap and are narrow (a radius within
    ``width`` of the jet's largest coefficient: a derivative that is 0 on one side is a
    tiny ball on the other); else ``"apart: ..."`` at the first pair apart, or why the
    point is undecided."""
    for alpha, a, b in zip(indices, left, right):
        if not (a.is_finite() and b.is_finite()):
            return f"{_partial(alpha, names)} not finite"
        if not a.overlaps(b):
            return f"apart: {_partial(alpha, names)} lhs {a.str(25, radius=False)} rhs {b.str(25, radius=False)}"
    scale = max(max(float(a.abs_upper()), float(b.abs_upper())) for a, b in zip(left, right))
    for alpha, a, b in zip(indices, left, right):
        if float((a - b).rad()) > width * max(scale, 1e-300):
            return f"{_partial(alpha, names)}: balls too wide to tell"
    return None


def _partial(alpha: tuple[int, ...], names: tuple[str, ...]) -> str:
    """``value`` or ``d^2/dx dy``-style text of a multi-index."""
    order = sum(alpha)
    if not order:
        return "value"
    denominators = " ".join(f"d{n}" + (f"^{k}" if k > 1 else "") for n, k in zip(names, alpha) if k)
    return f"d^{order}/{denominators}"
