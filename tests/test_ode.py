"""Seed 001's logistic ODE solved numerically: fixed-step RK4 in TensorFlow ops, the
hitting time by root finding on it (autodiff through the iterations, implicit-function
custom gradients) and SciPy's solve_ivp as the float64 baseline."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.registered import catalogue as registry
from harness.stages.prepared import Selection
from harness.stages.run import run_case

from .conftest import CASES

pytestmark = pytest.mark.slow

#: These cases run registered TensorFlow code (JAX and PyTorch: not_applicable).
TF = Selection(backends=["tensorflow"])

T_STAR = 100 * math.log(4)  # the seed's 138.629...


def _row(errors, implementation, method, partial, **where):
    rows = errors[
        (errors.implementation == implementation)
        & (errors.method == method)
        & (errors.partial == partial)
    ]
    for name, value in where.items():
        rows = rows[np.isclose(rows[name], value, rtol=1e-12)]
    assert len(rows) == 1, (implementation, method, partial, where, len(rows))
    return rows.iloc[0]


@pytest.fixture(scope="module")
def hitting(tmp_path_factory):
    return run_case(
        CASES / "hitting_time_numerical.yaml", selection=TF, results=tmp_path_factory.mktemp("ode")
    )


def test_hitting_time_on_the_rk4_solution_reproduces_the_seed(hitting):
    seed = {"r": 0.01, "y0": 0.5}
    for impl in ("newton_rk4", "ift_rk4", "ift_rk4_stopped"):
        t = _row(hitting, impl, "reverse", "", **seed)
        assert abs(t.value - T_STAR) / T_STAR < 1e-7  # the RK4 solver's own error
        assert t.outcome == "inaccurate"  # ... is far above float64's last bits
        dr = _row(hitting, impl, "reverse", "r", **seed)
        assert abs(dr.value + 13862.943611198906) / 13862.94 < 1e-7
        dy0 = _row(hitting, impl, "reverse", "y0", **seed)
        assert abs(dy0.value + 400) / 400 < 1e-7
    # Autodiff through the march and Newton's iterations agrees with the implicit
    # function theorem on the same solver to about 1e-9 everywhere.
    newton = hitting[(hitting.implementation == "newton_rk4") & (hitting.method == "reverse")]
    ift = hitting[(hitting.implementation == "ift_rk4") & (hitting.method == "reverse")]
    np.testing.assert_allclose(ift.value.to_numpy(), newton.value.to_numpy(), rtol=1e-9)


def test_scipy_baseline_has_no_autodiff_and_finite_differences_only(hitting):
    ivp = hitting[hitting.implementation == "solve_ivp"]
    value = _row(hitting, "solve_ivp", "reverse", "", r=0.01, y0=0.5)
    assert abs(value.value - T_STAR) / T_STAR < 1e-8
    grads = ivp[(ivp.method == "reverse") & (ivp.order > 0)]
    assert set(grads.outcome) == {"missing"} and set(grads.expected) == {"held"}
    fd = _row(hitting, "solve_ivp", "finite_difference", "r", r=0.01, y0=0.5)
    assert abs(fd.value + 13862.94) / 13862.94 < 1e-5


def test_implicit_function_rule_at_stop_gradient_is_wrong_at_order_two():
    """The rule -(dy/dθ)/(dy/dt) evaluated at tf.stop_gradient(t*) is right at order 1
    and loses half of d²t*/dr² here; evaluated at t* itself it is right."""
    from harness.backends.tensorflow.tfimport import tf  # one thread, as the harness runs it

    r = tf.constant([0.01, 1.0], tf.float64)
    y0 = tf.constant([0.5, 0.001], tf.float64)
    exact = 2 * (math.log(4) - np.log(y0.numpy() / (1 - y0.numpy()))) / r.numpy() ** 3
    second = {}
    for name in ("hitting_time_ift_rk4", "hitting_time_ift_rk4_stopped"):
        f = tf.function(registry.get(name).factory(tf, tf.float64))
        with tf.GradientTape() as outer:
            outer.watch(r)
            with tf.GradientTape() as inner:
                inner.watch(r)
                t = f(r, y0)
            first = inner.gradient(t, r)
        second[name] = outer.gradient(first, r).numpy()
    np.testing.assert_allclose(second["hitting_time_ift_rk4"], exact, rtol=1e-6)
    np.testing.assert_allclose(second["hitting_time_ift_rk4_stopped"], exact / 2, rtol=1e-6)


def test_rk4_solution_accuracy_and_stability_limit(tmp_path):
    errors = run_case(
        CASES / "logistic_rk4.yaml",
        selection=Selection(backends=["tensorflow"], modes=["function"]),
        results=tmp_path,
    )
    seed = {"t": T_STAR, "r": 0.01, "y0": 0.5}
    y = _row(errors, "rk4", "reverse", "", **seed)
    assert abs(y.value - 0.8) < 1e-11
    dydt = _row(errors, "rk4", "reverse", "t", **seed)
    assert abs(dydt.value - 0.01 * 0.8 * 0.2) / 0.0016 < 1e-9  # r y (1 - y) at t*
    # r h = r t / 200 beyond RK4's stability limit (~2.8): the recursion blows up.
    unstable = errors[
        (errors.implementation == "rk4")
        & (errors.partial == "")
        & (errors.r == 1.0)
        & (errors.t > 3000)
    ]
    assert len(unstable) > 0 and not np.isfinite(unstable.value).any()
    closed = errors[
        (errors.implementation == "reciprocal_form")
        & (errors.partial == "")
        & (errors.method == "reverse")
    ]
    assert set(closed.outcome) == {"ok"}
