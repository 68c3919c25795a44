"""The Arb rules of the inverse hyperbolics, the gamma functions and the activations that
are not one elementary series (python-flint balls), in the form of
:mod:`harness.operators.arb`: ``series(s, x0)`` gives the series of ``f(s)`` from the series
``s`` of the argument, ``x0`` its constant term.

Most are ``f(s) = f(x0) + ∫ f'(s) s' dt`` (:func:`integrated`): the value from Arb's own
function at the point (accurate where a series' constant term would cancel), the
derivatives from ``f'``, an algebraic form that does not cancel. ``log|Γ|`` left of 0 is
the reflection ``log π − log|sin πx| − log Γ(1 − x)``; ``ψ`` is its derivative. At a
kink (``elu`` and ``selu`` at 0, ``acosh`` at 1) the exact coefficients are given, NaN
from the first order that does not exist.
"""

from __future__ import annotations

from collections.abc import Callable

from flint import arb, arb_series, ctx

from harness.operators.arb import Undefined, Unsupported, require_positive, sigmoid
from harness.operators.mp_special import GELU_TANH_CUBIC, SELU_ALPHA, SELU_SCALE

__all__ = [
    "acosh",
    "acosh_at_one",
    "asinh",
    "atanh",
    "digamma",
    "elu",
    "elu_at_zero",
    "elu_value",
    "erfinv",
    "gelu",
    "gelu_tanh",
    "lgamma",
    "selu",
    "selu_at_zero",
    "selu_value",
    "sinc",
]


def integrated(value: Callable, slope: Callable) -> Callable:
    """The series rule ``f(x0) + ∫ f'(s) s' dt`` from ``value(x0)`` and ``slope(s, x0)``."""

    def series(s, x0):
        return value(x0) + (slope(s, x0) * s.derivative()).integral()

    return series


def _acosh_slope(s, x0):
    require_positive(x0 - 1, "acosh's slope 1/sqrt(x² - 1): x - 1")
    return ((s - 1) * (s + 1)).rsqrt()


def _atanh_slope(s, x0):
    require_positive((1 - x0) * (1 + x0), "atanh: 1 - x²")
    return 1 / ((1 - s) * (1 + s))


asinh = integrated(lambda x0: x0.asinh(), lambda s, x0: (1 + s * s).rsqrt())
acosh = integrated(lambda x0: x0.acosh(), _acosh_slope)
atanh = integrated(lambda x0: x0.atanh(), _atanh_slope)


def acosh_at_one(x0, n: int) -> list | None:
    """acosh(1) = 0, and no derivative (the slope 1/sqrt(x² - 1) is infinite there)."""
    return [arb(0)] + [arb.nan()] * n if x0 == 1 else None


def _sides(x0, what: str) -> bool:
    """Whether ``x0`` is right of the kink at 0 (certainly); raises on a straddling ball."""
    if x0 > 0:
        return True
    if x0 < 0:
        return False
    raise Unsupported(f"{what} at a ball that straddles its kink at 0 ({x0.str(5)})")


def elu(s, x0):
    return s if _sides(x0, "elu") else s.exp() - 1


def selu(s, x0):
    scale = arb(SELU_SCALE)
    return scale * s if _sides(x0, "selu") else scale * arb(SELU_ALPHA) * (s.exp() - 1)


def elu_value(x0):
    """The value: ``expm1`` left of 0 (the series' ``exp - 1`` cancels near 0)."""
    return x0.expm1() if x0 < 0 else x0


def selu_value(x0):
    scale = arb(SELU_SCALE)
    return scale * arb(SELU_ALPHA) * x0.expm1() if x0 < 0 else scale * x0


def elu_at_zero(x0, n: int) -> list | None:
    """At 0 both pieces are ``0 + t`` to first order (expm1: ``t + t²/2``, the identity:
    ``t``): the value and slope exist, the second derivative and beyond do not."""
    return ([arb(0), arb(1)] + [arb.nan()] * n)[: n + 1] if x0.is_zero() else None


def selu_at_zero(x0, n: int) -> list | None:
    """At 0 the pieces' slopes differ (scale·alpha against scale): the value only."""
    return [arb(0)] + [arb.nan()] * n if x0.is_zero() else None


def gelu(s, x0):
    """x Φ(x) = x erfc(-x/√2)/2 (no cancellation for x very negative)."""
    return s * (-s / arb(2).sqrt()).erfc() / 2


def gelu_tanh(s, x0):
    """x (1 + tanh z)/2 = x σ(2z), z = sqrt(2/π) (x + 0.044715 x³)."""
    inner = 2 * (2 / arb.pi()).sqrt() * (s + arb(GELU_TANH_CUBIC) * s * s * s)
    c = inner.coeffs()
    return s * sigmoid(inner, c[0] if c else arb(0))


