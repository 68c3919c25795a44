"""The mpmath rules of the activation and special functions: their Taylor coefficients
``f^(k)(x)/k!`` for k = 0..n at the working precision (the elementary ones are
:mod:`harness.operators.mp_elementary`).

Each kernel computes its value directly (``erfc`` for ``1 - erf``, ``log1p`` forms for
``log_sigmoid``) and its derivatives from an exact formula or from univariate power-series
arithmetic on the derivative (``atan' = (1 + x²)^-1``: a series power by Miller's
recurrence, then integrated term by term). Where a function is defined piecewise
(``elu``, ``selu``), the two pieces' coefficients are compared at the switch point:
orders where they agree exist, the first order where they differ and every higher one
is NaN (the derivative does not exist there). The constants are the frameworks'
definitions written exactly: ``selu``'s scale and alpha from Klambauer et al. (2017) to 32
digits, ``gelu_tanh``'s 0.044715 and sqrt(2/pi) (Hendrycks and Gimpel, 2016).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import mpmath

from harness.operators import mp_elementary

__all__ = [
    "SELU_ALPHA",
    "SELU_SCALE",
    "acosh",
    "asinh",
    "atan",
    "atanh",
    "digamma",
    "elu",
    "erf",
    "erfc",
    "erfinv",
    "gelu",
    "gelu_tanh",
    "lgamma",
    "log_sigmoid",
    "mish",
    "selu",
    "series_power",
    "series_product",
    "silu",
    "softsign",
]

_mp = mpmath.mp

SELU_SCALE = "1.0507009873554804934193349852946"
SELU_ALPHA = "1.6732632423543772848170429916717"
GELU_TANH_CUBIC = "0.044715"


def _fact(k: int):
    return _mp.mpf(math.factorial(k))


def series_product(a: Sequence, b: Sequence, n: int) -> list:
    """The first ``n + 1`` coefficients of the product of two power series."""
    a = list(a[: n + 1]) + [_mp.zero] * (n + 1 - len(a))
    b = list(b[: n + 1]) + [_mp.zero] * (n + 1 - len(b))
    return [sum((a[j] * b[k - j] for j in range(k + 1)), _mp.zero) for k in range(n + 1)]


def series_power(q: Sequence, alpha, n: int) -> list:
    """The first ``n + 1`` coefficients of ``q(t)**alpha`` (q[0] > 0), by Miller's
    recurrence ``p_k = 1/(k q_0) Σ_{j=1..k} ((alpha + 1) j - k) q_j p_{k-j}``."""
    q = list(q) + [_mp.zero] * (n + 1 - len(q))
    p = [q[0] ** alpha]
    for k in range(1, n + 1):
        total = sum(((alpha + 1) * j - k) * q[j] * p[k - j] for j in range(1, k + 1))
        p.append(total / (k * q[0]))
    return p


def _compose(outer: Sequence, inner: Sequence, n: int) -> list:
    """``Σ_k outer[k] (inner(t) - inner(0))^k``, truncated at order ``n``."""
    delta = [_mp.zero, *inner[1 : n + 1]]
    out = [outer[0]] + [_mp.zero] * n
    power = [_mp.one] + [_mp.zero] * n
    for k in range(1, n + 1):
        power = series_product(power, delta, n)
        out = [o + outer[k] * p for o, p in zip(out, power)]
    return out


def _integral(value, derivative: Sequence, n: int) -> list:
    """Coefficients of f from f(x) and the series of f' at x: ``c_k = d_{k-1} / k``."""
    return [value] + [derivative[k - 1] / k for k in range(1, n + 1)]


def _nan_from(coeffs: list, order: int) -> list:
    return coeffs[:order] + [_mp.nan] * (len(coeffs) - order)


def _piecewise(x, n: int, left: Callable, right: Callable) -> list:
    """``left`` for x < 0, ``right`` for x > 0; at 0 the orders both pieces share."""
    if x < 0:
        return left(x, n)
    if x > 0:
        return right(x, n)
    a, b = left(x, n), right(x, n)
    for k, (u, v) in enumerate(zip(a, b)):
        if u != v:
            return _nan_from(b, k)
    return b


def _erf_derivatives(x, n: int, sign: int) -> list:
    """``sign · erf^(k)(x)/k!`` for k = 1..n: ``(-1)^(k-1) 2/sqrt(pi) H_{k-1}(x) e^(-x²)``."""
    g = 2 / _mp.sqrt(_mp.pi) * _mp.exp(-(x**2))
    return [sign * (-1) ** (k - 1) * _mp.hermite(k - 1, x) * g / _fact(k) for k in range(1, n + 1)]


def erf(x, n):
    return [_mp.erf(x), *_erf_derivatives(x, n, 1)]


def erfc(x, n):
    return [_mp.erfc(x), *_erf_derivatives(x, n, -1)]


