"""Compile case expressions and implementations to TensorFlow.

Every named function maps to TensorFlow's own kernel (``softplus`` is
``tf.math.softplus`` with its registered gradient) and every operator to the Python
operator on tensors (``b**2`` is ``tf.pow`` exactly as in user code), so a case tests
the framework, not a re-implementation. Numbers become constants of the working dtype;
no arithmetic is done in Python.

This module imports TensorFlow; only the evaluation stage imports it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import tensorflow as tf

from . import expressions as ex
from . import registry
from .cases import Implementation, NestedRule, Rule

__all__ = ["build_implementation", "compile_expression"]

_UNARY: dict[str, Callable[[tf.Tensor], tf.Tensor]] = {
    "exp": tf.exp,
    "expm1": tf.math.expm1,
    "log": tf.math.log,
    "log1p": tf.math.log1p,
    "sqrt": tf.sqrt,
    "sin": tf.sin,
    "cos": tf.cos,
    "tan": tf.tan,
    "sinh": tf.sinh,
    "cosh": tf.cosh,
    "tanh": tf.tanh,
    "sigmoid": tf.sigmoid,
    "softplus": tf.math.softplus,
    "abs": tf.abs,
}
_BINARY_FUNCS = {"maximum": tf.maximum, "minimum": tf.minimum}
_COMPARE = {
    "lt": tf.less,
    "le": tf.less_equal,
    "gt": tf.greater,
    "ge": tf.greater_equal,
    "eq": tf.equal,
    "ne": tf.not_equal,
}


def compile_expression(node: ex.Node, env: Mapping[str, tf.Tensor], dtype: tf.DType) -> tf.Tensor:
    """Build the TensorFlow ops of ``node`` over the tensors in ``env``."""

    def go(n: ex.Node) -> tf.Tensor:
        if isinstance(n, ex.Var):
            return env[n.name]
        if isinstance(n, ex.Num):
            return tf.constant(n.value, dtype)
        if isinstance(n, ex.Const):
            return tf.constant(math.pi, dtype)
        if isinstance(n, ex.Unary):
            return -go(n.arg)
        if isinstance(n, ex.Binary):
            left, right = go(n.left), go(n.right)
            if n.op == "add":
                return left + right
            if n.op == "sub":
                return left - right
            if n.op == "mul":
                return left * right
            if n.op == "div":
                return left / right
            return left**right
        if isinstance(n, ex.Call):
            if n.func in _UNARY:
                return _UNARY[n.func](go(n.args[0]))
            return _BINARY_FUNCS[n.func](go(n.args[0]), go(n.args[1]))
        if isinstance(n, ex.Where):
            cond = _COMPARE[n.cond.op](go(n.cond.left), go(n.cond.right))
            return tf.where(cond, go(n.then), go(n.otherwise))
        raise TypeError(f"cannot compile {n!r}")

    return go(node)


def _custom(
    expression: ex.Node,
    gradient: Mapping[str, Rule],
    names: Sequence[str],
    dtype: tf.DType,
) -> Callable[..., tf.Tensor]:
    """A ``tf.custom_gradient`` function of ``names`` with the case's gradient rules.

    A rule that is an expression gives the vector-Jacobian product directly (it sees the
    inputs and the upstream gradient ``dy``). A nested rule gives ``dy * F(inputs)``
    where ``F`` is itself a custom-gradient function: the documented pattern for
    writing a second-order rule (seed 004's ``first_order_custom(unused_x)``).
    """

    @tf.custom_gradient
    def f(*xs: tf.Tensor):
        env = dict(zip(names, xs))
        y = compile_expression(expression, env, dtype)

        def grad(dy: tf.Tensor):
            out = []
            for name in names:
                rule = gradient.get(name)
                if rule is None:
                    out.append(None)  # no rule: the framework reports no gradient
                elif isinstance(rule, NestedRule):
                    inner = _custom(rule.expression, rule.gradient, names, dtype)
                    out.append(dy * inner(*xs))
                else:
                    out.append(compile_expression(rule, {**env, "dy": dy}, dtype))
            return out if len(out) > 1 else out[0]

        return y, grad

    return f


def build_implementation(
    impl: Implementation, names: Sequence[str], dtype: tf.DType
) -> Callable[..., tf.Tensor]:
    """The implementation as a function of keyword tensors (one 1-D batch per input)."""
    if impl.registered:
        fn = registry.get(impl.registered).factory(tf, dtype)
        return lambda **xs: fn(**xs)
    if impl.gradient:
        custom = _custom(impl.expression, impl.gradient, names, dtype)
        return lambda **xs: custom(*(xs[n] for n in names))
    expression = impl.expression
    return lambda **xs: compile_expression(expression, xs, dtype)
