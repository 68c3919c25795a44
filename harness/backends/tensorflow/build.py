"""Compile case expressions and implementations to TensorFlow.

Every named function maps to TensorFlow's own kernel, the operator table's
(:mod:`harness.operators`: ``softplus`` is ``tf.math.softplus`` with its registered gradient) and every operator to the Python
operator on tensors (``b**2`` is ``tf.pow`` exactly as in user code), so a case tests
the framework, not a re-implementation. Numbers become constants of the working dtype;
no arithmetic is done in Python.

A case's gradient rules make a ``tf.custom_gradient`` function; its forward mode
(``ForwardAccumulator``) is derived from them. TensorFlow has no custom forward rule: a
case's ``tangent`` rule alone is not applicable here, and beside a gradient it is unused.

This module imports TensorFlow; only the evaluation stage imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from harness.backends.interface import NotApplicable
from harness.backends.tensorflow.tfimport import tf
from harness.backends.walker import Kernels, operator_functions, walk
from harness.backends.walker import build_implementation as shared_build
from harness.backends.walker import compile_functions as shared_functions
from harness.cases import expressions as ex
from harness.cases.model import CaseFunction, Implementation, NestedRule, Rule
from harness.registered import catalogue as registry

__all__ = [
    "GradientCall",
    "build_implementation",
    "compile_expression",
    "compile_functions",
    "record_gradients",
]

Functions = Mapping[str, Callable[..., tf.Tensor]]


def _stack(*args: tf.Tensor) -> tf.Tensor:
    """The arguments along a new first axis, each broadcast to their common shape (a
    constant argument is a scalar)."""
    shape = tf.shape(sum(args))
    return tf.stack([tf.broadcast_to(a, shape) for a in args])


_COMPARE = {
    "lt": tf.less,
    "le": tf.less_equal,
    "gt": tf.greater,
    "ge": tf.greater_equal,
    "eq": tf.equal,
    "ne": tf.not_equal,
}


#: TensorFlow's kernels for the expression language.
KERNELS = Kernels(
    constant=lambda value, dtype: tf.constant(value, dtype),
    operators=operator_functions("tensorflow", {"tf": tf}, _stack),
    compare=_COMPARE,
    where=tf.where,
)


def compile_expression(
    node: ex.Node,
    env: Mapping[str, tf.Tensor],
    dtype: tf.DType,
    functions: Functions | None = None,
) -> tf.Tensor:
    """Build the TensorFlow ops of ``node`` over the tensors in ``env``; calls of the
    case's own functions go to their compiled callables in ``functions``."""
    return walk(node, env, dtype, KERNELS, functions)


@dataclass(frozen=True)
class GradientCall:
    """One call of a custom gradient function, as :func:`record_gradients` saw it."""

    function: str  # the implementation or case function whose rule ran
    inputs: dict[str, object]  # numpy arrays
    upstream: object  # dy
    downstream: dict[str, object]  # the vector-Jacobian product per input (None: no rule)


_RECORDING: list[list[GradientCall]] = []


@contextmanager
def record_gradients() -> Iterator[list[GradientCall]]:
    """Collect every custom-gradient call made eagerly inside the block, in call order
    (in a traced function the values are symbolic, so nothing is recorded there)."""
    calls: list[GradientCall] = []
    _RECORDING.append(calls)
    try:
        yield calls
    finally:
        _RECORDING.remove(calls)


def _record(label: str, names, xs, dy, out) -> None:
    if not _RECORDING or not tf.executing_eagerly():
        return
    call = GradientCall(
        label,
        {n: x.numpy() for n, x in zip(names, xs)},
        dy.numpy(),
        {n: (None if o is None else o.numpy()) for n, o in zip(names, out)},
    )
    for calls in _RECORDING:
        calls.append(call)