def lgamma(x, n):
    """log|Γ(x)| (what every framework's lgamma returns); its derivatives are the
    polygammas ψ^(k-1)(x). At a pole (x a non-positive integer) nothing exists."""
    if x <= 0 and x == _mp.floor(x):
        return [_mp.inf] + [_mp.nan] * n
    value = _mp.loggamma(x) if x > 0 else _mp.log(abs(_mp.gamma(x)))
    return [value] + [_mp.psi(k - 1, x) / _fact(k) for k in range(1, n + 1)]


def digamma(x, n):
    if x <= 0 and x == _mp.floor(x):
        return [_mp.nan] * (n + 1)
    return [_mp.psi(k, x) / _fact(k) for k in range(n + 1)]


def _algebraic(value, q: Sequence, alpha, n: int) -> list:
    """A function whose derivative is ``q(t)**alpha`` (q a polynomial in t = x - x0)."""
    return _integral(value, series_power(q, alpha, max(n - 1, 0)), n)


def atan(x, n):
    return _algebraic(_mp.atan(x), [1 + x**2, 2 * x, 1], -1, n)


def asinh(x, n):
    return _algebraic(_mp.asinh(x), [1 + x**2, 2 * x, 1], _mp.mpf(-0.5), n)


def acosh(x, n):
    if x < 1:
        return [_mp.nan] * (n + 1)
    if x == 1:
        return [_mp.zero] + [_mp.nan] * n
    return _algebraic(_mp.acosh(x), [(x - 1) * (x + 1), 2 * x, 1], _mp.mpf(-0.5), n)


def atanh(x, n):
    if abs(x) > 1:
        return [_mp.nan] * (n + 1)
    if abs(x) == 1:
        return [_mp.inf * x] + [_mp.nan] * n
    return _algebraic(_mp.atanh(x), [(1 - x) * (1 + x), -2 * x, -1], -1, n)


def _identity(x, n):
    return [x, _mp.one] + [_mp.zero] * (n - 1) if n else [x]


def elu(x, n):
    return _piecewise(x, n, mp_elementary.expm1, _identity)


def selu(x, n):
    scale, alpha = _mp.mpf(SELU_SCALE), _mp.mpf(SELU_ALPHA)
    return _piecewise(
        x,
        n,
        lambda v, m: [scale * alpha * c for c in mp_elementary.expm1(v, m)],
        lambda v, m: [scale * c for c in _identity(v, m)],
    )


def gelu(x, n):
    """x Φ(x), Φ(x) = erfc(-x/√2)/2 (no cancellation for x very negative)."""
    r = 1 / _mp.sqrt(2)
    phi = [c * (-r) ** k / 2 for k, c in enumerate(erfc(-x * r, n))]
    return series_product([x, _mp.one], phi, n)


def gelu_tanh(x, n):
    """x (1 + tanh(z))/2 = x σ(2z), z = sqrt(2/pi) (x + 0.044715 x³)."""
    c = 2 * _mp.sqrt(2 / _mp.pi)
    cubic = _mp.mpf(GELU_TANH_CUBIC)
    # 2z as a polynomial in t = x' - x, its coefficients exactly.
    inner = [c * (x + cubic * x**3), c * (1 + 3 * cubic * x**2), c * 3 * cubic * x, c * cubic]
    inner = (inner + [_mp.zero] * (n + 1))[: n + 1]
    sig = _compose(mp_elementary.sigmoid(inner[0], n), inner, n)
    return series_product([x, _mp.one], sig, n)


def log_sigmoid(x, n):
    """-softplus(-x): the coefficients of softplus at -x, signs flipped by order."""
    return [-((-1) ** k) * c for k, c in enumerate(mp_elementary.softplus(-x, n))]


def silu(x, n):
    """x σ(x)."""
    return series_product([x, _mp.one], mp_elementary.sigmoid(x, n), n)


def mish(x, n):
    """x tanh(softplus(x))."""
    sp = mp_elementary.softplus(x, n)
    inner = _compose(mp_elementary.tanh(sp[0], n), sp, n)
    return series_product([x, _mp.one], inner, n)


def softsign(x, n):
    """x / (1 + |x|): ``1 - 1/(1 + x)`` right of 0, ``1/(1 - x) - 1`` left of it."""

    def right(v, m):
        return [v / (1 + v)] + [-((-1) ** k) / (1 + v) ** (k + 1) for k in range(1, m + 1)]

    def left(v, m):
        return [v / (1 - v)] + [1 / (1 - v) ** (k + 1) for k in range(1, m + 1)]

    return _piecewise(x, n, left, right)


def erfinv(x, n):
    """The inverse of erf on (-1, 1): its derivative is ``(√π/2) exp(y²)``, so each
    coefficient follows from the ones before (``y_{k+1} = (√π/2) [exp(y²)]_k / (k+1)``)."""
    if abs(x) > 1:
        return [_mp.nan] * (n + 1)
    if abs(x) == 1:
        return [_mp.inf * x] + [_mp.nan] * n
    y = [_mp.erfinv(x)]
    half_root_pi = _mp.sqrt(_mp.pi) / 2
    for k in range(n):
        square = series_product(y, y, k)
        e = _compose(mp_elementary.exp(square[0], k), square, k)
        y.append(half_root_pi * e[k] / (k + 1))
    return y
