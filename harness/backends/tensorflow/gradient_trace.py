"""Which upstream gradients a custom gradient receives: the seed-003 question, answered
through the harness instead of a ``tf.print``.

:func:`trace_gradients` runs one first derivative of an implementation eagerly, by
reverse mode, at one point, and returns every custom-gradient call in the order
TensorFlow made it, with the upstream gradient ``dy`` each rule received and what it
returned. For ``foo(foo(foo(x)))`` with ``foo(x) = x**2`` at ``x = 2`` the calls are the
outermost ``foo`` first (input 16, upstream 1), then 4 (upstream 32), then 2 (upstream
256): the chain rule, read backwards.

This module imports TensorFlow.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.backends.tensorflow.build import GradientCall, build_implementation, record_gradients
from harness.backends.tensorflow.tfimport import start, tf
from harness.cases.load import load_case
from harness.cases.model import Case

__all__ = ["GradientTrace", "trace_gradients"]


@dataclass(frozen=True)
class GradientTrace:
    calls: list[GradientCall]  # in the order TensorFlow called the rules
    gradient: dict[str, float | None]  # the first derivative per input (None: no gradient)


def trace_gradients(
    case: Case | str | Path,
    implementation: str,
    point: Mapping[str, float],
    dtype: str = "float32",
) -> GradientTrace:
    """The custom-gradient calls of one reverse-mode first derivative at ``point``.

    Raises
    ------
    KeyError
        If the case has no such implementation, or ``point`` misses an input.
    """
    start()
    if not isinstance(case, Case):
        case = load_case(case)
    impls = {i.name: i for i in case.implementations}
    if implementation not in impls:
        raise KeyError(
            f"{case.id} has no implementation {implementation!r}; it has {', '.join(impls)}"
        )
    missing = [n for n in case.input_names if n not in point]
    if missing:
        raise KeyError(f"point lacks input(s) {', '.join(missing)}")
    tf_dtype = tf.as_dtype(dtype)
    fn = build_implementation(impls[implementation], case.input_names, tf_dtype, case.functions)
    xs = {n: tf.constant([point[n]], dtype=tf_dtype) for n in case.input_names}
    with record_gradients() as calls, tf.GradientTape() as tape:
        tape.watch(list(xs.values()))
        y = fn(**xs)
        grads = tape.gradient(y, list(xs.values()))
    gradient = {
        n: (None if g is None else float(np.asarray(g.numpy()).reshape(-1)[0]))
        for n, g in zip(case.input_names, grads)
    }
    return GradientTrace(list(calls), gradient)
