"""TensorFlow's minimal reproducers (:mod:`harness.backends.snippet`): implementations as
:mod:`harness.backends.tensorflow.source` writes them (custom gradients as
``tf.custom_gradient``), the methods as nested tapes and accumulators. (The findings'
batch-exact scripts are :mod:`harness.backends.tensorflow.repro`.) No TensorFlow here."""

from __future__ import annotations

from collections.abc import Sequence

from harness.backends.snippet import Style, function_block
from harness.backends.tensorflow.source import SourceWriter, expression_source
from harness.cases.model import Case

__all__ = ["STYLE", "write"]

_GRAD = """def grad(f, i):  # reverse mode: one tf.GradientTape per order
    def g(*xs):
        with tf.GradientTape() as tape:
            tape.watch(xs)  # every input: an op's gradient is computed for each
            y = f(*xs)
        return tape.gradient(y, xs[i])
    return g"""
_JVP = """def jvp(f, i):  # forward mode: one tf.autodiff.ForwardAccumulator per order
    def g(*xs):
        with tf.autodiff.ForwardAccumulator(xs[i], tf.ones_like(xs[i])) as acc:
            y = f(*xs)
        return acc.jvp(y)
    return g"""

# A tape watches every input, as the run's tapes do: an op's gradient function computes
# the gradient of each watched input, and those ops can fail. tf.pow's, for its exponent,
# compares the base with 0 (``Greater``), whose forward-mode record under tf.function
# raises IndexError inside two nested ForwardAccumulators; watching the base alone skips it.
STYLE = Style(
    title="TensorFlow",
    header="import math\n\nimport tensorflow as tf",
    dtypes={
        "float16": "tf.float16",
        "bfloat16": "tf.bfloat16",
        "float32": "tf.float32",
        "float64": "tf.float64",
    },
    scalar="tf.concat([tf.constant([float.fromhex({hex!r})], DTYPE), tf.ones([BATCH - 1], DTYPE)], 0)",
    helpers={"reverse": _GRAD, "forward": _JVP, "forward_over_reverse": _GRAD + "\n\n\n" + _JVP},
    nest={"reverse": "grad({f}, {i})", "forward": "jvp({f}, {i})"},
    modes={
        "eager": "{d}",
        "function": "tf.function({d}, autograph=False)",
        "xla": "tf.function({d}, autograph=False, jit_compile=True)",
    },
    # Eight float32s or more take Eigen's packet path, which rounds differently: asinh's
    # derivative at -8.06e34 under tf.function is 1.2405325e-35 alone, 1.2404404e-35
    # in a batch (and in the harness's).
    value="{got}[0]",
    batch=64,
)


def write(case: Case | None, implementation: str | None, names: Sequence[str], expression=None):
    """``(blocks, "f")``: ``f`` of ``names`` is the implementation (or ``expression``),
    as the harness builds it (a registered implementation as its factory's source)."""
    if expression is not None:
        return [
            function_block("f", names, expression_source(expression, {n: n for n in names}, {}))
        ], "f"
    impl = case.implementation(implementation)
    if impl.expression is None and not impl.registered:
        return None
    if any(g.tangent and not g.gradient for g in (impl, *case.functions)):
        return None  # a forward rule alone: not applicable in TensorFlow
    w = SourceWriter()
    w.implementation(case, implementation, "f_")
    params = ", ".join(names)
    return [*w.blocks, f"def f({params}):\n    return f_({params})"], "f"
