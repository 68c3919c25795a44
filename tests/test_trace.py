"""Tracing a user's JAX function into the harness's expression (issue 58's first step):
the jaxpr's equations as the expression the function computes, nested calls and a
custom rule's primal inlined, constants exact, and what cannot be traced refused in one
message naming JAX's primitive and the user's line."""

from __future__ import annotations

import pytest

from harness.backends.tracing import Refusal, number
from harness.cases.expressions import Num, parse, walk
from harness.operators.table import OPERATORS

jax = pytest.importorskip("jax")
jnp = jax.numpy

from harness.backends.jax.trace import FUNCTIONS, TraceError, trace  # noqa: E402


def _expected(text: str, names=("x",)):
    return parse(text, set(names))


def test_a_function_traces_to_the_expression_it_computes():
    def f(x):
        return jnp.log(1 + jnp.exp(x)) + x**3 - jnp.where(x > 0.1, x, -x) + jax.nn.sigmoid(x)

    assert trace(f) == _expected("log(1.0 + exp(x)) + x ** 3 - where(x > 0.1, x, -x) + sigmoid(x)")
    assert trace(lambda a, b: a / b**2) == _expected("a / b ** 2", ("a", "b"))


def test_nested_calls_and_a_custom_rules_primal_are_inlined():
    @jax.custom_jvp
    def softplus(x):
        return jnp.log1p(jnp.exp(x))

    softplus.defjvp(lambda p, t: (softplus(p[0]), t[0] * jax.nn.sigmoid(p[0])))
    assert trace(jax.jit(lambda x: 2.0 * softplus(x))) == _expected("2.0 * log1p(exp(x))")
    # JAX's own softplus: logaddexp(x, 0), a custom_jvp function whose primal guards NaN
    # with x - 0 != x - 0.
    traced = trace(jax.nn.softplus)
    assert {n.func for n in walk(traced) if hasattr(n, "func")} == {
        "maximum",
        "log1p",
        "exp",
        "abs",
    }


def test_constants_keep_their_exact_float64_value():
    c = 0.1 + 0.2  # 0.30000000000000004, not 0.3
    (num,) = [n for n in walk(trace(lambda x: x * jnp.asarray(c))) if isinstance(n, Num)]
    assert num.value == c and float(num.text) == c and num.text != "0.3"
    third = [n for n in walk(trace(lambda x: x / 3.0)) if isinstance(n, Num)]
    assert [n.value for n in third] == [3.0]


def test_what_cannot_be_traced_is_refused_in_one_message():
    with pytest.raises(TraceError, match=r"primitive 'sign' at .*test_trace\.py:\d+"):
        trace(lambda x: jnp.sign(x) * x)
    with pytest.raises(TraceError, match=r"returns \[\(2,\)\]: one scalar"):
        trace(lambda x: jnp.stack([x, x]))
    with pytest.raises(TraceError, match="branches in Python on a traced value"):
        trace(lambda x: x if x > 0 else -x)
    with pytest.raises(TraceError, match=r"with 1 inputs \['x'\]"):
        trace(lambda x, y: x * y, ["x"])
    with pytest.raises(
        TraceError, match=r"primitive 'and' at .*: applied to a comparison \(where takes one"
    ):
        trace(lambda x: jnp.where((x > 0) & (x < 1), x, 0.0))
    with pytest.raises(TraceError, match="primitive 'add' .*applied to a comparison"):
        trace(lambda x: jax.lax.select_n((x > 0).astype(int) + (x > 1), x, 2 * x, 3 * x))


def test_every_mapped_primitive_is_an_operator_of_the_table():
    assert set(FUNCTIONS.values()) <= set(OPERATORS)
    # Each one-argument mapping traced through the function JAX users call for it.
    calls = {
        "exp": jnp.exp,
        "log1p": jnp.log1p,
        "tanh": jnp.tanh,
        "sigmoid": jax.nn.sigmoid,
        "erf": jax.scipy.special.erf,
        "lgamma": jax.scipy.special.gammaln,
        "sqrt": jnp.sqrt,
        "abs": jnp.abs,
    }
    for name, fn in calls.items():
        assert trace(lambda x, fn=fn: fn(x)) == _expected(f"{name}(x)"), name


def test_harness_trace_checks_the_trace_against_the_function_bit_for_bit():
    import numpy as np

    import harness

    xs = [*(-np.logspace(-30, 3, 40)), 0.0, -0.0, *np.logspace(-30, 3, 40)]
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", False)  # a JAX user's default
    try:
        traced = harness.trace(jax.nn.softplus, "jax", {"x": xs})
        assert jax.config.jax_enable_x64 is False  # the caller's JAX setting is kept
    finally:
        jax.config.update("jax_enable_x64", before)
    assert traced.names == ("x",) and traced.framework == "jax"
    assert "log1p(exp((-abs(" in traced.text
    # A cast rounds; the trace passes it by (the reference is the exact function), so the
    # harness's float64 value differs from the function's where float32 rounds x * 3.
    x = np.array([1.0, 2.0, 0.1, 0.7])
    fn = lambda v: (v.astype(jnp.float32) * 3).astype(jnp.float64)  # noqa: E731
    rounded = (x.astype(np.float32) * np.float32(3)).astype(np.float64)
    first = int(np.flatnonzero(rounded != x * 3)[0])
    with pytest.raises(harness.api.trace.TraceError) as caught:
        harness.trace(fn, "jax", {"x": list(x)})
    message = str(caught.value)
    assert f"at x = {float(x[first])!r} the function gives {float(rounded[first])!r}" in message
    assert f"the trace {float(x[first] * 3)!r}" in message and "is not used" in message
    with pytest.raises(harness.api.trace.TraceError, match="unknown framework 'mxnet'"):
        harness.trace(lambda v: v, "mxnet", {"x": [1.0]})


