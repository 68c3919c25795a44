"""Derivatives of orders 0-4 in TensorFlow, by four methods.

Every method computes a whole set of partials in one pass over a *prefix trie*: the
partial ``('b', 'b')`` is the derivative of ``('b',)`` with respect to ``b``, so the
chain ``b, bb, bbb, bbbb`` costs one nested pass, not four. A partial is written in
differentiation order: ``('a', 'b')`` is d/db of df/da.

- ``reverse``: nested ``tf.GradientTape``; one tape per trie edge, every tape watching
  every input, all opened before the function runs (a tape must record the forward
  pass and every inner gradient computation it will differentiate).
- ``forward``: nested ``tf.autodiff.ForwardAccumulator``; deeper partials' accumulators
  are entered first (outermost), so they watch the tangent computations of shallower
  ones.
- ``forward_over_reverse``: the first derivative by a tape, the rest by accumulators
  around it (the Hessian-vector-product pattern). (The reverse-over-forward nesting,
  a tape around two or more accumulators, fails in TF 2.21; it is not offered.)
- ``finite_difference``: central differences in the working dtype, the check users
  reach for: the product stencil and step rule of :mod:`harness.numerics.stencils`
  (``h_v = eps**(1/(n+2)) * |x_v|`` for a partial of total order n), the arithmetic,
  step included, done in the working dtype.

A derivative the framework does not connect comes back as ``None`` (reported as
``missing``), never as zero.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack

from harness.backends.partials import leaves, prefix_closure
from harness.backends.tensorflow.tfimport import tf
from harness.numerics.stencils import base_step, stencil_terms

__all__ = ["METHODS", "derivatives", "leaves", "prefix_closure"]

Partial = tuple[str, ...]
Fn = Callable[..., tf.Tensor]
Result = dict[Partial, "tf.Tensor | None"]


def _reverse(fn: Fn, xs: Mapping[str, tf.Tensor], partials: Sequence[Partial]) -> Result:
    nodes = prefix_closure(partials)
    values: Result = {}
    with ExitStack() as stack:
        tapes = {}
        for p in reversed(nodes):
            if p:
                tape = stack.enter_context(tf.GradientTape())
                tape.watch(list(xs.values()))
                tapes[p] = tape
        values[()] = fn(**xs)
        for p in nodes[1:]:
            parent = values[p[:-1]]
            # Calling gradient() inside the tape's own context stops that tape; the
            # tapes of deeper partials keep recording the gradient computation.
            values[p] = None if parent is None else tapes[p].gradient(parent, xs[p[-1]])
    return values


def _forward(
    fn: Fn, xs: Mapping[str, tf.Tensor], partials: Sequence[Partial], first_by_tape: bool
) -> Result:
    nodes = prefix_closure(partials)
    values: Result = {}
    with ExitStack() as stack:
        accumulators = {}
        for p in sorted(nodes, key=len, reverse=True):
            if len(p) > (1 if first_by_tape else 0):
                accumulators[p] = stack.enter_context(
                    tf.autodiff.ForwardAccumulator(xs[p[-1]], tf.ones_like(xs[p[-1]]))
                )
        if first_by_tape:
            tapes = {}
            with ExitStack() as inner:
                for p in nodes:
                    if len(p) == 1:
                        tape = inner.enter_context(tf.GradientTape())
                        tape.watch(list(xs.values()))
                        tapes[p] = tape
                values[()] = fn(**xs)
            for p, tape in tapes.items():
                values[p] = tape.gradient(values[()], xs[p[0]])
        else:
            values[()] = fn(**xs)
        for p in nodes:
            if p in accumulators:
                parent = values[p[:-1]]
                values[p] = None if parent is None else accumulators[p].jvp(parent)
    return values


def _finite_difference(fn: Fn, xs: Mapping[str, tf.Tensor], partials: Sequence[Partial]) -> Result:
    """Central differences by the rule of :mod:`harness.numerics.stencils` (one batch per partial)."""
    names = list(xs)
    first = next(iter(xs.values()))
    dtype = first.dtype
    values: Result = {(): fn(**xs)}
    for p in partials:
        if not p:
            continue
        counts = {v: p.count(v) for v in names if v in p}
        base = tf.constant(base_step(dtype.name, len(p)), dtype)
        steps = {v: tf.where(xs[v] == 0, base, base * tf.abs(xs[v])) for v in counts}
        terms = stencil_terms(counts)
        # One batch for the whole stencil: each term's points are a block.
        batch = {v: [] for v in names}
        for _, offsets in terms:
            for v in names:
                if v in offsets:
                    batch[v].append(xs[v] + tf.constant(offsets[v], dtype) * steps[v])
                else:
                    batch[v].append(xs[v])
        n = tf.shape(first)[0]
        f = fn(**{v: tf.concat(batch[v], 0) for v in names})
        total = tf.zeros_like(first)
        for i, (w, _) in enumerate(terms):
            total = total + tf.constant(w, dtype) * f[i * n : (i + 1) * n]
        for v, k in counts.items():
            for _ in range(k):
                total = total / steps[v]
        values[p] = total
    return values


METHODS: dict[str, Callable[[Fn, Mapping[str, tf.Tensor], Sequence[Partial]], Result]] = {
    "reverse": _reverse,
    "forward": lambda fn, xs, ps: _forward(fn, xs, ps, first_by_tape=False),
    "forward_over_reverse": lambda fn, xs, ps: _forward(fn, xs, ps, first_by_tape=True),
    "finite_difference": _finite_difference,
}


def derivatives(
    method: str, fn: Fn, xs: Mapping[str, tf.Tensor], partials: Sequence[Partial]
) -> Result:
    """The requested ``partials`` of ``fn`` at the batch ``xs`` by ``method``.

    Returns a dict partial -> tensor (or ``None`` where the framework gave no
    derivative); it may hold extra prefixes computed on the way.

    The autodiff methods run one nested pass per *chain*: the prefixes of one leaf of the
    prefix trie (``b, bb, bbb, bbbb`` and ``a, ab`` for the ratio). Nesting every trie
    node in one pass would stack a tape or accumulator per node, and each level of
    nesting multiplies the work (forward mode differentiates every tangent computation
    of the levels inside it): six nested accumulators instead of 4 + 2.
    """
    if method == "finite_difference":
        return METHODS[method](fn, xs, partials)
    out: Result = {}
    for leaf in leaves(partials):
        chain = [leaf[:k] for k in range(len(leaf) + 1)]
        for p, value in METHODS[method](fn, xs, chain).items():
            out.setdefault(p, value)
    return out
