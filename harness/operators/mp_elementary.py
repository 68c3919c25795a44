"""The mpmath rules of the elementary functions: their Taylor coefficients
``f^(k)(x)/k!`` for k = 0..n at the working precision, computed without cancellation where
a formula allows (see :mod:`harness.reference.jets`). The operator table
(:mod:`harness.operators.table`) names each one; :func:`exp`, :func:`log` and
:func:`power` also serve the ``**`` operator."""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import mpmath

__all__ = [
    "cos",
    "cosh",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log1p",
    "log2",
    "power",
    "reciprocal",
    "rsqrt",
    "sigmoid",
    "sin",
    "sinc",
    "sinh",
    "softplus",
    "sqrt",
    "square",
    "tan",
    "tanh",
]

_mp = mpmath.mp


def _fact(k: int):
    return _mp.mpf(math.factorial(k))


#: Binary digits of the largest argument an exponential may take: e**(2**65536) is beyond
#: every float format by far and still cheap; a larger argument only comes from nested
#: exponentials (exp(exp(exp(exp(3))))), whose evaluation would need ln 2 to as many bits
#: as the argument's magnitude and never finish.
_MAX_EXP_ARGUMENT_BITS = 2**16


def _exponent_guard(x, name: str) -> None:
    sign, man, exp_, bc = x._mpf_
    if man and exp_ + bc > _MAX_EXP_ARGUMENT_BITS:
        raise OverflowError(
            f"{name} of a number beyond 2**{_MAX_EXP_ARGUMENT_BITS} in magnitude "
            f"(2**{exp_ + bc}): beyond the reference's exponent range (and every float format's)"
        )


def exp(x, n):
    """Coefficients of ``exp`` at ``x``, orders 0..n."""
    _exponent_guard(x, "exp")
    e = _mp.exp(x)
    return [e / _fact(k) for k in range(n + 1)]


def expm1(x, n):
    c = exp(x, n)
    c[0] = _mp.expm1(x)
    return c


def log(x, n):
    """Coefficients of ``log`` at ``x``, orders 0..n (NaN where it has none)."""
    if x < 0:
        return [_mp.nan] * (n + 1)
    if x == 0:
        return [_mp.ninf] + [_mp.nan] * n
    out = [_mp.log(x)]
    for k in range(1, n + 1):
        out.append((-1) ** (k + 1) / (k * x**k))
    return out


def log1p(x, n):
    if x < -1:
        return [_mp.nan] * (n + 1)
    if x == -1:
        return [_mp.ninf] + [_mp.nan] * n
    y = 1 + x
    out = [_mp.log1p(x)]
    for k in range(1, n + 1):
        out.append((-1) ** (k + 1) / (k * y**k))
    return out


#: log2 of the largest magnitude a power may reach before it is refused: far beyond every
#: float format, and small enough that mpmath's binary exponent stays a small integer
#: (``9**9**9**9`` would need an exponent of 10**369693099 and never finish).
_MAX_LOG2 = 2**40


def power(x, c, n):
    """Coefficients of ``x**c`` for a constant exponent ``c``."""
    if x != 0 and abs(c) > 1 and abs(c) * abs(_mp.log(abs(x), 2)) > _MAX_LOG2:
        raise OverflowError(
            f"a power of magnitude 2**({_mp.nstr(c * _mp.log(abs(x), 2), 3)}) is beyond "
            "the reference's exponent range (and every float format's)"
        )
    out = []
    integer = c == _mp.floor(c)
    if x < 0 and not integer:
        return [_mp.nan] * (n + 1)
    for k in range(n + 1):
        b = _mp.binomial(c, k)
        if b == 0:
            out.append(_mp.zero)
        elif x == 0 and c - k < 0:
            out.append(_mp.nan if k > 0 else (_mp.inf if integer or c < 0 else _mp.nan))
        elif x == 0:
            out.append(b if c - k == 0 else _mp.zero)
        elif integer:
            out.append(b * x ** int(c - k))
        else:
            out.append(b * _mp.power(x, c - k))
    return out


