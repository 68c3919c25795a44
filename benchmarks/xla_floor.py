"""The floor under bisecting an edge in the xla mode: TensorFlow itself, no harness code.

Usage: python benchmarks/xla_floor.py

A bisection evaluates the same traced function again and again at new inputs of the
same shape. In the function mode such a call costs about a millisecond. In the xla mode
it does too for reverse mode, but TensorFlow 2.21 recompiles graphs of two or more nested
``tf.autodiff.ForwardAccumulator`` over a scalar constant broadcast against the batch
(``1 + exp(x)``, as every case expression writes it) for every new set of input
*values*, so each call costs a compilation. This script times that with plain
TensorFlow at the batch sizes of the softplus and ratio cases: the same inputs again
against new inputs every call, with and without the broadcast.
"""

from __future__ import annotations

import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402


def forward_over_reverse(fn, x, order):
    """d^order fn / dx^order: a tape inside order - 1 accumulators (the harness's pattern)."""
    accs = [tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) for _ in range(order - 1)]
    for a in reversed(accs):
        a.__enter__()
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    d = tape.gradient(y, x)
    for a in accs:
        a.__exit__(None, None, None)
        d = a.jvp(d)
    return d


def forward(fn, x, order):
    """d^order fn / dx^order by nested accumulators (the harness's forward method)."""
    accs = [tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) for _ in range(order)]
    for a in reversed(accs):
        a.__enter__()
    y = fn(x)
    for a in accs:
        a.__exit__(None, None, None)
        y = a.jvp(y)
    return y


def reverse(fn, x, order):
    tapes = [tf.GradientTape() for _ in range(order)]
    for t in tapes:
        t.__enter__()
        t.watch(x)
    y = fn(x)
    for t in reversed(tapes):
        t.__exit__(None, None, None)
        y = t.gradient(y, x)
    return y


CASES = {
    # A scalar constant broadcast against the batch (1 + ...): what case expressions are.
    "log(1 + exp(x))": (lambda x: tf.math.log(1 + tf.exp(x)), 402, tf.float32),
    # The same without a broadcast.
    "log(ones_like(x) + exp(x))": (
        lambda x: tf.math.log(tf.ones_like(x) + tf.exp(x)),
        402,
        tf.float32,
    ),
    "-x/x": (lambda x: -x / x, 250, tf.float32),
}


def timed(fn, make, calls=6) -> float:
    fn(make(0))  # compile once
    out = []
    for i in range(1, calls + 1):
        x = make(i)
        t0 = time.perf_counter()
        fn(x).numpy()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def main() -> None:
    for name, (f, n, dtype) in CASES.items():
        base = np.logspace(-3, 3, n)
        for method, order in ((reverse, 2), (forward, 2), (forward_over_reverse, 3)):
            spec = [tf.TensorSpec([n], dtype)]
            graph = tf.function(
                lambda x, m=method, f=f, k=order: m(f, x, k),
                input_signature=spec,
                autograph=False,
            )
            xla = tf.function(
                lambda x, m=method, f=f, k=order: m(f, x, k),
                input_signature=spec,
                autograph=False,
                jit_compile=True,
            )
            for mode, fn in (("function", graph), ("xla", xla)):
                same = timed(fn, lambda i, b=base, d=dtype: tf.constant(b, d))
                new = timed(fn, lambda i, b=base, d=dtype: tf.constant(b * (1 + 1e-6 * i), d))
                print(
                    f"{name:28} {method.__name__:21} order {order} {mode:8} "
                    f"same inputs {1e3 * same:6.1f} ms   new inputs {1e3 * new:6.1f} ms"
                )


if __name__ == "__main__":
    main()
