"""A repair as code (:mod:`harness.repair.code`, each back end's ``emit.py``): the
naive softplus repaired, its module written for TensorFlow, JAX and PyTorch, each
checked by ``harness.check`` against the judged values bit for bit and, independently,
run by the framework itself against mpmath; the documented custom gradient's rule
repaired and written as each framework's custom rule; a user's function checked, then
repaired (``CheckResult.repair``)."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from harness.repair.code import import_code
from harness.repair.prove import repair
from harness.stages.prepared import Selection

from .conftest import write_case

#: The seed's formula, at six points from 1 to 800 (100: the seed's NaN).
SOFTPLUS = """\
title: softplus as the seed writes it
source: test
inputs:
  x: {values: [1, 10, 50, 100, 300, 800]}
function: log(1 + exp(x))
reference: {expression: softplus(x)}
derivatives: {wrt: x, orders: [1, 2]}
implementations:
  naive: {expression: log(1 + exp(x))}
dtypes: [float32, float64]
"""

#: The tf.custom_gradient documentation's log1pexp: its rule overflows at order 2.
DOCUMENTED = """\
title: the documented custom gradient
source: test
inputs:
  x: {values: [1, 10, 50, 100, 300, 800]}
function: log(1 + exp(x))
reference: {expression: softplus(x)}
derivatives: {wrt: x, orders: [1, 2]}
implementations:
  doc:
    expression: log(1 + exp(x))
    gradient: {x: dy * (1 - 1 / (1 + exp(x)))}
dtypes: [float32]
"""


def _derivatives(fn, framework: str, x: float, dtype: str) -> list[float]:
    """``fn``'s value and first two derivatives at ``x``, by the framework's own reverse
    mode (no harness code)."""
    if framework == "torch":
        import torch

        t = torch.tensor([x], dtype=getattr(torch, dtype), requires_grad=True)
        y = fn(t)
        (d1,) = torch.autograd.grad(y.sum(), t, create_graph=True)
        (d2,) = torch.autograd.grad(d1.sum(), t)
        return [float(v.detach()[0]) for v in (y, d1, d2)]
    if framework == "jax":
        import jax
        import jax.numpy as jnp

        x = jnp.asarray(x, getattr(jnp, dtype))
        d1 = jax.grad(fn)
        return [float(fn(x)), float(d1(x)), float(jax.grad(d1)(x))]
    import tensorflow as tf

    t = tf.constant([x], getattr(tf, dtype))
    with tf.GradientTape() as outer:
        outer.watch(t)
        with tf.GradientTape() as inner:
            inner.watch(t)
            y = fn(t)
        d1 = inner.gradient(y, t)
    d2 = outer.gradient(d1, t)
    return [float(v[0]) for v in (y, d1, d2)]


def _truth(x: float, dtype: str) -> list[float]:
    """softplus and its two derivatives at ``x`` by mpmath, rounded to ``dtype``."""
    mpmath.mp.prec = 200
    x = mpmath.mpf(x)
    values = [mpmath.log1p(mpmath.exp(x)), 1 / (1 + mpmath.exp(-x))]
    values.append(values[1] * (1 - values[1]))
    return [float(getattr(np, dtype)(float(v))) for v in values]


def _close(got: float, want: float, dtype: str) -> bool:
    """Within 4 ulps of ``dtype`` (the study's budget), or both exactly 0."""
    ulp = float(np.spacing(getattr(np, dtype)(abs(want))))
    return abs(got - want) <= 4 * ulp


@pytest.mark.slow
def test_a_repairs_code_computes_the_judged_values_in_every_framework(tmp_path):
    path = write_case(tmp_path, "softplus", SOFTPLUS)
    found = repair(
        path,
        "naive",
        selection=Selection(methods=["reverse"], modes=["eager"]),
        per_part=4,
        symbolic=False,
    )
    best = found.best
    assert best is not None and best.everywhere, found.table()
    assert found.frameworks == ("tensorflow", "jax", "torch")
    for framework in found.frameworks:
        checked = found.check_code(framework)
        # 6 points, orders 0-2, reverse mode, eager, two dtypes: every judged value.
        assert (checked.compared, checked.differ, checked.missing) == (6 * 3 * 2, 0, 0)
        # Independently: the module imported and differentiated by the framework itself,
        # against mpmath, at the seed's x = 100 in float32 and at x = 800 in float64,
        # where the naive formula gives NaN and inf (at x = 100 the second derivative,
        # 3.8e-44, is subnormal in float32, which the platform may flush: not compared).
        fn = import_code(found.code(framework), "naive_repaired", tmp_path, f"own_{framework}")
        for x, dtype, orders in (
            (100.0, "float32", 2),
            (50.0, "float32", 3),
            (800.0, "float64", 3),
            (10.0, "float64", 3),
        ):
            got, want = _derivatives(fn, framework, x, dtype)[:orders], _truth(x, dtype)[:orders]
            assert all(map(_close, got, want, [dtype] * orders)), (framework, x, got, want)


@pytest.mark.slow
def test_a_custom_gradient_is_repaired_as_each_frameworks_custom_rule(tmp_path):
    path = write_case(tmp_path, "documented", DOCUMENTED)
    found = repair(
        path, "doc", selection=Selection(methods=["reverse"]), per_part=4, symbolic=False
    )
    best = found.best
    # A rule is part of the repair: the documented one rewritten, or the function's own
    # derivative, with the expression's best rewrite where the value needs one too.
    assert best is not None and "gradient" in found.implementation_of(best), found.table()
    idiom = {
        "tensorflow": "@tf.custom_gradient",
        "jax": "@jax.custom_vjp",
        "torch": "(torch.autograd.Function)",
    }
    for framework, marker in idiom.items():
        text = found.code(framework)
        assert marker in text and best.name not in text
        assert found.check_code(framework).same
    # The rule's second derivative at x = 50 in float32 by PyTorch itself: the
    # documented rule's exp(x)**2 overflows there (0 where the truth is 1.9e-22).
    fn = import_code(found.code("torch"), "doc_repaired", tmp_path, "own_doc")
    got, want = _derivatives(fn, "torch", 50.0, "float32"), _truth(50.0, "float32")
    assert _close(got[2], want[2], "float32") and want[2] > 1e-23, (got, want)


@pytest.mark.slow
def test_a_checked_function_is_repaired_from_its_trace(tmp_path):
    import jax.numpy as jnp

    import harness
    from harness.api import sweep

    def softplus_naive(x):
        return jnp.log(1 + jnp.exp(x))

    result = harness.check(
        softplus_naive,
        "jax",
        inputs={"x": sweep.values(1, 10, 50, 100, 300, 800)},
        orders=(1,),
        dtypes=["float32"],
        methods=["reverse"],
        modes=["eager"],
    )
    assert not result.ok
    found = result.repair(per_part=4, symbolic=False)
    best = found.best
    assert best is not None and best.fixed > 0 and best.regressions == 0, found.table()
    assert found.frameworks == ("jax",)
    # Its code in PyTorch too (a repair is a formula: any framework runs it).
    fn = import_code(found.code("torch"), "softplus_naive_repaired", tmp_path, "own_check")
    got = _derivatives(fn, "torch", 100.0, "float32")
    assert all(map(_close, got[:2], _truth(100.0, "float32")[:2], ["float32"] * 2)), got
