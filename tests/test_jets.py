"""Taylor-jet derivatives against mpmath.diff where it is reliable, and where it is not."""

from __future__ import annotations

import math

import mpmath
import pytest

from harness.cases import expressions as ex
from harness.reference.jets import cancelled_bits, evaluate, space_for

ORDERS = [(), ("x",), ("x", "x"), ("x",) * 3, ("x",) * 4]


def derivs(text, point, partials=ORDERS, dps=40):
    names = tuple(point)
    node = ex.parse(text, set(names))
    space = space_for(tuple(partials), names)
    with mpmath.workdps(dps):
        jet = evaluate(node, {k: mpmath.mpf(v) for k, v in point.items()}, space)
        return [space.derivative(jet, p) for p in partials]


FUNCTIONS = {
    "exp(x)": mpmath.exp,
    "expm1(x)": mpmath.expm1,
    "log(x)": mpmath.log,
    "log1p(x)": mpmath.log1p,
    "sqrt(x)": mpmath.sqrt,
    "sin(x)": mpmath.sin,
    "cos(x)": mpmath.cos,
    "tan(x)": mpmath.tan,
    "sinh(x)": mpmath.sinh,
    "cosh(x)": mpmath.cosh,
    "tanh(x)": mpmath.tanh,
    "sigmoid(x)": lambda x: 1 / (1 + mpmath.exp(-x)),
    "softplus(x)": lambda x: mpmath.log(1 + mpmath.exp(x)),
    "x**3.5": lambda x: x**3.5,
    "x**-2": lambda x: x**-2,
    "2**x": lambda x: 2**x,
    "abs(x)*x": lambda x: abs(x) * x,
    "maximum(x, 0.5)": lambda x: max(x, mpmath.mpf("0.5")),
    "where(x < 1, x**2, 1/x)": lambda x: x**2 if x < 1 else 1 / x,
    "1/(1 + (1/x - 1)*exp(-pi*x))": lambda x: 1 / (1 + (1 / x - 1) * mpmath.exp(-mpmath.pi * x)),
    # The kernels people differentiate and file bugs about, each from its textbook
    # definition in mpmath (SELU's constants from Klambauer et al. 2017, written out).
    "log_sigmoid(x)": lambda x: -mpmath.log(1 + mpmath.exp(-x)),
    "elu(x - 1)": lambda x: x - 1 if x > 1 else mpmath.exp(x - 1) - 1,
    "selu(x - 1)": lambda x: (
        mpmath.mpf("1.0507009873554804934193349852946")
        * (
            x - 1
            if x > 1
            else mpmath.mpf("1.6732632423543772848170429916717") * (mpmath.exp(x - 1) - 1)
        )
    ),
    "gelu(x - 1)": lambda x: (x - 1) * mpmath.ncdf(x - 1),
    "gelu_tanh(x - 1)": lambda x: (
        (x - 1)
        / 2
        * (
            1
            + mpmath.tanh(
                mpmath.sqrt(2 / mpmath.pi) * (x - 1 + mpmath.mpf("0.044715") * (x - 1) ** 3)
            )
        )
    ),
    "erf(x)": mpmath.erf,
    "erfc(x)": lambda x: 1 - mpmath.erf(x),
    "lgamma(x - 2)": lambda x: mpmath.log(abs(mpmath.gamma(x - 2))),
    "digamma(x)": mpmath.digamma,
    "atan(x - 1)": lambda x: mpmath.atan(x - 1),
    "asinh(x - 1)": lambda x: mpmath.log(x - 1 + mpmath.sqrt((x - 1) ** 2 + 1)),
    "acosh(x + 1)": lambda x: mpmath.log(x + 1 + mpmath.sqrt((x + 1) ** 2 - 1)),
    "atanh(x - 1)": lambda x: mpmath.log((1 + (x - 1)) / (1 - (x - 1))) / 2,
    "atan2(x, 0.7)": lambda x: mpmath.atan2(x, mpmath.mpf("0.7")),
    "atan2(-0.6, x - 1)": lambda x: mpmath.atan2(mpmath.mpf("-0.6"), x - 1),
    "xlogy(x, x + 1)": lambda x: x * mpmath.log(x + 1),
    "xlog1py(x, x)": lambda x: x * mpmath.log(1 + x),
    "pow(x, 2.5)": lambda x: x ** mpmath.mpf(2.5),
    "logsumexp(x, 2*x, -1)": lambda x: mpmath.log(
        mpmath.exp(x) + mpmath.exp(2 * x) + mpmath.exp(-1)
    ),
    "log_softmax(x, 2*x, -1)": lambda x: (
        x - mpmath.log(mpmath.exp(x) + mpmath.exp(2 * x) + mpmath.exp(-1))
    ),
    # The census's kernels (issue 27).
    "exp2(x)": lambda x: mpmath.mpf(2) ** x,
    "log2(x)": lambda x: mpmath.log(x) / mpmath.log(2),
    "square(x - 1)": lambda x: (x - 1) ** 2,
    "reciprocal(x)": lambda x: 1 / x,
    "rsqrt(x)": lambda x: 1 / mpmath.sqrt(x),
    "sinc(x)": lambda x: mpmath.sin(mpmath.pi * x) / (mpmath.pi * x),
    "silu(x - 1)": lambda x: (x - 1) / (1 + mpmath.exp(1 - x)),
    "mish(x - 1)": lambda x: (x - 1) * mpmath.tanh(mpmath.log(1 + mpmath.exp(x - 1))),
    "softsign(x - 1)": lambda x: (x - 1) / (1 + abs(x - 1)),
    "erfinv(x - 1)": lambda x: mpmath.erfinv(x - 1),
    "hypot(x, 0.5)": lambda x: mpmath.sqrt(x**2 + mpmath.mpf("0.25")),
    "logaddexp(x, 0.45)": lambda x: mpmath.log(mpmath.exp(x) + mpmath.exp(mpmath.mpf("0.45"))),
}