def _custom(
    expression: ex.Node,
    gradient: Mapping[str, Rule],
    names: Sequence[str],
    dtype: tf.DType,
    functions: Functions | None = None,
    label: str = "",
    tangent: Mapping[str, ex.Node] | None = None,
) -> Callable[..., tf.Tensor]:
    """A ``tf.custom_gradient`` function of ``names`` with the case's gradient rules
    (a forward ``tangent`` rule has no place in TensorFlow: not applicable alone).

    A rule that is an expression gives the vector-Jacobian product directly (it sees the
    inputs and the upstream gradient ``dy``). A nested rule gives ``dy * F(inputs)``
    where ``F`` is itself a custom-gradient function: the documented pattern for
    writing a second-order rule (seed 004's ``first_order_custom(unused_x)``).
    """

    if not gradient:
        reason = (
            f"{label} has only a forward (tangent) rule; TensorFlow has no custom forward "
            "rule (tf.custom_gradient is reverse only; ForwardAccumulator derives from it)"
        )

        def absent(*xs):  # raised where it is called, as for an operator without a kernel
            raise NotApplicable(reason)

        return absent

    @tf.custom_gradient
    def f(*xs: tf.Tensor):
        env = dict(zip(names, xs))
        y = compile_expression(expression, env, dtype, functions)

        def grad(dy: tf.Tensor):
            out = []
            for name in names:
                rule = gradient.get(name)
                if rule is None:
                    out.append(None)  # no rule: the framework reports no gradient
                elif isinstance(rule, NestedRule) and rule.pattern == "decorated_grad_fn":
                    factor = compile_expression(rule.expression, env, dtype, functions)
                    out.append(_decorated_vjp(factor, f"{label}'")(dy))
                elif isinstance(rule, NestedRule):
                    inner = _custom(
                        rule.expression, rule.gradient, names, dtype, functions, f"{label}'"
                    )
                    out.append(dy * inner(*xs))
                else:
                    out.append(compile_expression(rule, {**env, "dy": dy}, dtype, functions))
            _record(label, names, xs, dy, out)
            return out if len(out) > 1 else out[0]

        return y, grad

    return f


def _decorated_vjp(factor: tf.Tensor, label: str) -> Callable[[tf.Tensor], tf.Tensor]:
    """TensorFlow issue #34503's pattern: the gradient function is itself a
    ``tf.custom_gradient`` function, of ``dy`` alone, with ``factor = F(x)`` captured
    from the enclosing scope. Its own gradient can only be the one for its input ``dy``
    (``ddy * F``); the second-order rule for ``x`` that its author wrote has no input to
    attach to, so whatever the second derivative is, it does not come from that rule.
    """

    @tf.custom_gradient
    def vjp(dy: tf.Tensor):
        def grad2(ddy: tf.Tensor):
            out = ddy * factor
            _record(label, ["dy"], [dy], ddy, [out])
            return out

        return dy * factor, grad2

    return vjp


def compile_functions(case_functions: Sequence[CaseFunction], dtype: tf.DType) -> dict:
    """The case's own functions as TensorFlow callables (each may call earlier ones)."""
    return shared_functions(case_functions, dtype, KERNELS, _custom)


def build_implementation(
    impl: Implementation,
    names: Sequence[str],
    dtype: tf.DType,
    case_functions: Sequence[CaseFunction] = (),
) -> Callable[..., tf.Tensor]:
    """The implementation as a function of keyword tensors (one 1-D batch per input).

    Its result always has the batch's shape: an implementation that does not depend on
    its inputs (``2``) gives a scalar, broadcast here, so its derivatives are the
    framework's answer for a constant (``None``: ``missing``) rather than a shape error.
    """
    if impl.registered:
        fn = registry.get(impl.registered).factory(tf, dtype)
        return _batched(lambda **xs: fn(**xs))
    return _batched(shared_build(impl, names, dtype, case_functions, KERNELS, _custom))


def _batched(fn: Callable[..., tf.Tensor]) -> Callable[..., tf.Tensor]:
    def call(**xs: tf.Tensor) -> tf.Tensor:
        y = fn(**xs)
        first = next(iter(xs.values()))
        if y.shape != first.shape:  # static shapes: no op is added otherwise
            y = tf.broadcast_to(y, tf.shape(first))
        return y

    return call
