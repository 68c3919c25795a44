"""JAX's reproducers (:mod:`harness.backends.snippet`): the kernels as source text, a
case's custom gradient as a ``jax.custom_vjp`` function (a forward rule as a
``jax.custom_jvp`` one), the methods as the harness
nests them (:mod:`harness.backends.jax.derivatives`). No JAX here: this writes text."""

from __future__ import annotations

from collections.abc import Sequence

from harness.backends.snippet import (
    Style,
    Table,
    expression_text,
    operator_texts,
    rule_texts,
    tangent_text,
    write_functions,
)
from harness.cases import expressions as ex
from harness.cases.model import Case

__all__ = ["STYLE", "TABLE", "write"]

TABLE = Table(
    constant="jnp.asarray({value}, DTYPE)",
    pi="jnp.asarray(math.pi, DTYPE)",
    functions=operator_texts("jax", "jnp.stack(jnp.broadcast_arrays(*a))"),
    where="jnp.where",
    compare={
        "lt": "jnp.less",
        "le": "jnp.less_equal",
        "gt": "jnp.greater",
        "ge": "jnp.greater_equal",
        "eq": "jnp.equal",
        "ne": "jnp.not_equal",
    },
    integer_pow=True,
)

_JVP = """def jvp(f, i):  # forward mode: one jax.jvp per order, a tangent of ones
    def g(*xs):
        tangents = tuple(jnp.ones_like(x) if j == i else jnp.zeros_like(x) for j, x in enumerate(xs))
        return jax.jvp(f, xs, tangents)[1]
    return g"""
_TAYLOR = """def taylor(f, i, top):  # jax.experimental.jet: f(x + t)'s series to order top
    def g(*xs):
        series = tuple([jnp.ones_like(x) if j == i else jnp.zeros_like(x)] + [jnp.zeros_like(x)] * (top - 1) for j, x in enumerate(xs))
        return jnp.stack(jet.jet(f, xs, series)[1])  # every term, as the harness computes them
    return g"""

STYLE = Style(
    title="JAX",
    header='import math\n\nimport jax\nimport jax.numpy as jnp\nfrom jax.experimental import jet\n\njax.config.update("jax_enable_x64", True)',
    dtypes={
        "float16": "jnp.float16",
        "bfloat16": "jnp.bfloat16",
        "float32": "jnp.float32",
        "float64": "jnp.float64",
    },
    scalar="jnp.concatenate([jnp.array([float.fromhex({hex!r})], DTYPE), jnp.ones(BATCH - 1, DTYPE)])",
    helpers={"forward": _JVP, "forward_over_reverse": _JVP, "taylor": _TAYLOR},
    # jax.grad of a function of scalars, vmapped over the batch as the harness does.
    nest={"reverse": "jax.grad({f}, argnums={i})", "forward": "jvp({f}, {i})"},
    modes={"eager": "jax.vmap({d})", "jit": "jax.jit(jax.vmap({d}))"},
    taylor="taylor({f}, {i}, {top})",
    pick="got = got[:, {n} - 1]  # the n-th term of the series",
    value="{got}[0]",
    batch=64,
)


def _custom_jvp(name: str, body: ex.Node, tangent, params: Sequence[str], functions) -> str:
    """A ``jax.custom_jvp`` function ``name`` with the forward rule, as the back end
    builds it (the output's tangent the sum of the inputs' shares)."""
    args = ", ".join(params)
    env = {p: p for p in params}
    dots = {p: f"{p}_dot" for p in params}
    return (
        f"@jax.custom_jvp\ndef {name}({args}):\n    return {expression_text(body, env, TABLE, functions)}\n\n\n"
        f"@{name}.defjvp\ndef {name}_jvp(primals, tangents):\n"
        f"    ({args},), ({', '.join(dots.values())},) = primals, tangents\n"
        f"    y = {expression_text(body, env, TABLE, functions)}\n"
        f"    return y, jnp.broadcast_to({tangent_text(tangent, params, functions, TABLE, dots)}, jnp.shape(y)).astype(DTYPE)"
    )


def _custom(
    name: str, body: ex.Node, gradient, params: Sequence[str], functions, tangent=None
) -> str | None:
    """A ``jax.custom_jvp`` function ``name`` with the forward rule where there is one,
    else a ``jax.custom_vjp`` one with the gradient rules; a nested rule is a
    ``jax.custom_vjp`` function of its own (``{name}_d{input}``, with its rules), called
    with the inputs and times ``dy``, as the back end builds it (``None``: TensorFlow's
    decorated gradient function, which JAX has no place for)."""
    if tangent:
        return _custom_jvp(name, body, tangent, params, functions)
    found = rule_texts(name, gradient, params, functions, TABLE, _custom)
    if found is None:
        return None
    blocks, texts = found
    if any(t is None for t in texts.values()):
        return None  # jax.custom_vjp needs a cotangent for every input
    args = ", ".join(params)
    env = {p: p for p in params}
    rules = [f"jnp.broadcast_to({texts[p]}, jnp.shape({p})).astype(DTYPE)" for p in params]
    return "\n\n\n".join(
        [
            *blocks,
            f"@jax.custom_vjp\ndef {name}({args}):\n    return {expression_text(body, env, TABLE, functions)}\n\n\n"
            f"def {name}_fwd({args}):\n    return {name}({args}), ({args},)\n\n\n"
            f"def {name}_bwd(saved, dy):\n    {args}, = saved\n    return ({', '.join(rules)},)\n\n\n"
            f"{name}.defvjp({name}_fwd, {name}_bwd)",
        ]
    )


def write(case: Case | None, implementation: str | None, names: Sequence[str], expression=None):
    """``(blocks, "f")``: ``f`` of ``names`` is the implementation (or ``expression``);
    ``None`` where a reproducer cannot be written (TensorFlow's decorated gradient
    function, a registered implementation without a JAX port)."""
    return write_functions(
        case,
        implementation,
        names,
        expression,
        TABLE,
        _custom,
        every_input=True,
        port=("jax", "jax"),
    )
