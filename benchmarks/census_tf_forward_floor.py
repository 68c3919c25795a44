"""TensorFlow's own cost in the census's slowest combination: a kernel's third derivative
by nested ``tf.autodiff.ForwardAccumulator`` in eager mode, for a ``tf.math`` kernel
(``tf.exp``) and a ``tf.experimental.numpy`` one (``exp2``, ``log2``: TensorFlow has no
``tf.math`` kernel for them), on the census's 98 float32 points. No harness code: the floor
a census evaluation in TensorFlow cannot go under. The first call in a process pays
TensorFlow's tracing of each op's JVP function (per op, shape and nesting depth); later
calls reuse them.

    python benchmarks/census_tf_forward_floor.py
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tnp = tf.experimental.numpy


def third_derivative(f, x):
    """d³f/dx³ by three nested forward accumulators (eager)."""
    one = tf.ones_like(x)
    with tf.autodiff.ForwardAccumulator(x, one) as a1:
        with tf.autodiff.ForwardAccumulator(x, one) as a2:
            with tf.autodiff.ForwardAccumulator(x, one) as a3:
                y = f(x)
            d1 = a3.jvp(y)
        d2 = a2.jvp(d1)
    return a1.jvp(d2)


def main() -> None:
    x = tf.constant(np.geomspace(1e-3, 80.0, 98), tf.float32)
    for name, f in (("tf.exp", tf.exp), ("tnp.exp2", tnp.exp2), ("tnp.log2", tnp.log2)):
        start = time.perf_counter()
        third_derivative(f, x)  # the first call traces each op's JVP function
        first = time.perf_counter() - start
        start = time.perf_counter()
        for _ in range(3):
            third_derivative(f, x)
        again = (time.perf_counter() - start) / 3
        print(
            f"{name:10s} eager d3, nested ForwardAccumulators: first {first:.2f} s, then {again:.3f} s"
        )


if __name__ == "__main__":
    main()
