"""The Arb rules of the operators (python-flint balls): what the certified reference
(:mod:`harness.reference.balls`, :mod:`harness.reference.series`) composes.

A one-argument function is a series rule: from the power series ``s = x0 + t`` (an
``arb_series``) and the point ``x0`` it gives the series of ``f(x0 + t)``, in a form that
does not cancel where it can be avoided (a wide ball where it cannot, never a wrong one),
and where the series' constant term would lose digits a separate rule for the value
``f(x0)``. The kinks and the power are written twice: on multivariate ball jets
(:class:`harness.reference.balls.BallJet`, through its ``compose``, ``switch`` and
arithmetic) and on one-variable series (the fast path), which raises :class:`Generic` to
leave an exact switch point to the jets.

What a ball cannot decide raises :class:`Unsupported` with the reason (a branch whose
condition's ball straddles the switch, a division by a ball that contains 0); what has no
value at all raises :class:`Undefined`.
"""

from __future__ import annotations

from collections.abc import Callable

from flint import arb, arb_series

from harness.operators.zero_base import power_at_zero_base

__all__ = [
    "NOTES",
    "ONE_SIDED",
    "Generic",
    "Undefined",
    "Unsupported",
    "absolute_jet",
    "absolute_line",
    "coefficients",
    "exp2",
    "log",
    "log1p",
    "log2",
    "log_sigmoid",
    "maximum_jet",
    "maximum_line",
    "minimum_jet",
    "minimum_line",
    "mish",
    "power_jet",
    "power_line",
    "reciprocal",
    "require_nonzero",
    "require_positive",
    "rsqrt",
    "series_value",
    "sigmoid",
    "silu",
    "softplus",
    "softplus_value",
    "softsign",
    "softsign_at_zero",
    "sqrt",
    "tanh",
    "take_notes",
    "tanh_at_zero",
]


class Unsupported(Exception):
    """The ball arithmetic cannot decide this expression at this point."""


class Undefined(Unsupported):
    """The expression certainly has no value here (a division by exactly 0, a logarithm
    of exactly 0 or less): no precision would change that."""


#: What the rules of one evaluation had to say of it beside its value (read and cleared by
#: :func:`take_notes`): a real power's derivatives in a zero base are one-sided.
NOTES: list[str] = []
ONE_SIDED = "one-sided: a real power's derivatives at a zero base are limits from above"


def take_notes() -> str:
    """The notes of the evaluations since the last call, each once, and clear them."""
    out = "; ".join(dict.fromkeys(NOTES))
    NOTES.clear()
    return out


class Generic(Exception):
    """A point the one-variable series path leaves to the general ball jets."""


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


def coefficients(series: Callable, value: Callable | None, x0, n: int) -> list:
    """``f^(k)(x0)/k!`` for k = 0..n as balls, from a series rule (and a value rule)."""
    coeffs = list(series(arb_series([x0, 1], prec=n + 1), x0).coeffs())
    coeffs += [arb(0)] * (n + 1 - len(coeffs))
    if value is not None:
        coeffs[0] = value(x0)
    return coeffs


def sigmoid(s, x0):
    if x0 >= 0:
        return 1 / (1 + (-s).exp())
    if x0 < 0:
        e = s.exp()
        return e / (1 + e)
    raise Unsupported("sigmoid at a ball that straddles 0")


def softplus(s, x0):
    if x0 >= 0:
        return s + (1 + (-s).exp()).log()
    if x0 < 0:
        return (1 + s.exp()).log()
    raise Unsupported("softplus at a ball that straddles 0")


def softplus_value(x0):
    """softplus(x0) to a relative (not absolute) error where it is tiny (x0 << 0)."""
    if x0 < 0:
        return x0.exp().log1p()
    return x0 + (-x0).exp().log1p()


def log_sigmoid(s, x0):
    return -softplus(-s, -x0)


def tanh(s, x0):
    require_nonzero(x0, "tanh")  # tanh(0) = 0 is handled exactly by tanh_at_zero
    if x0 > 0:
        e = (-2 * s).exp()
        return (1 - e) / (1 + e)
    e = (2 * s).exp()
    return (e - 1) / (e + 1)


def tanh_at_zero(x0, n: int) -> list | None:
    """tanh is odd: at exactly 0 its even coefficients vanish (t - t^3/3 + 2 t^5/15 ...),
    exactly; the odd ones from (e^2t - 1)/(e^2t + 1), to any order (the finite-difference
    model asks for orders beyond 4)."""
    if not x0.is_zero():
        return None
    e = (2 * arb_series([0, 1], prec=n + 1)).exp()
    odd = list(((e - 1) / (e + 1)).coeffs()) + [arb(0)] * (n + 1)
    return [arb(1) if k == 1 else odd[k] if k % 2 else arb(0) for k in range(n + 1)]


def log(s, x0):
    require_positive(x0, "log")
    return s.log()


def log1p(s, x0):
    require_positive(1 + x0, "log1p")
    return (1 + s).log()


def sqrt(s, x0):
    require_positive(x0, "sqrt")
    return s.sqrt()