@pytest.mark.parametrize("text", sorted(FUNCTIONS))
@pytest.mark.parametrize("x", [0.3, 0.7, 1.9])
def test_jets_match_mpmath_diff_at_benign_points(text, x):
    fn = FUNCTIONS[text]
    got = derivs(text, {"x": x})
    with mpmath.workdps(60):
        want = [mpmath.diff(fn, mpmath.mpf(x), k) for k in range(5)]
    for k, (g, w) in enumerate(zip(got, want)):
        assert mpmath.almosteq(
            g, w, rel_eps=mpmath.mpf(10) ** -25, abs_eps=mpmath.mpf(10) ** -30
        ), (text, x, k, g, w)


def test_no_cancellation_in_sigmoid_family_at_huge_arguments():
    # softplus''(1000) = sigmoid(1000) sigmoid(-1000) = 5.0759588975e-435; mpmath.diff
    # at its default step returns 0 here (the design notes), a naive 1 - sigmoid gives 0.
    sp = derivs("softplus(x)", {"x": 1000})
    assert mpmath.almosteq(sp[2], mpmath.mpf("5.0759588975494567653e-435"), rel_eps=1e-18)
    assert mpmath.almosteq(sp[3], -sp[2], rel_eps=1e-18)
    th = derivs("tanh(x)", {"x": 400})
    assert mpmath.almosteq(th[1], 4 * mpmath.exp(-800), rel_eps=1e-15)
    assert th[1] > 0 and th[2] < 0
    s = derivs("sigmoid(x)", {"x": -700})
    assert mpmath.almosteq(s[1], mpmath.exp(-700), rel_eps=1e-15)


def test_mixed_partials_of_the_ratio():
    parts = [(), ("b",), ("b", "b"), ("a", "b"), ("a", "b", "b", "b")]
    a, b = mpmath.mpf(3), mpmath.mpf("0.25")
    got = derivs("-a/b", {"a": 3, "b": 0.25}, parts)
    assert got == [-a / b, a / b**2, -2 * a / b**3, 1 / b**2, 6 / b**4]


def test_non_differentiable_points_give_nan_derivatives():
    got = derivs("abs(x)", {"x": 0.0})
    assert got[0] == 0 and all(mpmath.isnan(v) for v in got[1:])
    kink = derivs("maximum(x, 1 - x)", {"x": 0.5})
    assert kink[0] == 0.5 and mpmath.isnan(kink[1])