def sqrt(x, n):
    if x < 0:
        return [_mp.nan] * (n + 1)
    if x == 0:
        return [_mp.zero] + [_mp.nan] * n
    return power(x, _mp.mpf(1) / 2, n)


def sin(x, n):
    s, c = _mp.sin(x), _mp.cos(x)
    cycle = [s, c, -s, -c]
    return [cycle[k % 4] / _fact(k) for k in range(n + 1)]


def cos(x, n):
    s, c = _mp.sin(x), _mp.cos(x)
    cycle = [c, -s, -c, s]
    return [cycle[k % 4] / _fact(k) for k in range(n + 1)]


def sinh(x, n):
    _exponent_guard(x, "sinh")
    s, c = _mp.sinh(x), _mp.cosh(x)
    return [(s if k % 2 == 0 else c) / _fact(k) for k in range(n + 1)]


def cosh(x, n):
    _exponent_guard(x, "cosh")
    s, c = _mp.sinh(x), _mp.cosh(x)
    return [(c if k % 2 == 0 else s) / _fact(k) for k in range(n + 1)]


@cache
def _tan_polynomials(n: int) -> tuple[tuple[int, ...], ...]:
    """Integer coefficients of P_k(t) with tan^(k) x = P_k(tan x); P_{k+1} = (1+t²) P_k'."""
    polys = [(0, 1)]
    for _ in range(n):
        p = polys[-1]
        d = [i * p[i] for i in range(1, len(p))] or [0]
        nxt = [0] * (len(d) + 2)
        for i, a in enumerate(d):
            nxt[i] += a
            nxt[i + 2] += a
        polys.append(tuple(nxt))
    return tuple(polys)


def tan(x, n):
    t = _mp.tan(x)
    out = [t]
    for k, poly in enumerate(_tan_polynomials(n)[1:], start=1):
        out.append(sum((a * t**i for i, a in enumerate(poly) if a), _mp.zero) / _fact(k))
    return out


@cache
def _sigmoid_polynomials(n: int) -> tuple[dict[tuple[int, int], int], ...]:
    """σ^(k) = Σ c_ij σ^i σ̄^j with σ̄ = σ(-x); d(σ^i σ̄^j) = i σ^i σ̄^(j+1) - j σ^(i+1) σ̄^j."""
    polys = [{(1, 0): 1}]
    for _ in range(n):
        nxt: dict[tuple[int, int], int] = {}
        for (i, j), c in polys[-1].items():
            if i:
                nxt[(i, j + 1)] = nxt.get((i, j + 1), 0) + c * i
            if j:
                nxt[(i + 1, j)] = nxt.get((i + 1, j), 0) - c * j
        polys.append({k: v for k, v in nxt.items() if v})
    return tuple(polys)


@cache
def _centred_polynomials(n: int) -> tuple[tuple[Fraction, ...], ...]:
    """σ^(k) as a polynomial in s = σ - 1/2 (coefficients of s^0, s^1, ...): σ = 1/2 + s,
    and ds/dx = σ' = 1/4 - s², so P_(k+1) = P_k' · (1/4 - s²)."""
    polys = [(Fraction(1, 2), Fraction(1))]
    for _ in range(n):
        p = polys[-1]
        slope = [d * p[d] for d in range(1, len(p))]  # P_k'
        nxt = [Fraction(0)] * (len(slope) + 2)
        for d, c in enumerate(slope):
            nxt[d] += c / 4
            nxt[d + 2] -= c
        polys.append(tuple(nxt))
    return tuple(polys)