def _off_the_poles(x0, what: str) -> None:
    """Γ has poles at 0, -1, -2, ...: there ``what`` has no value."""
    if x0 > 0:
        return
    if x0.is_exact() and x0.is_integer():
        raise Undefined(f"not defined here: {what} at a pole of Γ ({x0.str(5)})")
    if x0.contains_integer():
        raise Unsupported(f"{what} at a ball that holds a pole of Γ ({x0.str(5)})")


def lgamma(s, x0):
    """log|Γ(s)|: Arb's log Γ right of 0; left of it the reflection
    ``log π − log|sin πs| − log Γ(1 − s)``."""
    _off_the_poles(x0, "lgamma")
    if x0 > 0:
        return s.lgamma()
    sine = s.sin_pi()
    c = sine.coeffs()[0]
    if not (c > 0 or c < 0):
        raise Unsupported(f"lgamma: the sign of sin(πx) at {x0.str(5)}")
    return arb.pi().log() - (sine if c > 0 else -sine).log() - (1 - s).lgamma()


def _composed(coeffs: list, s, x0):
    """``Σ_k coeffs[k] (s - x0)^k`` by Horner's rule (truncated as ``s`` is)."""
    d = s - x0
    out = arb_series([coeffs[-1]], prec=s.prec)
    for c in reversed(coeffs[:-1]):
        out = out * d + c
    return out


def digamma(s, x0):
    """ψ = (log|Γ|)': the coefficients of log|Γ(x0 + h)| one order further, differentiated,
    composed with ``s - x0``."""
    _off_the_poles(x0, "digamma")
    n = s.prec
    log_gamma = lgamma(arb_series([x0, 1], prec=n + 1), x0)
    coeffs = list(log_gamma.derivative().coeffs()) + [arb(0)] * n
    return _composed(coeffs[:n], s, x0)


def _sinc_near_zero(x0, n: int) -> list:
    """The coefficients at x0 (|x0| < 1/2) of sin(πx)/(πx) from its series at 0,
    ``Σ_m a_m x^{2m}``, ``a_m = (-1)^m π^{2m}/(2m+1)!``, each summed until the terms are
    below the precision and closed by a ball for the tail: from m > k + 5 each term is
    less than half the one before (|πx0|² <= 2.47 against (2m+1-k)(2m+2-k) >= 56), so the
    tail is at most twice the first term left out."""
    pi2, bound = arb.pi() ** 2, x0.abs_upper()
    tiny = arb(2) ** (-ctx.prec - 20)
    out = []
    for k in range(n + 1):
        total, m = arb(0), (k + 1) // 2
        a = (-1) ** m * pi2**m / arb.fac_ui(2 * m + 1)
        while True:
            total += a * arb.bin_uiui(2 * m, k) * (x0 ** (2 * m - k) if 2 * m > k else 1)
            if x0.is_zero():
                break
            m += 1
            a = -a * pi2 / ((2 * m) * (2 * m + 1))
            left_out = abs(a) * arb.bin_uiui(2 * m, k) * arb(bound) ** (2 * m - k)
            if m > k + 5 and left_out < tiny * abs(total):
                total += arb(0, 2 * left_out.upper())
                break
        out.append(total)
    return out


def sinc(s, x0):
    """The normalised sinc, sin(πx)/(πx): near 0 by its series there (no cancellation),
    elsewhere as the quotient."""
    if x0.abs_upper() < 0.5:
        coeffs = _sinc_near_zero(x0, s.prec - 1)
        return _composed(coeffs, s, x0)
    return s.sin_pi() / (arb.pi() * s)


def erfinv(s, x0):
    """erf's inverse: ``y0 + w(s - x0)``, ``w`` the series inverse (reversion) of
    ``erf(y0 + u) - erf(y0)`` in ``u``. Its constant term is exactly 0 for the true y0,
    and the other coefficients are evaluated over the ball y0, which holds it, so the
    inverse's balls hold the true coefficients."""
    require_positive((1 - x0) * (1 + x0), "erfinv: 1 - x²")
    y0 = x0.erfinv()
    n = s.prec
    if n <= 1:  # the value alone
        return arb_series([y0], prec=n)
    forward = list(arb_series([y0, 1], prec=n).erf().coeffs()) + [arb(0)] * n
    if not forward[1] > 0:  # erf'(y0) = 2/√π exp(-y0²): a ball that does not exclude 0
        raise Unsupported(f"erfinv at {x0.str(5)}: erf's slope at {y0.str(5)} is not certain")
    w = arb_series([arb(0), *forward[1:n]], prec=n).reversion()
    coeffs = list(w.coeffs()) + [arb(0)] * n
    return y0 + _composed([arb(0), *coeffs[1:n]], s, x0)