def test_cancellation_is_measured():
    derivs("log(1 + exp(x))", {"x": 1000}, dps=50)
    assert cancelled_bits() >= 50 * 3  # total: the second derivative cancels to exactly 0
    derivs("softplus(x)", {"x": 1000}, dps=50)
    assert cancelled_bits() == 0


@pytest.mark.parametrize(
    ("text", "point", "exists"),
    [
        # elu's pieces x and e^x - 1 share the value and f' = 1 at 0, not f'' (1 vs 0).
        ("elu(x)", 0.0, [0.0, 1.0, None, None, None]),
        # selu's slopes differ at 0 (scale against scale*alpha): only the value exists.
        ("selu(x)", 0.0, [0.0, None, None, None, None]),
        # atan2 jumps from pi to -pi across y = 0 for x < 0 (its first argument is y).
        ("atan2(x, -1)", 0.0, [float(mpmath.pi), None, None, None, None]),
        # lgamma has poles at 0, -1, -2, ...: log|Γ| is +inf there, no derivative.
        ("lgamma(x)", -2.0, [math.inf, None, None, None, None]),
        # xlogy(x, y) is 0 where x = 0 even at y = 0, where d/dx = log 0 does not exist.
        ("xlogy(x, x)", 0.0, [0.0, None, None, None, None]),
    ],
)
def test_switch_points_poles_and_cuts_keep_only_the_derivatives_that_exist(text, point, exists):
    got = derivs(text, {"x": point})
    for k, want in enumerate(exists):
        if want is None:
            assert mpmath.isnan(got[k]), (text, k, got[k])
        else:
            assert got[k] == want or mpmath.almosteq(got[k], want, rel_eps=1e-15), (text, k)


def test_log_softmax_value_does_not_cancel_when_its_first_input_dominates():
    # log_softmax(x, 0) = -log1p(e^-x): at x = 200 it is -1.38e-87, which x - logsumexp
    # would round to 0 at 50 digits.
    got = derivs("log_softmax(x, 0)", {"x": 200.0}, dps=50)
    with mpmath.workdps(50):
        want = -mpmath.log1p(mpmath.exp(-200))
    assert mpmath.almosteq(got[0], want, rel_eps=mpmath.mpf(10) ** -45)


NAN = None  # the derivative does not exist there


@pytest.mark.parametrize(
    ("text", "point", "want"),
    [
        # |x| y at x = 0: ∂/∂y = |x| = 0 and ∂²/∂y² = 0 exist; only what moves x is lost.
        ("abs(x)*y", {"x": 0, "y": 2}, {"y": 0, "y,y": 0, "x": NAN, "x,y": NAN}),
        ("maximum(x, 0) + y", {"x": 0, "y": 2}, {"": 2, "y": 1, "x": NAN, "x,y": NAN}),
        # where at its switch point: no derivative where the branches' slopes differ,
        # whichever branch the point itself takes (this one used to give f' = 1).
        ("where(x < 0, -x, x)", {"x": 0}, {"": 0, "x": NAN, "x,x": NAN}),
        ("where(x > 0, log(x), 0)", {"x": 0}, {"": 0, "x": NAN}),
        # Branches that agree to first order: f' exists (2), f'' does not (2 against 0).
        ("where(x < 1, x**2, 2*x - 1)", {"x": 1}, {"": 1, "x": 2, "x,x": NAN}),
        # The switch does not move with x: ∂/∂x of the branch taken (x**3) exists.
        ("where(y > 0, x**2, x**3)", {"x": 1, "y": 0}, {"x": 3, "x,x": 6, "y": 0, "x,y": NAN}),
        # x**2.5 at 0: f = f' = f'' = 0, f''' = 1.875 x**-0.5 does not exist; asking for
        # order 3 must not take the lower orders with it.
        ("x**2.5", {"x": 0}, {"": 0, "x": 0, "x,x": 0, "x,x,x": NAN}),
    ],
)
def test_switch_points_lose_only_the_partials_that_move_the_switch(text, point, want):
    partials = [tuple(k.split(",")) if k else () for k in want]
    got = derivs(text, point, partials)
    for (label, expected), value in zip(want.items(), got):
        if expected is NAN:
            assert mpmath.isnan(value), (text, label, value)
        else:
            assert value == expected, (text, label, value)
