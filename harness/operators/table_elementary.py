"""The operator table's elementary functions: exponentials, logarithms, roots, the
trigonometric and hyperbolic functions and their inverses."""

from __future__ import annotations

from harness.operators import arb, arb_special, mp_elementary, mp_special
from harness.operators.entry import ALL, op, series_rule

_m, _s = mp_elementary, mp_special

__all__ = ["ENTRIES"]

ENTRIES = (
    # Exponentials and logarithms.
    op(
        "exp",
        ALL,
        _m.exp,
        series_rule(lambda s, x0: s.exp()),
        tf="tf.exp",
        jax="jnp.exp",
        torch="torch.exp",
    ),
    op(
        "expm1",
        ALL,
        _m.expm1,
        series_rule(lambda s, x0: s.exp(), lambda x0: x0.expm1()),
        tf="tf.math.expm1",
        jax="jnp.expm1",
        torch="torch.expm1",
    ),
    op(
        "log",
        "x > 0",
        _m.log,
        series_rule(arb.log),
        tf="tf.math.log",
        jax="jnp.log",
        torch="torch.log",
    ),
    op(
        "log1p",
        "x > -1",
        _m.log1p,
        series_rule(arb.log1p, lambda x0: x0.log1p()),
        tf="tf.math.log1p",
        jax="jnp.log1p",
        torch="torch.log1p",
    ),
    op(
        "sqrt",
        "x >= 0 (no derivative at 0)",
        _m.sqrt,
        series_rule(arb.sqrt),
        tf="tf.sqrt",
        jax="jnp.sqrt",
        torch="torch.sqrt",
    ),
    # Trigonometric and hyperbolic.
    op(
        "sin",
        ALL,
        _m.sin,
        series_rule(lambda s, x0: s.sin()),
        tf="tf.sin",
        jax="jnp.sin",
        torch="torch.sin",
    ),
    op(
        "cos",
        ALL,
        _m.cos,
        series_rule(lambda s, x0: s.cos()),
        tf="tf.cos",
        jax="jnp.cos",
        torch="torch.cos",
    ),
    op(
        "tan",
        "x not an odd multiple of pi/2",
        _m.tan,
        series_rule(lambda s, x0: s.tan()),
        tf="tf.tan",
        jax="jnp.tan",
        torch="torch.tan",
    ),
    op(
        "sinh",
        ALL,
        _m.sinh,
        series_rule(lambda s, x0: (s.exp() - (-s).exp()) / 2, lambda x0: x0.sinh()),
        tf="tf.sinh",
        jax="jnp.sinh",
        torch="torch.sinh",
    ),
    op(
        "cosh",
        ALL,
        _m.cosh,
        series_rule(lambda s, x0: (s.exp() + (-s).exp()) / 2, lambda x0: x0.cosh()),
        tf="tf.cosh",
        jax="jnp.cosh",
        torch="torch.cosh",
    ),
    op(
        "tanh",
        ALL,
        _m.tanh,
        series_rule(arb.tanh, lambda x0: x0.tanh(), arb.tanh_at_zero),
        tf="tf.tanh",
        jax="jnp.tanh",
        torch="torch.tanh",
    ),
    op(
        "atan",
        ALL,
        _s.atan,
        series_rule(lambda s, x0: s.atan()),
        tf="tf.math.atan",
        jax="jnp.arctan",
        torch="torch.atan",
    ),
    op(
        "asinh",
        ALL,
        _s.asinh,
        series_rule(arb_special.asinh),
        tf="tf.math.asinh",
        jax="jnp.arcsinh",
        torch="torch.asinh",
    ),
    op(
        "acosh",
        "x >= 1 (no derivative at 1)",
        _s.acosh,
        series_rule(arb_special.acosh, exact=arb_special.acosh_at_one),
        tf="tf.math.acosh",
        jax="jnp.arccosh",
        torch="torch.acosh",
    ),
    op(
        "atanh",
        "-1 < x < 1",
        _s.atanh,
        series_rule(arb_special.atanh),
        tf="tf.math.atanh",
        jax="jnp.arctanh",
        torch="torch.atanh",
    ),
)