def _exp(s, x0):
    return s.exp()


def power_jet(left, right):
    """``left ** right`` on ball jets: an exact integer exponent by series powers, any
    other as ``exp(right log left)``, for a certainly positive base."""
    n = left.space.total
    if right.is_constant() and right.value.is_exact() and right.value.is_integer():
        c = int(right.value.unique_fmpz())
        if c < 0:
            require_nonzero(left.value, "a negative power")
        series = arb_series([left.value, 1], prec=n + 1) ** c
        coeffs = list(series.coeffs()) + [arb(0)] * (n + 1)
        return left.compose(coeffs[: n + 1])
    if left.value.is_zero():
        return _power_at_zero(left, right)
    require_positive(left.value, "a real power")
    product = right * left.compose(coefficients(log, None, left.value, n))
    return product.compose(coefficients(_exp, None, product.value, n))


def _power_at_zero(left, right):
    """``left ** right`` at a base of exactly 0: the limits from above for a positive
    exponent (:mod:`harness.operators.zero_base`); none for 0 or a negative one."""
    y0 = right.value
    if not y0 > 0:
        if y0 <= 0:
            raise Undefined(f"not defined here: 0 to the power {y0.str(5)}, not positive")
        raise Unsupported(f"a power of 0 whose exponent's ball straddles 0 ({y0.str(5)})")

    def compare(i: int) -> int:
        d = i - y0
        if d.is_zero():
            return 0
        if d > 0 or d < 0:
            return 1 if d > 0 else -1
        raise Unsupported(f"a power of 0 whose exponent's ball holds {i} ({y0.str(5)})")

    integer = y0.is_exact() and y0.is_integer()
    if not left.is_constant():
        NOTES.append(ONE_SIDED)
    return power_at_zero_base(
        left, right, compare, integer, zero=arb(0), one=arb(1), nan=arb.nan(),
        is_zero=lambda t: t.is_zero(),
    )  # fmt: skip


def series_value(s: arb_series):
    """The constant term of a one-variable series (0 for the empty series)."""
    c = s.coeffs()
    return c[0] if c else arb(0)


def power_line(a, b):
    """``a ** b`` on one-variable series (as :func:`power_jet`)."""
    c = b.coeffs()
    exponent = c[0] if c else arb(0)
    constant = all(x.is_zero() for x in c[1:])
    if constant and exponent.is_exact() and exponent.is_integer():
        k = int(exponent.unique_fmpz())
        if k < 0:
            require_nonzero(series_value(a), "a negative power")
        return a**k
    if series_value(a).is_zero():
        raise Generic  # a zero base: the ball jets' one-sided limits
    require_positive(series_value(a), "a real power")
    return (b * a.log()).exp()


def absolute_jet(u):
    if u.value.is_zero():
        return u.switch(-u)
    require_nonzero(u.value, "abs")
    return u if u.value > 0 else -u


def _extremum_jet(larger: bool, name: str) -> Callable:
    def extremum(a, b):
        d = a.value - b.value
        if d.is_zero():
            return a.switch(b)
        require_nonzero(d, name)
        return a if (d > 0) == larger else b

    return extremum


maximum_jet = _extremum_jet(True, "maximum")
minimum_jet = _extremum_jet(False, "minimum")


def _decided(d) -> None:
    if not (d > 0 or d < 0):
        raise Generic


def absolute_line(a):
    d = series_value(a)
    _decided(d)
    return a if d > 0 else -a


def _extremum_line(larger: bool) -> Callable:
    def extremum(a, b):
        d = series_value(a) - series_value(b)
        _decided(d)
        return a if (d > 0) == larger else b

    return extremum


maximum_line = _extremum_line(True)
minimum_line = _extremum_line(False)


def exp2(s, x0):
    return (s * arb(2).log()).exp()


def log2(s, x0):
    return log(s, x0) / arb(2).log()


def reciprocal(s, x0):
    require_nonzero(x0, "reciprocal")
    return 1 / s


def rsqrt(s, x0):
    require_positive(x0, "rsqrt")
    return s.rsqrt()


def silu(s, x0):
    return s * sigmoid(s, x0)


def mish(s, x0):
    """x tanh(softplus(x)), the softplus's value relative-accurate where it is tiny."""
    inner = softplus(s, x0)
    c = list(inner.coeffs()) or [arb(0)]
    c[0] = softplus_value(x0)
    inner = arb_series(c, prec=s.prec)
    return s * tanh(inner, c[0])


def softsign(s, x0):
    if x0 > 0:
        return s / (1 + s)
    if x0 < 0:
        return s / (1 - s)
    raise Unsupported(f"softsign at a ball that straddles its kink at 0 ({x0.str(5)})")


def softsign_at_zero(x0, n: int) -> list | None:
    """At 0 the pieces x/(1 - x) and x/(1 + x) share f and f' (0, 1), not f'' (2, -2)."""
    return ([arb(0), arb(1)] + [arb.nan()] * n)[: n + 1] if x0.is_zero() else None