def test_a_pytorch_function_and_an_autograd_function_trace_as_their_forward():
    import numpy as np

    import harness
    from harness.backends.torch.trace import FUNCTIONS as TORCH_FUNCTIONS

    torch = pytest.importorskip("torch")
    functional = torch.nn.functional
    assert set(TORCH_FUNCTIONS.values()) <= set(OPERATORS)

    class Softplus(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.log1p(torch.exp(x))

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * torch.sigmoid(x)

    xs = [*(-np.logspace(-30, 3, 40)), 0.0, *np.logspace(-30, 3, 40)]
    traced = harness.trace(lambda x: Softplus.apply(x) * 2, "torch", {"x": xs})
    assert traced.expression == _expected("log1p(exp(x)) * 2")
    assert harness.trace(functional.softplus, "torch", {"x": xs}).text == "softplus(x)"
    ratio = harness.trace(lambda a, b: a / b**2, "torch", {"a": xs, "b": xs[::-1]})
    assert ratio.expression == _expected("a / b ** 2", ("a", "b"))
    with pytest.raises(TraceError, match=r"operator 'sign.default' at .*test_trace\.py:\d+"):
        harness.trace(lambda x: torch.sign(x) * x, "torch", {"x": xs})
    one = harness.trace(lambda x: functional.softplus(x, beta=1.0), "torch", {"x": xs})
    assert one.text == "softplus(x)"  # beta given as the float 1.0 is beta 1
    with pytest.raises(TraceError, match="a beta other than 1"):
        harness.trace(lambda x: functional.softplus(x, beta=2.0), "torch", {"x": xs})
    with pytest.raises(TraceError, match=r"returns a tensor of shape \(2,\): one scalar"):
        harness.trace(lambda x: torch.stack([x, x]), "torch", {"x": xs})
    with pytest.raises(TraceError, match="branches in Python on a tensor's value"):
        harness.trace(lambda x: x if x > 0 else -x, "torch", {"x": xs})
    with pytest.raises(TraceError, match=r"at x = 0\.1 the function gives 0\.30000001192092896"):
        harness.trace(lambda x: (x.float() * 3).double(), "torch", {"x": [0.1, 1.0]})


@pytest.mark.slow  # TensorFlow's import, about 5 s
def test_a_tensorflow_function_a_nested_tf_function_and_a_custom_gradient_trace():
    import numpy as np

    import harness
    from harness.backends.tensorflow.tfimport import tf
    from harness.backends.tensorflow.trace import FUNCTIONS as TF_FUNCTIONS

    assert set(TF_FUNCTIONS.values()) <= set(OPERATORS)

    @tf.custom_gradient
    def softplus(x):
        def grad(dy):
            return dy * tf.sigmoid(x)

        return tf.math.log1p(tf.exp(x)), grad

    @tf.function
    def twice_exp(x):
        return tf.exp(x) * 2.0

    xs = [*(-np.logspace(-30, 3, 40)), 0.0, *np.logspace(-30, 3, 40)]
    traced = harness.trace(lambda x: softplus(x) + twice_exp(x), "tensorflow", {"x": xs})
    assert traced.expression == _expected("log1p(exp(x)) + exp(x) * 2.0")
    assert (
        harness.trace(tf.nn.softplus, "tensorflow", {"features": xs}).text == "softplus(features)"
    )
    where = harness.trace(lambda x: tf.where(x > 0.1, x, -x), "tensorflow", {"x": xs})
    assert where.expression == _expected("where(x > 0.1, x, -x)")
    with pytest.raises(TraceError, match=r"op 'Sign' at .*test_trace\.py:\d+"):
        harness.trace(lambda x: tf.sign(x) * x, "tensorflow", {"x": xs})
    with pytest.raises(TraceError, match=r"returns a tensor of shape \(2,\): one scalar"):
        harness.trace(lambda x: tf.stack([x, x]), "tensorflow", {"x": xs})
    with pytest.raises(TraceError, match="branches in Python on a tensor's value"):
        harness.trace(lambda x: x if x > 0 else -x, "tensorflow", {"x": xs})
    with pytest.raises(TraceError, match=r"at x = 0\.1 the function gives 0\.30000001192092896"):
        harness.trace(lambda x: tf.cast(x, tf.float32) * 3, "tensorflow", {"x": [0.1, 1.0]})


def test_a_non_finite_constant_is_refused_by_the_tracers():
    # The case language has no literal for inf: a trace holding one is refused, and a
    # custom rule of JAX's (logaddexp's) says so instead of writing a case that fails.
    with pytest.raises(Refusal, match="no literal"):
        number(float("inf"))
    assert number(2.5).value == 2.5
