"""The operator table's elementary functions: exponentials, logarithms, roots, the
trigonometric and hyperbolic functions and their inverses."""

from __future__ import annotations

import math

from harness.operators import arb, arb_special, mp_elementary, mp_special
from harness.operators.entry import ALL, op, series_rule
from harness.operators.model import Sampling

_m, _s = mp_elementary, mp_special

__all__ = ["ENTRIES"]

INF = float("inf")
#: The float nearest π/2, where tan has its pole (not a float).
HALF_PI = math.pi / 2
#: Where XLA's (and Eigen's) fast float32 tanh switches formula: tanh(x) = x below
#: 0.0004, a rational approximation up to the clamp 7.90531110763549805
#: (7.99881172180175781 with FMA), +-1 beyond (xla/service/llvm_ir/math_ops.cc).
TANH_SWITCHES = tuple(
    s * c for c in (0.0004, 7.90531110763549805, 7.99881172180175781) for s in (1.0, -1.0)
)


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
        sampling=Sampling(0.0, INF, (0.0, 1.0)),
    ),
    op(
        "log1p",
        "x > -1",
        _m.log1p,
        series_rule(arb.log1p, lambda x0: x0.log1p()),
        tf="tf.math.log1p",
        jax="jnp.log1p",
        torch="torch.log1p",
        sampling=Sampling(-1.0, INF, (-1.0, 0.0)),
    ),
    op(
        "sqrt",
        "x >= 0 (no derivative at 0)",
        _m.sqrt,
        series_rule(arb.sqrt),
        tf="tf.sqrt",
        jax="jnp.sqrt",
        torch="torch.sqrt",
        sampling=Sampling(0.0, INF, (0.0, 1.0)),
    ),
    op(
        "exp2",
        ALL,
        _m.exp2,
        series_rule(arb.exp2),
        tf="tf.experimental.numpy.exp2",
        jax="jnp.exp2",
        torch="torch.exp2",
    ),
    op(
        "log2",
        "x > 0",
        _m.log2,
        series_rule(arb.log2),
        tf="tf.experimental.numpy.log2",
        jax="jnp.log2",
        torch="torch.log2",
        sampling=Sampling(0.0, INF, (0.0, 1.0, 2.0)),
    ),
    # Powers and roots (pow, of two arguments, is with the n-ary functions).
    op(
        "square",
        ALL,
        _m.square,
        series_rule(lambda s, x0: s * s),
        tf="tf.math.square",
        jax="jnp.square",
        torch="torch.square",
    ),
    op(
        "reciprocal",
        "x != 0",
        _m.reciprocal,
        series_rule(arb.reciprocal),
        tf="tf.math.reciprocal",
        jax="jnp.reciprocal",
        torch="torch.reciprocal",
        sampling=Sampling(special=(0.0, 1.0, -1.0)),
    ),
    op(
        "rsqrt",
        "x > 0",
        _m.rsqrt,
        series_rule(arb.rsqrt),
        tf="tf.math.rsqrt",
        jax="jax.lax.rsqrt",
        torch="torch.rsqrt",
        sampling=Sampling(0.0, INF, (0.0, 1.0)),
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
        sampling=Sampling(special=(0.0, HALF_PI, -HALF_PI)),
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
        sampling=Sampling(special=(0.0, *TANH_SWITCHES)),
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
        "sinc",
        "every real x (sin(πx)/(πx), 1 at 0)",
        _m.sinc,
        series_rule(arb_special.sinc),
        tf="tf.experimental.numpy.sinc",
        jax="jnp.sinc",
        torch="torch.sinc",
        sampling=Sampling(special=(0.0, 0.5, -0.5, 1.0, -1.0, 2.0)),
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
        sampling=Sampling(1.0, INF, (1.0,)),
    ),
    op(
        "atanh",
        "-1 < x < 1",
        _s.atanh,
        series_rule(arb_special.atanh),
        tf="tf.math.atanh",
        jax="jnp.arctanh",
        torch="torch.atanh",
        sampling=Sampling(-1.0, 1.0, (-1.0, 0.0, 1.0)),
    ),
)
