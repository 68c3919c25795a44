"""Which TensorFlow kernels XLA compiles again for every new input value: nested forward
mode (``tf.autodiff.ForwardAccumulator``) to orders 1-3 inside ``tf.function(...,
jit_compile=True)`` with a static input signature, 2,048 float64 points. Each order is
called five times with new inputs, then once with the last inputs again; a child process
runs the same calls with ``TF_CPP_VMODULE=device_compiler=1`` and counts XLA's
"Compilation of XLA executable" lines per call.

A program that compiles once runs a new batch in under a millisecond. Where XLA treats the
inputs as compile-time constants, every new batch compiles again (tens to hundreds of
milliseconds) and only a repeated batch hits the cache. This is the cost of the census
bisection's calls in TensorFlow's xla mode (benchmarks/README.md): each round's inputs
are new. No harness code.

    python benchmarks/frameworks/tf_xla_recompile.py
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tnp = tf.experimental.numpy
N = 2048
KERNELS = {
    "tf.sin(x) * y": lambda x, y: tf.sin(x) * y,
    "tf.pow": tf.pow,
    "tf.math.atan2": tf.math.atan2,
    "tf.math.xlogy": tf.math.xlogy,
    "tf.math.xlog1py": tf.math.xlog1py,
    "tnp.hypot": tnp.hypot,
    "tnp.sinc": lambda x, y: tnp.sinc(x),
    "tnp.log2": lambda x, y: tnp.log2(x),
    "tf.nn.silu": lambda x, y: tf.nn.silu(x),
}
MARK = "@@call"


def nested_forward(f, order):
    def run(x, y):
        # As the harness nests them: the outermost accumulator entered first, each jvp
        # taken, innermost first, while every accumulator is still recording.
        with contextlib.ExitStack() as stack:
            accumulators = [
                stack.enter_context(tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)))
                for _ in range(order)
            ]
            value = f(x, y)
            for a in reversed(accumulators):
                value = a.jvp(value)
        return value

    signature = [tf.TensorSpec([N], tf.float64)] * 2
    return tf.function(run, input_signature=signature, autograph=False, jit_compile=True)


def calls(name, order):
    """Milliseconds of five calls at new inputs and one at the last inputs again."""
    fn = nested_forward(KERNELS[name], order)
    rng = np.random.default_rng(0)
    times = []
    for k in range(6):
        if k < 5:
            x, y = (tf.constant(rng.uniform(0.1, 3.0, N)) for _ in range(2))
        print(f"{MARK} {name} {order} {k}", file=sys.stderr, flush=True)
        start = time.perf_counter()
        fn(x, y)
        times.append(1000 * (time.perf_counter() - start))
    return times


def compilations() -> dict:
    """XLA compilations per (kernel, order, call) in a child process's log."""
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "0", "TF_CPP_VMODULE": "device_compiler=1"}
    log = subprocess.run(
        [sys.executable, __file__, "--child"], env=env, capture_output=True, text=True
    ).stderr
    counts, at = {}, None
    for line in log.splitlines():
        if line.startswith(MARK):
            at = tuple(line.split(" ", 1)[1].rsplit(" ", 2))
            counts[at] = 0
        elif at is not None and "Compilation of XLA executable" in line:
            counts[at] += 1
    return counts


def main() -> None:
    if "--child" in sys.argv:
        for name in KERNELS:
            for order in (1, 2, 3):
                try:
                    calls(name, order)
                except Exception:  # noqa: BLE001 - the parent says it
                    pass
        return
    compiled = compilations()
    print(f"TensorFlow {tf.__version__}, {N} float64 points, nested forward mode under XLA")
    print("kernel            order  ms per call (5 new batches | the last again)  compilations")
    for name in KERNELS:
        for order in (1, 2, 3):
            try:
                ms = calls(name, order)
            except Exception as exc:  # noqa: BLE001 - said, and the next kernel runs
                print(f"{name:16s}  {order}   raises {type(exc).__name__}: {exc}")
                continue
            counts = [compiled.get((name, str(order), str(k)), "?") for k in range(6)]
            new = " ".join(f"{t:7.1f}" for t in ms[:5])
            print(f"{name:16s}  {order}   {new} | {ms[5]:5.1f}   {counts}")


if __name__ == "__main__":
    main()
