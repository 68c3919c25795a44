"""The operator table's activations and special functions (error function, log-gamma,
digamma)."""

from __future__ import annotations

import math

from harness.operators import arb, arb_special, mp_elementary, mp_special
from harness.operators.entry import ALL, op, series_rule
from harness.operators.model import Kernel, NoKernel, Sampling

_m, _s = mp_elementary, mp_special

__all__ = ["ENTRIES"]

#: Where TensorFlow's Softplus kernel switches formula (softplus_op.h): x itself above
#: -(log eps + 2), exp(x) below log eps + 2, for eps = 2**-10, 2**-7, 2**-23, 2**-52
#: (float16, bfloat16, float32, float64); PyTorch's softplus returns x above its threshold
#: 20. TensorFlow's log_sigmoid is -softplus(-x): the same points.
SOFTPLUS_SWITCHES = (
    *(s * (m * math.log(2) - 2) for m in (10, 7, 23, 52) for s in (1.0, -1.0)),
    20.0,
    -20.0,
)

#: Γ's poles (0, -1, ..., -4) and log Γ's zeros (1, 2).
GAMMA_POINTS = (0.0, -1.0, -2.0, -3.0, -4.0, 1.0, 2.0)


ENTRIES = (
    # Activations.
    op(
        "sigmoid",
        ALL,
        _m.sigmoid,
        series_rule(arb.sigmoid),
        tf="tf.sigmoid",
        jax="jax.nn.sigmoid",
        torch="torch.sigmoid",
    ),
    op(
        "softplus",
        ALL,
        _m.softplus,
        series_rule(arb.softplus, arb.softplus_value),
        tf="tf.math.softplus",
        jax="jax.nn.softplus",
        torch="torch.nn.functional.softplus",
        sampling=Sampling(special=(0.0, *SOFTPLUS_SWITCHES)),
    ),
    op(
        "log_sigmoid",
        ALL,
        _s.log_sigmoid,
        series_rule(arb.log_sigmoid, lambda x0: -arb.softplus_value(-x0)),
        tf="tf.math.log_sigmoid",
        jax="jax.nn.log_sigmoid",
        torch="torch.nn.functional.logsigmoid",
        sampling=Sampling(special=(0.0, *SOFTPLUS_SWITCHES)),
    ),
    op(
        "silu",
        ALL,
        _s.silu,
        series_rule(arb.silu),
        tf="tf.nn.silu",
        jax="jax.nn.silu",
        torch="torch.nn.functional.silu",
    ),
    op(
        "mish",
        ALL,
        _s.mish,
        series_rule(arb.mish),
        tf=NoKernel(
            "TensorFlow has no mish in tf.math or tf.nn (TensorFlow Addons, which had "
            "one, is no longer maintained)"
        ),
        jax="jax.nn.mish",
        torch="torch.nn.functional.mish",
    ),
    op(
        "softsign",
        ALL + " (no second derivative at 0)",
        _s.softsign,
        series_rule(arb.softsign, exact=arb.softsign_at_zero),
        tf="tf.nn.softsign",
        jax="jax.nn.soft_sign",
        torch="torch.nn.functional.softsign",
    ),
    op(
        "elu",
        ALL + " (no second derivative at 0)",
        _s.elu,
        series_rule(arb_special.elu, arb_special.elu_value, arb_special.elu_at_zero),
        tf="tf.nn.elu",
        jax="jax.nn.elu",
        torch="torch.nn.functional.elu",
    ),
    op(
        "selu",
        ALL + " (no derivative at 0)",
        _s.selu,
        series_rule(arb_special.selu, arb_special.selu_value, arb_special.selu_at_zero),
        tf="tf.nn.selu",
        jax="jax.nn.selu",
        torch="torch.nn.functional.selu",
    ),
    op(
        "gelu",
        ALL,
        _s.gelu,
        series_rule(arb_special.gelu),
        tf=Kernel("tf.nn.gelu", "approximate=False"),
        jax=Kernel("jax.nn.gelu", "approximate=False"),
        torch=Kernel("torch.nn.functional.gelu", 'approximate="none"'),
    ),
    op(
        "gelu_tanh",
        ALL,
        _s.gelu_tanh,
        series_rule(arb_special.gelu_tanh),
        tf=Kernel("tf.nn.gelu", "approximate=True"),
        jax=Kernel("jax.nn.gelu", "approximate=True"),
        torch=Kernel("torch.nn.functional.gelu", 'approximate="tanh"'),
    ),
    # Special functions.
    op(
        "erf",
        ALL,
        _s.erf,
        series_rule(lambda s, x0: s.erf()),
        tf="tf.math.erf",
        jax="jax.scipy.special.erf",
        torch="torch.special.erf",
    ),
    op(
        "erfc",
        ALL,
        _s.erfc,
        series_rule(lambda s, x0: s.erfc()),
        tf="tf.math.erfc",
        jax="jax.scipy.special.erfc",
        torch="torch.special.erfc",
    ),
    op(
        "erfinv",
        "-1 < x < 1",
        _s.erfinv,
        series_rule(arb_special.erfinv),
        tf="tf.math.erfinv",
        jax="jax.scipy.special.erfinv",
        torch="torch.special.erfinv",
        sampling=Sampling(-1.0, 1.0, (-1.0, 0.0, 1.0)),
    ),
    op(
        "lgamma",
        "x not a non-positive integer (log|Γ(x)|)",
        _s.lgamma,
        series_rule(arb_special.lgamma),
        tf="tf.math.lgamma",
        jax="jax.scipy.special.gammaln",
        torch="torch.lgamma",
        sampling=Sampling(special=GAMMA_POINTS),
    ),
    op(
        "digamma",
        "x not a non-positive integer",
        _s.digamma,
        series_rule(arb_special.digamma),
        tf="tf.math.digamma",
        jax="jax.scipy.special.digamma",
        torch="torch.digamma",
        sampling=Sampling(special=GAMMA_POINTS),
    ),
)
