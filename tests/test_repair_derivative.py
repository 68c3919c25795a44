"""The symbolic derivative (:mod:`harness.repair.derivative`): each operator's entry and
the chain rule over whole expressions, against mpmath's numerical derivative of the same
function (the tests' own evaluator, :mod:`tests.mp_eval`); what it cannot take, named."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from harness.cases import expressions as ex
from harness.operators.table import OPERATORS
from harness.repair.derivative import DERIVATIVES, NotDifferentiable, differentiate

from .mp_eval import mp_value

#: Where each operator's derivative is sampled: its domain, away from its kinks.
_DOMAIN = {"log": (0.01, 50), "sqrt": (0.01, 50), "rsqrt": (0.01, 50), "log1p": (-0.9, 50),
           "tan": (-1.4, 1.4), "abs": (0.1, 5)}  # fmt: skip


def _points(lo: float, hi: float, count: int = 8, seed: int = 0) -> list[float]:
    return [float(v) for v in np.random.default_rng(seed).uniform(lo, hi, count)]


def _close(got, want) -> bool:
    return abs(got - want) <= mpmath.mpf(10) ** -25 * max(1, abs(want))


@pytest.mark.parametrize("func", sorted(DERIVATIVES))
def test_each_operators_derivative_is_mpmaths_numerical_derivative(func):
    assert func in OPERATORS and OPERATORS[func].arity == (1, 1)
    lo, hi = _DOMAIN.get(func, (-5.0, 5.0))
    points = _points(lo, hi) + ([-p for p in _points(lo, hi, 4, 1)] if func == "abs" else [])
    with mpmath.workdps(40):
        for x in points:
            x = mpmath.mpf(x)
            want = mpmath.diff(lambda t: mp_value(f"{func}(x)", {"x": t}), x)
            got = mp_value(DERIVATIVES[func], {"x": x})
            assert _close(got, want), (func, x, got, want)


#: (expression, its inputs, a point away from kinks and poles).
EXPRESSIONS = [
    ("log(1 + exp(x))", {"x": 3.5}),
    ("x**3 - 2*x", {"x": -1.25}),
    ("a / b**2", {"a": 0.75, "b": -2.5}),
    ("sqrt(x**2 + y**2)", {"x": 1.5, "y": -0.5}),
    ("maximum(x, 0) + log1p(exp(-abs(x)))", {"x": -2.0}),
    ("maximum(x, 0) + log1p(exp(-abs(x)))", {"x": 2.0}),
    ("x**y", {"x": 1.75, "y": 0.5}),
    ("y0 * exp(r*t) / (1 - y0 + y0 * exp(r*t))", {"y0": 0.25, "r": 0.5, "t": 3.0}),
    ("sigmoid(x) * tanh(2 * x) / (1 + x**2)", {"x": 0.3}),
]


@pytest.mark.parametrize("text, point", EXPRESSIONS)
def test_the_derivative_of_an_expression_in_each_input_is_mpmaths(text, point):
    node = ex.parse(text, set(point))
    with mpmath.workdps(40):
        at = {n: mpmath.mpf(v) for n, v in point.items()}
        for name in point:

            def along(t, name=name):
                return mp_value(text, {**at, name: t})

            want = mpmath.diff(along, at[name])
            got = mp_value(ex.unparse(differentiate(node, name)), at)
            assert _close(got, want), (text, name, got, want)


def test_the_second_derivative_is_the_derivative_of_the_first():
    node = ex.parse("log(1 + exp(x))", {"x"})
    second = differentiate(differentiate(node, "x"), "x")
    with mpmath.workdps(40):
        x = mpmath.mpf("0.625")
        want = mpmath.diff(lambda t: mpmath.log(1 + mpmath.exp(t)), x, 2)
        assert _close(mp_value(ex.unparse(second), {"x": x}), want)


def test_what_it_cannot_differentiate_is_named():
    with pytest.raises(NotDifferentiable, match="lgamma"):
        differentiate(ex.parse("lgamma(x) + x", {"x"}), "x")
    # An input the expression does not hold: its derivative is 0.
    assert differentiate(ex.parse("exp(x)", {"x", "y"}), "y") == ex.Num("0", 0.0)
