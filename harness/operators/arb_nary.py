"""The Arb rules of the functions of several arguments that are not a kink or a power:
``atan2``, ``xlogy``, ``xlog1py``, ``logsumexp`` and ``log_softmax``, each twice, as in
:mod:`harness.operators.arb`: on multivariate ball jets (``*_jet``, through their
arithmetic, ``compose``, ``with_value`` and ``nan_derivatives``) and on one-variable series
(``*_line``, the fast path, which raises :class:`~harness.operators.arb.Generic` to leave
an exact special point to the jets). They follow the mpmath rules
(:mod:`harness.operators.mp_jets`) case for case.
"""

from __future__ import annotations

from collections.abc import Callable

from flint import arb, arb_series

from harness.operators.arb import (
    Generic,
    Unsupported,
    coefficients,
    log,
    log1p,
    require_nonzero,
    series_value,
    sqrt,
)

__all__ = [
    "hypot_jet",
    "hypot_line",
    "atan2_jet",
    "atan2_line",
    "log_softmax_jet",
    "log_softmax_line",
    "logsumexp_jet",
    "logsumexp_line",
    "xlog1py_jet",
    "xlog1py_line",
    "xlogy_jet",
    "xlogy_line",
]


def _with_value(s, value):
    """The series ``s`` with its constant term replaced (a zero series has no terms)."""
    c = list(s.coeffs()) or [arb(0)]
    c[0] = value
    return arb_series(c, prec=s.prec)


def _atan(s, x0):
    return s.atan()


def _exp(s, x0):
    return s.exp()


def _on_the_cut(y, x) -> bool:
    """(y, x) on atan2's branch cut (y = 0, x <= 0) or at the origin, exactly; raises where
    a ball cannot tell."""
    if y.is_zero():
        if x <= 0:
            return True
        if not x > 0:
            raise Unsupported(f"atan2 at y = 0 and a ball x that straddles 0 ({x.str(5)})")
        return False
    if not (y > 0 or y < 0) and not x > 0:
        raise Unsupported(f"atan2 at a ball y that straddles its branch cut ({y.str(5)})")
    return False


def atan2_jet(v, u):
    """atan2(y, x): the derivatives of atan(y/x), or of -atan(x/y) where |y| > |x|; none on
    the branch cut (y = 0, x <= 0) unless both are constants."""
    y, x = v.value, u.value
    if _on_the_cut(y, x):
        value = arb(0) if x.is_zero() else arb.pi()
        base = type(u).constant(u.space, value)
        return base if (u.is_constant() and v.is_constant()) else base.nan_derivatives()
    n = u.space.total
    if abs(x.mid()) >= abs(y.mid()):
        ratio = v * u.reciprocal()
        j = ratio.compose(coefficients(_atan, None, ratio.value, n))
    else:
        ratio = u * v.reciprocal()
        j = -ratio.compose(coefficients(_atan, None, ratio.value, n))
    return j.with_value(arb.atan2(y, x))


def atan2_line(b, a):
    y, x = series_value(b), series_value(a)
    if _on_the_cut(y, x):
        raise Generic
    if abs(x.mid()) >= abs(y.mid()):
        require_nonzero(x, "atan2: a division by x")
        out = (b / a).atan()
    else:
        require_nonzero(y, "atan2: a division by y")
        out = -(a / b).atan()
    return _with_value(out, arb.atan2(y, x))


def _x_log(kernel: Callable, pole: int, what: str) -> tuple[Callable, Callable]:
    """xlogy / xlog1py: ``x log(y)`` (``log1p``), 0 wherever x = 0; where x = 0 and the
    logarithm has no value (y <= 0, y <= -1) the value 0 and no derivative."""

    def jet(u, v):
        x0, y0 = u.value, v.value
        if x0.is_zero() and not y0 - pole > 0:
            if y0 - pole <= 0:
                return type(u).constant(u.space, arb(0)).nan_derivatives()
            raise Unsupported(f"{what} at x = 0 and a ball y that straddles {pole}")
        out = u * v.compose(coefficients(kernel, None, y0, u.space.total))
        return out.with_value(arb(0)) if x0.is_zero() else out

    def line(a, b):
        if series_value(a).is_zero():
            raise Generic  # the exact value 0 (and maybe no derivative): the jets'
        return a * kernel(b, series_value(b))

    return jet, line


xlogy_jet, xlogy_line = _x_log(log, 0, "xlogy")
xlog1py_jet, xlog1py_line = _x_log(log1p, -1, "xlog1py")


def _shift(values) -> arb:
    """An exact number near the largest value: log Σ exp(u_i) = c + log Σ exp(u_i - c) for
    any c, so no comparison of balls is needed, and no term overflows."""
    return arb(max((v.mid() for v in values), key=float))


def logsumexp_jet(*args):
    n = args[0].space.total
    c = _shift(a.value for a in args)
    total = None
    for a in args:
        term = a.compose(coefficients(_exp, None, a.value - c, n))
        total = term if total is None else total + term
    out = total.compose(coefficients(log, None, total.value, n))
    return out.with_value(c + out.value)


def logsumexp_line(*args):
    c = _shift(series_value(a) for a in args)
    total = None
    for a in args:
        term = (a - c).exp()
        total = term if total is None else total + term
    return c + log(total, series_value(total))


def _softmax_value(values: list) -> arb:
    """log_softmax's first component as -log1p(Σ_{i>1} exp(u_i - u_1)): no cancellation."""
    rest = arb(0)
    for v in values[1:]:
        rest += (v - values[0]).exp()
    return -rest.log1p()


def log_softmax_jet(*args):
    value = _softmax_value([a.value for a in args])
    return (args[0] - logsumexp_jet(*args)).with_value(value)


def log_softmax_line(*args):
    out = args[0] - logsumexp_line(*args)
    return _with_value(out, _softmax_value([series_value(a) for a in args]))


def hypot_jet(u, v):
    """sqrt(x² + y²), as :func:`harness.operators.mp_jets.hypot`."""
    x, y = u.value, v.value
    if x.is_zero() and y.is_zero():
        zero = type(u).constant(u.space, arb(0))
        return zero if (u.is_constant() and v.is_constant()) else zero.nan_derivatives()
    s = u * u + v * v
    return s.compose(coefficients(sqrt, None, s.value, u.space.total))


def hypot_line(a, b):
    if series_value(a).is_zero() and series_value(b).is_zero():
        raise Generic  # the origin: the jets'
    s = a * a + b * b
    return sqrt(s, series_value(s))
