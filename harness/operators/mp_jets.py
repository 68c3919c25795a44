"""The mpmath rules of the operators that are not one coefficient series at a point: the
kinks (``abs``, ``maximum``, ``minimum``), the functions of several arguments (``atan2``, ``hypot``,
``xlogy``, ``xlog1py``, ``pow``, ``logsumexp``, ``log_softmax``). Each takes and returns
jets (:class:`harness.reference.jets.Jet`: exact Taylor coefficients in mpmath) and uses
only their arithmetic: ``+ - *``, ``compose`` with a coefficient series, ``reciprocal``,
``switch`` (the coefficients at a switch point, NaN where no derivative exists),
``with_value`` and ``nan_derivatives``.
"""

from __future__ import annotations

from collections.abc import Callable

import mpmath

from harness.operators import mp_elementary, mp_special
from harness.operators.zero_base import power_at_zero_base

__all__ = [
    "hypot",
    "absolute",
    "atan2",
    "log_softmax",
    "logsumexp",
    "maximum",
    "minimum",
    "power",
    "xlog1py",
    "xlogy",
]

_mp = mpmath.mp


def absolute(u):
    if u.value > 0:
        return u
    if u.value < 0:
        return -u
    return u.switch(-u)


def _extremum(larger: bool) -> Callable:
    def extremum(a, b):
        if a.value == b.value:
            return a.switch(b)  # a kink unless the two agree along α's variables
        return a if (a.value > b.value) == larger else b

    return extremum


maximum = _extremum(True)
minimum = _extremum(False)


def power(left, right):
    """``left ** right``: a constant exponent by its binomial series, a variable one as
    ``exp(right log left)`` for ``left > 0``, and at ``left = 0`` the limits from above
    for a positive exponent (:mod:`harness.operators.zero_base`)."""
    total = left.space.total
    if right.is_constant():
        return left.compose(mp_elementary.power(left.value, right.value, total))
    if left.value == 0:  # the limits from above (harness.operators.zero_base)
        y0 = right.value
        if not y0 > 0:
            return left.space.constant(_mp.nan).nan_derivatives()
        return power_at_zero_base(
            left, right, lambda i: (i > y0) - (i < y0), y0 == _mp.floor(y0),
            zero=_mp.zero, one=_mp.one, nan=_mp.nan, is_zero=lambda t: t == 0,
        )  # fmt: skip
    product = right * left.compose(mp_elementary.log(left.value, total))
    return product.compose(mp_elementary.exp(product.value, total))


def atan2(v, u):
    """atan2(y, x): the derivatives of atan(y/x) (or of -atan(x/y) where |y| > |x|, so
    nothing divides by a small number); at the origin and on the branch cut (y = 0,
    x < 0: a jump from pi to -pi) no derivative exists."""
    y, x = v.value, u.value
    value = _mp.atan2(y, x)
    if (y == 0 and x <= 0) and not (u.is_constant() and v.is_constant()):
        return u.space.constant(value).nan_derivatives()
    total = u.space.total
    if abs(x) >= abs(y):
        ratio = v * u.reciprocal()
        j = ratio.compose(mp_special.atan(ratio.value, total))
    else:
        ratio = u * v.reciprocal()
        j = -ratio.compose(mp_special.atan(ratio.value, total))
    return j.with_value(value)


def _x_log(kernel: Callable, zero_at) -> Callable:
    """xlogy / xlog1py: ``x * log(y)`` (``log1p``), 0 wherever x = 0 (also where the log
    is infinite, and then its derivatives in x do not exist)."""

    def apply(u, v):
        if u.value == 0 and v.value == zero_at:
            return u.space.constant(_mp.zero).nan_derivatives()
        out = u * v.compose(kernel(v.value, u.space.total))
        return out.with_value(_mp.zero) if u.value == 0 else out

    return apply


xlogy = _x_log(mp_elementary.log, 0)
xlog1py = _x_log(mp_elementary.log1p, -1)


def logsumexp(*args):
    """log Σ exp(u_i), the exponentials taken relative to the largest value."""
    total = args[0].space.total
    top = max(a.value for a in args)
    terms = [a.compose(mp_elementary.exp(a.value - top, total)) for a in args]
    s = terms[0]
    for t in terms[1:]:
        s = s + t
    out = s.compose(mp_elementary.log(s.value, total))
    return out.with_value(top + out.value)


def log_softmax(*args):
    """The first component of log_softmax(u_1, ..., u_n): u_1 - logsumexp(u); its value
    as -log1p(Σ_{i>1} exp(u_i - u_1)), which does not cancel."""
    rest = [a.value - args[0].value for a in args[1:]]
    value = -_mp.log1p(_mp.fsum(_mp.exp(r) for r in rest))
    lse = logsumexp(*args)
    first = args[0].with_value(_mp.zero)
    return (first - lse.with_value(_mp.zero)).with_value(value)


def hypot(u, v):
    """sqrt(x² + y²) (no cancellation: the squares add); at the origin the value 0 and
    no derivative (a cone), unless both arguments are constants."""
    if u.value == 0 and v.value == 0:
        zero = u.space.constant(_mp.zero)
        return zero if (u.is_constant() and v.is_constant()) else zero.nan_derivatives()
    s = u * u + v * v
    return s.compose(mp_elementary.sqrt(s.value, u.space.total)).with_value(
        _mp.hypot(u.value, v.value)
    )
