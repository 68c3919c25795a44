"""Central differences on one batch, for the back ends that compute on arrays (JAX,
PyTorch): the product stencil and step rule of :mod:`harness.numerics.stencils`
(``h_v = eps**(1/(n+2)) * |x_v|``, the base step where ``x_v = 0``), every stencil point
in one call of the function, the arithmetic (step included) in the working dtype, as
TensorFlow's method does it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harness.numerics.stencils import base_step, stencil_terms

__all__ = ["ArrayOps", "finite_difference"]


@dataclass(frozen=True)
class ArrayOps:
    """The few array operations the stencil needs, in one framework."""

    constant: Callable  # (value, like) -> a scalar of like's dtype
    where: Callable
    abs: Callable
    concat: Callable  # a list of 1-D arrays -> one
    zeros_like: Callable


def finite_difference(
    fn: Callable, names: Sequence[str], dtype: str, p: tuple[str, ...], xs, ops: ArrayOps
):
    """The partial ``p`` of ``fn`` (positional batches ``xs``, in ``names`` order)."""
    counts = {v: p.count(v) for v in names if v in p}
    first = xs[0]
    base = ops.constant(base_step(dtype, len(p)), first)
    steps = {}
    for v in counts:
        x = xs[names.index(v)]
        steps[v] = ops.where(x == 0, base, base * ops.abs(x))
    terms = stencil_terms(counts)
    n = first.shape[0]
    batch = []
    for i, v in enumerate(names):
        col = []
        for _, offsets in terms:
            if v in offsets:
                col.append(xs[i] + ops.constant(offsets[v], first) * steps[v])
            else:
                col.append(xs[i])
        batch.append(ops.concat(col))
    f = fn(*batch)
    total = ops.zeros_like(first)
    for k, (w, _) in enumerate(terms):
        total = total + ops.constant(w, first) * f[k * n : (k + 1) * n]
    for v, c in counts.items():
        for _ in range(c):
            total = total / steps[v]
    return total
