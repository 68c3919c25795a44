"""Reproductions: a standalone, plain-TensorFlow script for one evaluated value.

Every finding comes with a way to see it again outside the harness: the ``harness
probe`` command (:mod:`harness.stages.probe`), and a script that imports only TensorFlow and
NumPy, writes the implementation out as TensorFlow code (its custom gradients as
``tf.custom_gradient`` functions), takes the derivative exactly as the harness did, and
prints the value. A user can paste it into a bug report.

Exactly as the harness did means: the same operations in the same order (the method's
code is written out, the implementation compiled from the same expression tree), the
same mode (eager, ``tf.function`` traced with a fixed signature, or that graph compiled
by XLA), and **the same position in a batch of the same size**. TensorFlow's CPU kernels
compute most of a batch in vector registers and its last few elements one by one, and
the two paths round differently (``tf.exp`` of one value alone and inside a batch of 402
differ in the last bit for about a quarter of float32 inputs here), so the script puts the
input at the harness's index in a batch of the harness's size, ones elsewhere (a mixed
batch, as the harness's: XLA can round a batch of copies of one value differently), and
reads that index.

A registered implementation is Python code inside the harness package: the script
carries its factory's source and the module-level functions and constants it uses
(:func:`harness.registered.catalogue.source`), without the registration decorator, so it still imports no
harness code. No TensorFlow here: this module writes text.
"""

from __future__ import annotations

import shlex
import textwrap
from collections.abc import Sequence

from harness.backends.tensorflow.source import METHODS_SOURCE, SourceWriter
from harness.cases.model import Case

__all__ = ["probe_command", "snippet"]


def snippet(
    case: Case,
    implementation: str,
    point: dict[str, float],
    partial: tuple[str, ...],
    method: str,
    mode: str,
    dtype: str,
    batch: int = 1,
    index: int = 0,
    partials: Sequence[tuple[str, ...]] | None = None,
    title: str = "",
) -> str:
    """A standalone script printing the value the harness computed (``None`` where it
    is ``missing``). ``partials``: the method's partials in the harness run
    (the snippet computes them all, in the same passes); ``batch``/``index``: the size of
    the harness's batch and the point's position in it."""
    from harness.numerics.stencils import base_step

    names = list(case.input_names)
    w = SourceWriter()
    w.implementation(case, implementation, "implementation")
    # Every partial the harness computed with this method, in the same passes: in the
    # compiled modes, rewrites depend on the whole graph (a value with more users is
    # rewritten differently), so one chain alone can round differently.
    computed = sorted({*(partials or []), partial}, key=lambda p: (len(p), p))
    if method == "finite_difference":
        bases = [(p, base_step(dtype, len(p))) for p in computed]
        compute = (
            f"every_difference(lambda **a: implementation(**{{k + '_': v for k, v in "
            f"a.items()}}), xs, {bases!r})"
        )
    else:
        fn = {
            "reverse": "reverse",
            "forward": "forward",
            "forward_over_reverse": "lambda f, x, c: forward(f, x, c, first_by_tape=True)",
        }[method]
        compute = (
            f"every_chain({fn}, lambda **a: implementation(**{{k + '_': v for k, v in "
            f"a.items()}}), xs, {computed!r})"
        )
    # The point at INDEX among ones: a mixed batch, as the run's (XLA can round a batch
    # of copies differently, harness.backends.padding.probe_batch).
    inputs = ", ".join(
        f"tf.constant([{point[n]!r} if i == INDEX else 1.0 for i in range(BATCH)], DTYPE)"
        for n in names
    )
    signature = ", ".join("tf.TensorSpec([BATCH], DTYPE)" for _ in names)
    run = {
        "eager": "value = body(*inputs)",
        "function": (
            "# The harness runs tf.function on the single-threaded executor: one order of\n"
            "# operations (so of additions) in every process.\n"
            "from tensorflow.python.eager import context\n\n"
            "with context.function_executor_type('SINGLE_THREADED_EXECUTOR'):\n"
            f"    value = tf.function(body, input_signature=[{signature}], autograph=False)"
            "(*inputs)"
        ),
        "xla": (
            f"graph = tf.function(body, input_signature=[{signature}], autograph=False)"
            ".get_concrete_function()\n"
            f"value = tf.function(lambda *a: graph(*a), input_signature=[{signature}], "
            "autograph=False, jit_compile=True)(*inputs)"
        ),
    }[mode] + f"[{computed.index(partial)}]"
    where = ", ".join(f"{n} = {point[n]!r}" for n in names)
    label = case.label(partial) or "f"
    return (
        textwrap.dedent(
            f"""\
            # {title or f"{case.id}: {implementation}, derivative {label}"}
            # Plain TensorFlow, no harness code: {method}, {mode} mode, {dtype}, at {where}.
            # The input sits at index {index} of a batch of {batch}, ones elsewhere, and the
            # value is read there, as in the harness: TensorFlow's CPU kernels round a
            # batch's vectorised part and its last few elements differently, and XLA a
            # batch of copies of one value differently from a mixed one.
            import contextlib
            import itertools
            import math

            import tensorflow as tf

            DTYPE = tf.{dtype}
            BATCH, INDEX = {batch}, {index}
            """
        )
        + METHODS_SOURCE
        + "\n\n"
        + "\n\n\n".join(w.blocks)
        + "\n\n\n"
        # Every value is an output, as in the harness (one returned alone would let the
        # compiler drop the rest of the graph).
        + f"def body(*args):\n    xs = dict(zip({names!r}, args))\n"
        f"    values = {compute}\n    return [values.get(p) for p in {computed!r}]\n\n\n"
        + f"inputs = [{inputs}]\n"
        + run
        + "\nprint(None if value is None else repr(float(value.numpy()[INDEX])))\n"
    )


def probe_command(
    case_path: str,
    implementation: str,
    point: dict[str, float],
    partial_label: str,
    method: str,
    mode: str,
    dtype: str,
    batch: int,
    index: int,
    max_order: int | None = None,
) -> str:
    """The ``harness probe`` command that evaluates and judges the same value (with every
    partial up to ``max_order`` beside it, as the run computed them)."""
    at = " ".join(f"{k}={v!r}" for k, v in point.items())
    parts = [
        "harness probe",
        shlex.quote(case_path),
        shlex.quote(implementation),
        "--at",
        at,
        "--partial",
        shlex.quote(partial_label or "f"),
        "--method",
        method,
        "--mode",
        mode,
        "--dtype",
        dtype,
        "--batch",
        str(batch),
        "--index",
        str(index),
    ]
    if max_order is not None:
        parts += ["--max-order", str(max_order)]
    return " ".join(parts)
