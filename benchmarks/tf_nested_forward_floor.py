"""The floor under TensorFlow's forward mode at order 4: four nested ForwardAccumulators
over x**3 - 2*x and x*(x*x - 2) at three float64 points, eagerly, in a bare script
(nothing of the harness). Run: `.venv/bin/python benchmarks/tf_nested_forward_floor.py`;
prints each form's result (or error) and seconds."""

import time

import tensorflow as tf

x = tf.constant([-1.5, 0.25, 3.0], tf.float64)


def run(fn):
    with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as a4:
        with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as a3:
            with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as a2:
                with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as a1:
                    y = fn(x)
                d1 = a1.jvp(y)
            d2 = a2.jvp(d1)
        d3 = a3.jvp(d2) if d2 is not None else None
    d4 = a4.jvp(d3) if d3 is not None else None
    return d4


for name, fn in [("plain", lambda x: x**3 - 2 * x), ("factored", lambda x: x * (x * x - 2))]:
    t = time.time()
    try:
        r = run(fn)
        print(name, r)
    except Exception as e:
        print(name, "error", type(e).__name__, str(e)[:100])
    print(name, time.time() - t)
