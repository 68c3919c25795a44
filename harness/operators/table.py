"""The operator table: one entry per named function of the expression language.

Each entry says what the operator is (arity, domain), how the reference computes it
(its mpmath rule, its Arb rule or None) and which kernel each framework's back end calls
for it (keyed by the back end's registered name), or why it has none. The parser
(:mod:`harness.cases.expressions`), the two reference engines (:mod:`harness.reference.jets`,
:mod:`harness.reference.balls` and :mod:`harness.reference.series`), the back ends'
builders and the reproducers' source writers all read it. Adding an operator is one
entry here (with its rules in the ``mp_*`` and ``arb`` modules) and its tests;
``tests/test_operators.py`` checks that every operator has its rules and a kernel or a
reason in every registered back end.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.operators import arb, mp_elementary, mp_jets, mp_special
from harness.operators.model import ArbRule, Kernel, NoKernel, Operator

__all__ = ["OPERATORS"]


def _kernel(spec: str | Kernel | NoKernel) -> Kernel | NoKernel:
    return Kernel(spec) if isinstance(spec, str) else spec


def _op(
    name: str,
    domain: str,
    mpmath: Callable,
    rule: ArbRule | None,
    *,
    tf: str | Kernel | NoKernel,
    jax: str | Kernel | NoKernel,
    torch: str | Kernel | NoKernel,
    arity: tuple[int, int] = (1, 1),
    pointwise: bool = True,
) -> Operator:
    kernels = {"tensorflow": _kernel(tf), "jax": _kernel(jax), "torch": _kernel(torch)}
    return Operator(name, arity, domain, mpmath, pointwise, rule, kernels)


def _series(series: Callable, value: Callable | None = None, exact=None) -> ArbRule:
    return ArbRule(series=series, value=value, exact=exact)


_ALL = "every real x"
_m, _s = mp_elementary, mp_special

_ENTRIES = (
    # Exponentials and logarithms.
    _op(
        "exp",
        _ALL,
        _m.exp,
        _series(lambda s, x0: s.exp()),
        tf="tf.exp",
        jax="jnp.exp",
        torch="torch.exp",
    ),
    _op(
        "expm1",
        _ALL,
        _m.expm1,
        _series(lambda s, x0: s.exp(), lambda x0: x0.expm1()),
        tf="tf.math.expm1",
        jax="jnp.expm1",
        torch="torch.expm1",
    ),
    _op(
        "log", "x > 0", _m.log, _series(arb.log), tf="tf.math.log", jax="jnp.log", torch="torch.log"
    ),
    _op(
        "log1p",
        "x > -1",
        _m.log1p,
        _series(arb.log1p, lambda x0: x0.log1p()),
        tf="tf.math.log1p",
        jax="jnp.log1p",
        torch="torch.log1p",
    ),
    _op(
        "sqrt",
        "x >= 0 (no derivative at 0)",
        _m.sqrt,
        _series(arb.sqrt),
        tf="tf.sqrt",
        jax="jnp.sqrt",
        torch="torch.sqrt",
    ),
    # Trigonometric and hyperbolic.
    _op(
        "sin",
        _ALL,
        _m.sin,
        _series(lambda s, x0: s.sin()),
        tf="tf.sin",
        jax="jnp.sin",
        torch="torch.sin",
    ),
    _op(
        "cos",
        _ALL,
        _m.cos,
        _series(lambda s, x0: s.cos()),
        tf="tf.cos",
        jax="jnp.cos",
        torch="torch.cos",
    ),
    _op(
        "tan",
        "x not an odd multiple of pi/2",
        _m.tan,
        _series(lambda s, x0: s.tan()),
        tf="tf.tan",
        jax="jnp.tan",
        torch="torch.tan",
    ),
    _op(
        "sinh",
        _ALL,
        _m.sinh,
        _series(lambda s, x0: (s.exp() - (-s).exp()) / 2, lambda x0: x0.sinh()),
        tf="tf.sinh",
        jax="jnp.sinh",
        torch="torch.sinh",
    ),
    _op(
        "cosh",
        _ALL,
        _m.cosh,
        _series(lambda s, x0: (s.exp() + (-s).exp()) / 2, lambda x0: x0.cosh()),
        tf="tf.cosh",
        jax="jnp.cosh",
        torch="torch.cosh",
    ),
    _op(
        "tanh",
        _ALL,
        _m.tanh,
        _series(arb.tanh, lambda x0: x0.tanh(), arb.tanh_at_zero),
        tf="tf.tanh",
        jax="jnp.tanh",
        torch="torch.tanh",
    ),
    _op(
        "atan",
        _ALL,
        _s.atan,
        _series(lambda s, x0: s.atan()),
        tf="tf.math.atan",
        jax="jnp.arctan",
        torch="torch.atan",
    ),
    _op("asinh", _ALL, _s.asinh, None, tf="tf.math.asinh", jax="jnp.arcsinh", torch="torch.asinh"),
    _op(
        "acosh",
        "x >= 1 (no derivative at 1)",
        _s.acosh,
        None,
        tf="tf.math.acosh",
        jax="jnp.arccosh",
        torch="torch.acosh",
    ),
    _op(
        "atanh",
        "-1 < x < 1",
        _s.atanh,
        None,
        tf="tf.math.atanh",
        jax="jnp.arctanh",
        torch="torch.atanh",
    ),
    # Activations.
    _op(
        "sigmoid",
        _ALL,
        _m.sigmoid,
        _series(arb.sigmoid),
        tf="tf.sigmoid",
        jax="jax.nn.sigmoid",
        torch="torch.sigmoid",
    ),
    _op(
        "softplus",
        _ALL,
        _m.softplus,
        _series(arb.softplus, arb.softplus_value),
        tf="tf.math.softplus",
        jax="jax.nn.softplus",
        torch="torch.nn.functional.softplus",
    ),
    _op(
        "log_sigmoid",
        _ALL,
        _s.log_sigmoid,
        _series(arb.log_sigmoid, lambda x0: -arb.softplus_value(-x0)),
        tf="tf.math.log_sigmoid",
        jax="jax.nn.log_sigmoid",
        torch="torch.nn.functional.logsigmoid",
    ),
    _op(
        "elu",
        _ALL + " (no second derivative at 0)",
        _s.elu,
        None,
        tf="tf.nn.elu",
        jax="jax.nn.elu",
        torch="torch.nn.functional.elu",
    ),
    _op(
        "selu",
        _ALL + " (no derivative at 0)",
        _s.selu,
        None,
        tf="tf.nn.selu",
        jax="jax.nn.selu",
        torch="torch.nn.functional.selu",
    ),
    _op(
        "gelu",
        _ALL,
        _s.gelu,
        None,
        tf=Kernel("tf.nn.gelu", "approximate=False"),
        jax=Kernel("jax.nn.gelu", "approximate=False"),
        torch=Kernel("torch.nn.functional.gelu", 'approximate="none"'),
    ),
    _op(
        "gelu_tanh",
        _ALL,
        _s.gelu_tanh,
        None,
        tf=Kernel("tf.nn.gelu", "approximate=True"),
        jax=Kernel("jax.nn.gelu", "approximate=True"),
        torch=Kernel("torch.nn.functional.gelu", 'approximate="tanh"'),
    ),
    # Special functions.
    _op(
        "erf",
        _ALL,
        _s.erf,
        _series(lambda s, x0: s.erf()),
        tf="tf.math.erf",
        jax="jax.scipy.special.erf",
        torch="torch.special.erf",
    ),
    _op(
        "erfc",
        _ALL,
        _s.erfc,
        _series(lambda s, x0: s.erfc()),
        tf="tf.math.erfc",
        jax="jax.scipy.special.erfc",
        torch="torch.special.erfc",
    ),
    _op(
        "lgamma",
        "x not a non-positive integer (log|Γ(x)|)",
        _s.lgamma,
        None,
        tf="tf.math.lgamma",
        jax="jax.scipy.special.gammaln",
        torch="torch.lgamma",
    ),
    _op(
        "digamma",
        "x not a non-positive integer",
        _s.digamma,
        None,
        tf="tf.math.digamma",
        jax="jax.scipy.special.digamma",
        torch="torch.digamma",
    ),
    # Kinks.
    _op(
        "abs",
        _ALL + " (no derivative at 0)",
        mp_jets.absolute,
        ArbRule(jet=arb.absolute_jet, line=arb.absolute_line),
        tf="tf.abs",
        jax="jnp.abs",
        torch="torch.abs",
        pointwise=False,
    ),
    _op(
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
    _op(
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
    _op(
        "atan2",
        "(y, x) not (0, 0); no derivative on the cut y = 0, x < 0",
        mp_jets.atan2,
        None,
        tf="tf.math.atan2",
        jax="jnp.arctan2",
        torch="torch.atan2",
        arity=(2, 2),
        pointwise=False,
    ),
    _op(
        "xlogy",
        "y > 0, or x = 0 (value 0)",
        mp_jets.xlogy,
        None,
        tf="tf.math.xlogy",
        jax="jax.scipy.special.xlogy",
        torch="torch.xlogy",
        arity=(2, 2),
        pointwise=False,
    ),
    _op(
        "xlog1py",
        "y > -1, or x = 0 (value 0)",
        mp_jets.xlog1py,
        None,
        tf="tf.math.xlog1py",
        jax="jax.scipy.special.xlog1py",
        torch="torch.special.xlog1py",
        arity=(2, 2),
        pointwise=False,
    ),
    _op(
        "pow",
        "x > 0, or a constant integer exponent (x != 0 if negative)",
        mp_jets.power,
        ArbRule(jet=arb.power_jet, line=arb.power_line),
        tf="tf.math.pow",
        jax="jnp.power",
        torch="torch.pow",
        arity=(2, 2),
        pointwise=False,
    ),
    _op(
        "logsumexp",
        "every real argument",
        mp_jets.logsumexp,
        None,
        tf=Kernel("tf.math.reduce_logsumexp", "axis=0", stacked=True),
        jax=Kernel("jax.scipy.special.logsumexp", "axis=0", stacked=True),
        torch=Kernel("torch.logsumexp", "dim=0", stacked=True),
        arity=(2, 8),
        pointwise=False,
    ),
    _op(
        "log_softmax",
        "every real argument",
        mp_jets.log_softmax,
        None,
        tf=Kernel("tf.nn.log_softmax", "axis=0", stacked=True, first=True),
        jax=Kernel("jax.nn.log_softmax", "axis=0", stacked=True, first=True),
        torch=Kernel("torch.log_softmax", "dim=0", stacked=True, first=True),
        arity=(2, 8),
        pointwise=False,
    ),
)

#: Every operator by name.
OPERATORS: dict[str, Operator] = {op.name: op for op in _ENTRIES}
