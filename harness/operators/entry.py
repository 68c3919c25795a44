"""How the operator table's entries are written: :func:`op` (one operator: its rules and
each framework's kernel) and :func:`series_rule` (a one-argument Arb rule)."""

from __future__ import annotations

from collections.abc import Callable

from harness.operators.model import EVERYWHERE, ArbRule, Kernel, NoKernel, Operator, Sampling

__all__ = ["ALL", "op", "series_rule"]

#: The domain of a function defined on every real number.
ALL = "every real x"


def _kernel(spec: str | Kernel | NoKernel) -> Kernel | NoKernel:
    return Kernel(spec) if isinstance(spec, str) else spec


def op(
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
    sampling: Sampling | tuple[Sampling, ...] = EVERYWHERE,
) -> Operator:
    """One entry: ``tf``, ``jax`` and ``torch`` are the kernels (a dotted name, a
    :class:`Kernel` with bound keywords, or :class:`NoKernel` with the reason), keyed by
    the back ends' registered names."""
    kernels = {"tensorflow": _kernel(tf), "jax": _kernel(jax), "torch": _kernel(torch)}
    if isinstance(sampling, Sampling):
        sampling = (sampling,)
    return Operator(name, arity, domain, mpmath, pointwise, rule, kernels, sampling)


def series_rule(series: Callable, value: Callable | None = None, exact=None) -> ArbRule:
    return ArbRule(series=series, value=value, exact=exact)
