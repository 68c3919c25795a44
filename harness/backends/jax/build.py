"""Compile case expressions and implementations to JAX.

Every named function maps to JAX's own kernel, the operator table's (:mod:`harness.operators`:
``softplus`` is ``jax.nn.softplus``, with its ``custom_jvp`` rule; ``lgamma`` is ``jax.scipy.special.gammaln``) and every operator
to the Python operator on arrays (``b**2`` is ``jnp.power``, as in user code). Numbers
become arrays of the working dtype.

A case's custom gradient (a rule for each input in terms of the inputs and the upstream
gradient ``dy``) is a vector-Jacobian product: it becomes a ``jax.custom_vjp`` function,
the form a user porting a ``tf.custom_gradient`` writes. JAX has no forward-mode rule
for it (``jvp`` of a ``custom_vjp`` function raises), and ``jax.experimental.jet`` does not
use custom rules; both show in the results as JAX reports them. A case's forward rule
(``tangent``: each input's share of the output's tangent, in the inputs and ``dx``)
becomes a ``jax.custom_jvp`` function, the rule JAX users write most; JAX's reverse mode
transposes it. A JAX function takes one custom rule: where a case gives both, the forward
rule is the one JAX uses (what a port to JAX keeps). What has no place in
JAX is :class:`harness.backends.sweep.NotApplicable`: a rule that leaves an input without
a gradient (a ``custom_vjp`` must give every input a cotangent), TensorFlow issue
#34503's decorated gradient function, a registered implementation without a JAX
port (:func:`harness.registered.register.port`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import jax
import jax.numpy as jnp
import jax.scipy.special  # the kernels of the operator table name jax.scipy.special

from harness.backends.sweep import NotApplicable
from harness.backends.walker import (
    Kernels,
    operator_functions,
    registered_port,
    tangent_sum,
    walk,
)
from harness.backends.walker import build_implementation as shared_build
from harness.cases import expressions as ex
from harness.cases.model import CaseFunction, Implementation, NestedRule, Rule

__all__ = ["DTYPES", "build_implementation", "compile_expression"]

DTYPES = {
    "float16": jnp.float16,
    "bfloat16": jnp.bfloat16,
    "float32": jnp.float32,
    "float64": jnp.float64,
}


def _stack(*args):
    shape = jnp.broadcast_shapes(*(jnp.shape(a) for a in args))
    return jnp.stack([jnp.broadcast_to(a, shape) for a in args])


_COMPARE = {
    "lt": jnp.less,
    "le": jnp.less_equal,
    "gt": jnp.greater,
    "ge": jnp.greater_equal,
    "eq": jnp.equal,
    "ne": jnp.not_equal,
}


#: The kernels for the expression language (integer exponents as Python ints).
KERNELS = Kernels(
    constant=lambda value, dtype: jnp.asarray(value, dtype),
    operators=operator_functions("jax", {"jnp": jnp, "jax": jax}, _stack),
    compare=_COMPARE,
    where=jnp.where,
    integer_pow=True,
)


def compile_expression(node: ex.Node, env: Mapping, dtype, functions: Mapping | None = None):
    """The value of ``node`` over the arrays in ``env``."""
    return walk(node, env, dtype, KERNELS, functions)


def _check_rules(gradient: Mapping[str, Rule], names: Sequence[str], label: str) -> None:
    missing = [n for n in names if n not in gradient]
    if missing:
        raise NotApplicable(
            f"{label}'s custom gradient gives no rule for {', '.join(missing)}; a "
            "jax.custom_vjp rule must return a cotangent for every input"
        )
    for rule in gradient.values():
        if isinstance(rule, NestedRule) and rule.pattern == "decorated_grad_fn":
            raise NotApplicable(
                f"{label}'s second-order rule is TensorFlow's decorated gradient function "
                "(issue #34503); JAX has no place for it"
            )
        if isinstance(rule, NestedRule):
            _check_rules(rule.gradient, names, f"{label}'")


def _custom_jvp(expression, tangent: Mapping[str, ex.Node], names, dtype, functions):
    """A ``jax.custom_jvp`` function of ``names``: the output's tangent is the sum of the
    inputs' shares (each rule in the inputs and ``dx``, that input's tangent)."""

    @jax.custom_jvp
    def f(*xs):
        return compile_expression(expression, dict(zip(names, xs)), dtype, functions)

    def jvp(primals, tangents):
        y = compile_expression(expression, dict(zip(names, primals)), dtype, functions)
        dy = tangent_sum(
            tangent,
            names,
            primals,
            tangents,
            lambda rule, env: compile_expression(rule, env, dtype, functions),
        )
        return y, jnp.broadcast_to(dy, jnp.shape(y)).astype(dtype)

    f.defjvp(jvp)
    return f


def _custom(expression, gradient, names, dtype, functions, label, tangent=None):
    """A ``jax.custom_jvp`` function of ``names`` with the case's forward rule, or a
    ``jax.custom_vjp`` one with its gradient rules."""
    if tangent:
        return _custom_jvp(expression, tangent, names, dtype, functions)
    _check_rules(gradient, names, label)

    @jax.custom_vjp
    def f(*xs):
        return compile_expression(expression, dict(zip(names, xs)), dtype, functions)

    def fwd(*xs):
        # The primal computed here, as JAX's documentation writes a fwd (calling f
        # instead would put a custom_vjp call under an outer jvp: forward over reverse
        # would raise where the user's code does not).
        return compile_expression(expression, dict(zip(names, xs)), dtype, functions), xs

    def bwd(xs, dy):
        env = dict(zip(names, xs))
        out = []
        for name in names:
            rule = gradient[name]
            if isinstance(rule, NestedRule):
                inner = _custom(rule.expression, rule.gradient, names, dtype, functions, label)
                value = dy * inner(*xs)
            else:
                value = compile_expression(rule, {**env, "dy": dy}, dtype, functions)
            # A cotangent has its input's shape (a rule may be a constant).
            out.append(jnp.broadcast_to(value, jnp.shape(env[name])).astype(dtype))
        return tuple(out)

    f.defvjp(fwd, bwd)
    return f


def build_implementation(
    impl: Implementation, names: Sequence[str], dtype, case_functions: Sequence[CaseFunction] = ()
) -> Callable:
    """The implementation as a function of keyword arrays, its result of the inputs'
    shape (a constant is broadcast)."""
    if impl.registered:
        fn = registered_port(impl.registered, "jax", "JAX", jax, dtype)
    else:
        fn = shared_build(impl, names, dtype, case_functions, KERNELS, _custom)

    def call(**xs):
        y = fn(**xs)
        first = next(iter(xs.values()))
        return jnp.broadcast_to(y, jnp.shape(first)).astype(dtype)

    return call
