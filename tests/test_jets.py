"""Taylor-jet derivatives against mpmath.diff where it is reliable, and where it is not."""

from __future__ import annotations

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
