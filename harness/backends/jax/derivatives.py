"""Derivatives of orders 0-4 in JAX, by five methods, in two modes.

A function here takes one 1-D batch per input (positional, in the case's order) and is
elementwise along the batch.

- ``reverse``: nested ``jax.grad`` of the function of one point's scalars, batched with
  ``jax.vmap`` (the JAX idiom for per-example derivatives);
- ``forward``: nested ``jax.jvp``, a tangent of ones along the differentiated input;
- ``forward_over_reverse``: the first derivative by ``vmap(grad)``, the rest by ``jvp``
  around it (the Hessian-vector-product pattern);
- ``taylor``: ``jax.experimental.jet``, Taylor mode: one pass propagates the series of
  ``x + t`` to order k; its k-th output coefficient is the k-th derivative (JAX's
  ``factorial_scaled`` convention). ``jet`` follows one direction, so a mixed partial
  is not applicable;
- ``finite_difference``: the central-difference stencil and step of
  :mod:`harness.numerics.stencils`, the arithmetic in the working dtype, as for TensorFlow.

Modes: ``eager`` (each operation dispatched as the Python runs) and ``jit``
(``jax.jit`` of the whole computation of one implementation's partials, traced once per
batch shape and kept for the bisection's calls).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Primitive

from harness.backends.batch_stencil import ArrayOps, finite_difference
from harness.backends.partials import leaves

__all__ = ["NESTING", "all_partials", "refusing_jet", "taylor_reason"]

Partial = tuple[str, ...]

NESTING = {
    "reverse": lambda n: f"{n} nested jax.grad under jax.vmap",
    "forward": lambda n: f"{n} nested jax.jvp",
    "forward_over_reverse": lambda n: (
        "vmap(jax.grad)" + (f" inside {n - 1} nested jax.jvp" if n > 1 else "")
    ),
    "taylor": lambda n: f"jax.experimental.jet to order {n}",
    "finite_difference": lambda n: "a central-difference stencil",
}


def taylor_reason(partial: Partial) -> str:
    """Why ``jet`` does not compute ``partial`` ("" where it does)."""
    if len(set(partial)) > 1:
        return (
            "jax.experimental.jet propagates one direction; a mixed partial needs several "
            "jets combined (polarization), which is another method"
        )
    return ""


def _grad_chain(g: Callable, leaf: Partial, names: Sequence[str]) -> dict[Partial, Callable]:
    out = {(): g}
    for k, v in enumerate(leaf):
        g = jax.grad(g, argnums=names.index(v))
        out[leaf[: k + 1]] = g
    return out


def _jvp_along(g: Callable, i: int) -> Callable:
    def h(*xs):
        tangents = tuple(
            jnp.ones_like(x) if j == i else jnp.zeros_like(x) for j, x in enumerate(xs)
        )
        return jax.jvp(g, xs, tangents)[1]

    return h


def refusing_jet(jet, fn: Callable, xs: tuple, series: tuple):
    """``jet.jet``, its missing rule a refusal: ``jet`` looks each primitive up in its
    rule table and raises a bare ``KeyError: atan`` for one it has none for (``tan``,
    ``atan``, ``lgamma``, ``digamma``, ``exp2`` in JAX 0.10.2). That is a transformation
    JAX does not offer, as JAX's own ``NotImplementedError`` says elsewhere; any other
    ``KeyError`` stays a crash."""
    try:
        return jet.jet(fn, xs, series)
    except KeyError as e:
        key = e.args[0] if len(e.args) == 1 else None
        if isinstance(key, Primitive) and key not in jet.jet_rules:
            raise NotImplementedError(
                f"jax.experimental.jet has no rule for the primitive {key} (KeyError: {key})"
            ) from e
        raise


_OPS = ArrayOps(
    constant=lambda value, like: jnp.asarray(value, like.dtype),
    where=jnp.where,
    abs=jnp.abs,
    concat=jnp.concatenate,
    zeros_like=jnp.zeros_like,
)


def all_partials(
    method: str, fn: Callable, names: Sequence[str], dtype: str, partials: Sequence[Partial]
) -> Callable:
    """A function of the batches giving ``partials`` (a tuple, in order) by ``method``."""
    names = list(names)

    def scalar(*xs):
        return fn(*(x[None] for x in xs))[0]

    def compute(*xs):
        values: dict[Partial, object] = {}
        if method == "finite_difference":
            for p in partials:
                values[p] = fn(*xs) if not p else finite_difference(fn, names, dtype, p, xs, _OPS)
            return tuple(values[p] for p in partials)
        if method == "taylor":
            by_var: dict[str, list] = {}
            for p in partials:
                if p:
                    by_var.setdefault(p[0], []).append(p)
            values[()] = fn(*xs)
            for v, ps in by_var.items():
                from jax.experimental import jet

                i = names.index(v)
                top = max(len(p) for p in ps)
                series = tuple(
                    [jnp.ones_like(x) if j == i else jnp.zeros_like(x)]
                    + [jnp.zeros_like(x)] * (top - 1)
                    for j, x in enumerate(xs)
                )
                _, out = refusing_jet(jet, fn, tuple(xs), series)
                for p in ps:
                    values[p] = out[len(p) - 1]
            return tuple(values[p] for p in partials)
        for leaf in leaves(partials):
            chain = [leaf[:k] for k in range(len(leaf) + 1)]
            if method == "reverse":
                grads = _grad_chain(scalar, leaf, names)
                for p in chain:
                    if p not in values:
                        values[p] = fn(*xs) if not p else jax.vmap(grads[p])(*xs)
            elif method == "forward":
                g = fn
                for p in chain:
                    if p:
                        g = _jvp_along(g, names.index(p[-1]))
                    if p not in values:
                        values[p] = g(*xs)
            elif method == "forward_over_reverse":
                values.setdefault((), fn(*xs))
                if not leaf:
                    continue
                g = jax.vmap(jax.grad(scalar, argnums=names.index(leaf[0])))
                for p in chain[1:]:
                    if len(p) > 1:
                        g = _jvp_along(g, names.index(p[-1]))
                    if p not in values:
                        values[p] = g(*xs)
            else:
                raise ValueError(f"unknown method {method!r}")
        return tuple(values[p] for p in partials)

    return compute


class Compiled:
    """The computations made so far, jitted once per key (and per batch shape, by JAX)."""

    def __init__(self) -> None:
        self.cache: dict[tuple, Callable] = {}
        self.traces = 0

    def run(
        self,
        method: str,
        mode: str,
        dtype: str,
        key: tuple,
        fn: Callable,
        names: Sequence[str],
        partials: Sequence[Partial],
        inputs: Mapping[str, np.ndarray],
        jnp_dtype,
    ) -> dict[Partial, np.ndarray]:
        compute = self.cache.get(key)
        if compute is None:
            compute = all_partials(method, fn, names, dtype, partials)
            if mode == "jit":
                compute = jax.jit(compute)
                self.traces += 1
            self.cache[key] = compute
        xs = [jnp.asarray(np.asarray(inputs[n], np.float64), dtype=jnp_dtype) for n in names]
        out = compute(*xs)
        return {
            p: np.asarray(np.asarray(v).astype(np.float64)).reshape(-1)
            for p, v in zip(partials, out)
        }
