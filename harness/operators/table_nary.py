"""The operator table's kinks (``abs``, ``maximum``, ``minimum``) and functions of two or
more arguments."""

from __future__ import annotations

from harness.operators import arb, arb_nary, mp_jets
from harness.operators.entry import ALL, op
from harness.operators.model import EVERYWHERE, ArbRule, Kernel, Sampling

__all__ = ["ENTRIES"]

INF = float("inf")


ENTRIES = (
    # Kinks.
    op(
        "abs",
        ALL + " (no derivative at 0)",
        mp_jets.absolute,
        ArbRule(jet=arb.absolute_jet, line=arb.absolute_line),
        tf="tf.abs",
        jax="jnp.abs",
        torch="torch.abs",
        pointwise=False,
    ),
    op(
        "maximum",
        "every x, y (no derivative where x = y and the slopes differ)",
        mp_jets.maximum,
        ArbRule(jet=arb.maximum_jet, line=arb.maximum_line),
        tf="tf.maximum",
        jax="jnp.maximum",
        torch="torch.maximum",
        arity=(2, 2),
        pointwise=False,
    ),
    op(
        "minimum",
        "every x, y (no derivative where x = y and the slopes differ)",
        mp_jets.minimum,
        ArbRule(jet=arb.minimum_jet, line=arb.minimum_line),
        tf="tf.minimum",
        jax="jnp.minimum",
        torch="torch.minimum",
        arity=(2, 2),
        pointwise=False,
    ),
    # Functions of two or more arguments.
    op(
        "atan2",
        "(y, x) not (0, 0); no derivative on the cut y = 0, x < 0",
        mp_jets.atan2,
        ArbRule(jet=arb_nary.atan2_jet, line=arb_nary.atan2_line),
        tf="tf.math.atan2",
        jax="jnp.arctan2",
        torch="torch.atan2",
        arity=(2, 2),
        pointwise=False,
        sampling=Sampling(special=(0.0, 1.0, -1.0)),
    ),
    op(
        "hypot",
        "every x, y (no derivative at the origin)",
        mp_jets.hypot,
        ArbRule(jet=arb_nary.hypot_jet, line=arb_nary.hypot_line),
        tf="tf.experimental.numpy.hypot",
        jax="jnp.hypot",
        torch="torch.hypot",
        arity=(2, 2),
        pointwise=False,
    ),
    op(
        "logaddexp",
        "every x, y",
        mp_jets.logsumexp,
        ArbRule(jet=arb_nary.logsumexp_jet, line=arb_nary.logsumexp_line),
        tf="tf.experimental.numpy.logaddexp",
        jax="jnp.logaddexp",
        torch="torch.logaddexp",
        arity=(2, 2),
        pointwise=False,
    ),
    op(
        "xlogy",
        "y > 0, or x = 0 (value 0)",
        mp_jets.xlogy,
        ArbRule(jet=arb_nary.xlogy_jet, line=arb_nary.xlogy_line),
        tf="tf.math.xlogy",
        jax="jax.scipy.special.xlogy",
        torch="torch.xlogy",
        arity=(2, 2),
        pointwise=False,
        sampling=(EVERYWHERE, Sampling(0.0, INF, (0.0, 1.0))),
    ),
    op(
        "xlog1py",
        "y > -1, or x = 0 (value 0)",
        mp_jets.xlog1py,
        ArbRule(jet=arb_nary.xlog1py_jet, line=arb_nary.xlog1py_line),
        tf="tf.math.xlog1py",
        jax="jax.scipy.special.xlog1py",
        torch="torch.special.xlog1py",
        arity=(2, 2),
        pointwise=False,
        sampling=(EVERYWHERE, Sampling(-1.0, INF, (-1.0, 0.0))),
    ),
    op(
        "pow",
        "x >= 0 (at 0 one-sided, for a positive exponent), or an integer exponent",
        mp_jets.power,
        ArbRule(jet=arb.power_jet, line=arb.power_line),
        tf="tf.math.pow",
        jax="jnp.power",
        torch="torch.pow",
        arity=(2, 2),
        pointwise=False,
        sampling=(Sampling(0.0, INF, (0.0, 1.0)), Sampling(special=(0.0, 1.0, 2.0, -1.0, 0.5))),
    ),
    op(
        "logsumexp",
        "every real argument",
        mp_jets.logsumexp,
        ArbRule(jet=arb_nary.logsumexp_jet, line=arb_nary.logsumexp_line),
        tf=Kernel("tf.math.reduce_logsumexp", "axis=0", stacked=True),
        jax=Kernel("jax.scipy.special.logsumexp", "axis=0", stacked=True),
        torch=Kernel("torch.logsumexp", "dim=0", stacked=True),
        arity=(2, 8),
        pointwise=False,
    ),
    op(
        "log_softmax",
        "every real argument",
        mp_jets.log_softmax,
        ArbRule(jet=arb_nary.log_softmax_jet, line=arb_nary.log_softmax_line),
        tf=Kernel("tf.nn.log_softmax", "axis=0", stacked=True, first=True),
        jax=Kernel("jax.nn.log_softmax", "axis=0", stacked=True, first=True),
        torch=Kernel("torch.log_softmax", "dim=0", stacked=True, first=True),
        arity=(2, 8),
        pointwise=False,
    ),
)
