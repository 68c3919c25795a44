"""Derivatives of orders 0-4 in PyTorch, by four methods, in two modes.

A function here takes one 1-D batch per input (positional, in the case's order) and is
elementwise along the batch, so the gradient of the batch's sum is every point's
derivative (the idiom of the seeds' PyTorch answers).

- ``reverse``: nested ``torch.autograd.grad(..., create_graph=True)``. Where a derivative
  no longer depends on the input (it does not require grad), PyTorch can differentiate it
  no further: the next partial is ``None`` (``missing``), as TensorFlow's tape reports;
- ``forward``: nested ``torch.func.jvp`` (nested ``torch.autograd.forward_ad`` dual
  levels fail from order 2 in PyTorch 2.13), a tangent of ones along the input;
- ``forward_over_reverse``: ``torch.func.grad`` of the sum, then ``torch.func.jvp``
  around it (the two APIs are not mixed: ``autograd.grad`` inside ``func.jvp`` is not
  supported);
- ``finite_difference``: the stencil and step of :mod:`harness.numerics.stencils`, the
  arithmetic in the working dtype.

Modes: ``eager``, and ``compile``: ``torch.compile`` of the whole computation of one
implementation's partials (compiled on its first call, kept for the bisection's).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch

from harness.backends.batch_stencil import ArrayOps, finite_difference
from harness.backends.partials import leaves
from harness.backends.sweep import NotApplicable

__all__ = ["NESTING", "Compiled", "all_partials"]

Partial = tuple[str, ...]

NESTING = {
    "reverse": lambda n: f"{n} nested torch.autograd.grad(create_graph=True)",
    "forward": lambda n: f"{n} nested torch.func.jvp",
    "forward_over_reverse": lambda n: (
        "torch.func.grad" + (f" inside {n - 1} nested torch.func.jvp" if n > 1 else "")
    ),
    "finite_difference": lambda n: "a central-difference stencil",
}


def _jvp_along(g: Callable, i: int) -> Callable:
    def h(*xs):
        tangents = tuple(
            torch.ones_like(x) if j == i else torch.zeros_like(x) for j, x in enumerate(xs)
        )
        return torch.func.jvp(g, xs, tangents)[1]

    return h


_OPS = ArrayOps(
    constant=lambda value, like: torch.tensor(value, dtype=like.dtype),
    where=torch.where,
    abs=torch.abs,
    concat=torch.cat,
    zeros_like=torch.zeros_like,
)


def all_partials(
    method: str, fn: Callable, names: Sequence[str], dtype: str, partials: Sequence[Partial]
) -> Callable:
    """A function of the batches giving ``partials`` (a tuple; ``None`` where PyTorch
    gives no derivative) by ``method``."""
    names = list(names)

    def compute(*xs):
        values: dict[Partial, object] = {}
        if method == "finite_difference":
            with torch.no_grad():
                for p in partials:
                    values[p] = (
                        fn(*xs) if not p else finite_difference(fn, names, dtype, p, xs, _OPS)
                    )
            return tuple(values[p] for p in partials)
        if method == "reverse":
            xs = [x.detach().requires_grad_(True) for x in xs]
            for leaf in leaves(partials):
                chain = [leaf[:k] for k in range(len(leaf) + 1)]
                local: dict[Partial, object] = {(): fn(*xs)}
                for p in chain[1:]:
                    parent = local[p[:-1]]
                    if parent is None or not parent.requires_grad:
                        local[p] = None
                        continue
                    (local[p],) = torch.autograd.grad(
                        parent.sum(), xs[names.index(p[-1])], create_graph=True, allow_unused=True
                    )
                for p in chain:
                    values.setdefault(p, local[p])
            return tuple(None if values[p] is None else values[p].detach() for p in partials)
        for leaf in leaves(partials):
            chain = [leaf[:k] for k in range(len(leaf) + 1)]
            if method == "forward":
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
                g = torch.func.grad(lambda *ys: fn(*ys).sum(), argnums=names.index(leaf[0]))
                for p in chain[1:]:
                    if len(p) > 1:
                        g = _jvp_along(g, names.index(p[-1]))
                    if p not in values:
                        values[p] = g(*xs)
            else:
                raise ValueError(f"unknown method {method!r}")
        return tuple(values[p] for p in partials)

    return compute


_NO_KERNEL = ("not implemented for 'Half'", "not implemented for 'BFloat16'")


class Compiled:
    """The computations made so far (``torch.compile``-d once per key in that mode)."""

    def __init__(self) -> None:
        self.cache: dict[tuple, Callable] = {}
        self.traces = 0

    def run(self, method, mode, dtype, key, fn, names, partials, inputs, torch_dtype):
        compute = self.cache.get(key)
        if compute is None:
            compute = all_partials(method, fn, names, dtype, partials)
            if mode == "compile":
                # Inductor's own deterministic flag (its import is paid here, not by eager).
                torch.use_deterministic_algorithms(True, warn_only=True)
                compute = torch.compile(compute)
                self.traces += 1
            self.cache[key] = compute
        xs = [
            torch.tensor(np.asarray(inputs[n], np.float64), dtype=torch.float64).to(torch_dtype)
            for n in names
        ]
        try:
            out = compute(*xs)
        except RuntimeError as exc:
            text = str(exc)
            if any(s in text for s in _NO_KERNEL):
                first = text.strip().splitlines()[0]
                raise NotApplicable(f"PyTorch has no {dtype} CPU kernel here: {first}") from None
            raise
        # force: a derivative PyTorch knows to be 0 comes as a ZeroTensor, which a plain
        # .numpy() refuses (abs's second derivative).
        return {
            p: None if v is None else v.detach().to(torch.float64).numpy(force=True).reshape(-1)
            for p, v in zip(partials, out)
        }