def _sigmoid_derivatives(x, n):
    """[σ(x), σ'(x), ..., σ^(n)(x)] without forming 1 - σ.

    For |x| >= 1, polynomials in σ and σ̄ = σ(-x) (both computed directly, so the tiny one
    keeps its digits at large |x|). For |x| < 1, polynomials in s = σ - 1/2 = tanh(x/2)/2:
    there the σ, σ̄ terms all sit near powers of 1/2 and cancel (σ''(1e-150) would come
    out exactly 0 at any working precision, truth -2.5e-151), while each term of the
    polynomial in s carries its own power of s and its leading term dominates.
    """
    _exponent_guard(x, "the sigmoid family")
    if abs(x) < 1:
        s = _mp.tanh(x / 2) / 2
        powers = [_mp.one]
        out = []
        for poly in _centred_polynomials(n):
            while len(powers) < len(poly):
                powers.append(powers[-1] * s)
            total = _mp.zero
            for d, c in enumerate(poly):
                if c:
                    total += _mp.mpf(c.numerator) / c.denominator * powers[d]
            out.append(total)
        return out
    s = 1 / (1 + _mp.exp(-x))
    sb = 1 / (1 + _mp.exp(x))
    out = []
    for poly in _sigmoid_polynomials(n):
        out.append(sum((c * s**i * sb**j for (i, j), c in poly.items()), _mp.zero))
    return out


def sigmoid(x, n):
    d = _sigmoid_derivatives(x, n)
    return [d[k] / _fact(k) for k in range(n + 1)]


def softplus(x, n):
    _exponent_guard(x, "softplus")
    value = x + _mp.log1p(_mp.exp(-x)) if x > 0 else _mp.log1p(_mp.exp(x))
    d = _sigmoid_derivatives(x, max(n - 1, 0))
    return [value] + [d[k - 1] / _fact(k) for k in range(1, n + 1)]


def tanh(x, n):
    d = _sigmoid_derivatives(2 * x, n)
    return [_mp.tanh(x)] + [2 ** (k + 1) * d[k] / _fact(k) for k in range(1, n + 1)]


def exp2(x, n):
    """2**x: ``2**x (ln 2)**k / k!``."""
    _exponent_guard(x, "exp2")
    v, ln2 = _mp.power(2, x), _mp.ln2
    return [v * ln2**k / _fact(k) for k in range(n + 1)]


def log2(x, n):
    return [c / _mp.ln2 for c in log(x, n)]


def square(x, n):
    return [x * x, 2 * x, _mp.one, _mp.zero, _mp.zero][: n + 1] + [_mp.zero] * max(n - 4, 0)


def reciprocal(x, n):
    if x == 0:
        return [_mp.inf] + [_mp.nan] * n
    return power(x, _mp.mpf(-1), n)


def rsqrt(x, n):
    if x < 0:
        return [_mp.nan] * (n + 1)
    if x == 0:
        return [_mp.inf] + [_mp.nan] * n
    return power(x, _mp.mpf(-1) / 2, n)


def _sinc_near_zero(x, n):
    """sin(πx)/(πx) for |x| < 1/2 by its series at 0, ``Σ_m (-1)^m π^{2m} x^{2m}/(2m+1)!``,
    differentiated term by term (no cancellation: the terms fall at least twofold)."""
    out = []
    for k in range(n + 1):
        total, m = _mp.zero, (k + 1) // 2
        while True:
            a = (-1) ** m * _mp.pi ** (2 * m) / _fact(2 * m + 1)
            term = a * _mp.binomial(2 * m, k) * (x ** (2 * m - k) if 2 * m > k else 1)
            total += term
            if m > k + 5 and abs(term) <= abs(total) * _mp.eps * _mp.eps:
                break
            if x == 0:
                break
            m += 1
        out.append(total)
    return out


def sinc(x, n):
    """The normalised sinc, sin(πx)/(πx) (1 at 0), as NumPy, JAX and PyTorch define it."""
    if abs(x) < 0.5:
        return _sinc_near_zero(x, n)
    s = [c * _mp.pi**k for k, c in enumerate(sin(_mp.pi * x, n))]
    inv = [c / _mp.pi for c in power(x, _mp.mpf(-1), n)]
    return [sum((s[j] * inv[k - j] for j in range(k + 1)), _mp.zero) for k in range(n + 1)]
