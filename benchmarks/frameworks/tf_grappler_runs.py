"""TensorFlow gives a tf.function's values one of two ways from one process to the next.

Plain TensorFlow, no harness code: d4/dx2dy2 of x**y by four nested GradientTapes in a
tf.function with a static input signature, float32, 2,048 points, one intra- and
inter-op thread, the single-threaded function executor (as the harness's ``function``
mode runs it: harness.backends.tensorflow.tfimport.one_order). The same program in RUNS
fresh processes, with Grappler as it is and with its arithmetic optimizer off; prints
how many processes gave each result and, between two results, how many values differ
and by how many ulps at most.

    .venv/bin/python benchmarks/frameworks/tf_grappler_runs.py [RUNS]   (default 10)
"""

from __future__ import annotations

import collections
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np


def child(out: str, off: str) -> None:
    import os

    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    import tensorflow as tf
    from tensorflow.python.eager import context

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    if off:
        tf.config.optimizer.set_experimental_options({off: False})
    spec = [tf.TensorSpec([2048], tf.float32)] * 2

    @tf.function(input_signature=spec, autograph=False)
    def d4(x, y):
        with tf.GradientTape() as t4:
            t4.watch(y)
            with tf.GradientTape() as t3:
                t3.watch(y)
                with tf.GradientTape() as t2:
                    t2.watch(x)
                    with tf.GradientTape() as t1:
                        t1.watch(x)
                        f = x**y
                    fx = t1.gradient(f, x)
                fxx = t2.gradient(fx, x)
            fxxy = t3.gradient(fxx, y)
        return t4.gradient(fxxy, y)

    x = tf.constant(np.linspace(0.1, 3, 2048), tf.float32)
    y = tf.constant(np.linspace(-2, 2, 2048), tf.float32)
    with context.function_executor_type("SINGLE_THREADED_EXECUTOR"):
        np.save(out, d4(x, y).numpy())


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "")
        return
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    with tempfile.TemporaryDirectory() as tmp:
        for off in ("", "arithmetic_optimization"):
            seen: dict[bytes, np.ndarray] = {}
            count: collections.Counter = collections.Counter()
            for i in range(runs):
                out = str(Path(tmp) / f"{off or 'grappler'}{i}.npy")
                cmd = [sys.executable, __file__, "--child", out, off]
                subprocess.run(cmd, check=True, capture_output=True)
                v = np.load(out)
                seen.setdefault(v.tobytes(), v)
                count[v.tobytes()] += 1
            label = f"{off} off" if off else "Grappler as it is"
            print(f"{label}: {runs} processes, {len(seen)} distinct results", end="")
            print(f" ({', '.join(str(n) for n in count.values())} processes)")
            if len(seen) > 1:
                a, b = list(seen.values())[:2]
                ia, ib = a.view(np.int32), b.view(np.int32)
                d = np.flatnonzero(ia != ib)
                print(f"  {len(d)} of {a.size} values differ, at most {np.abs(ia - ib).max()} ulps")


if __name__ == "__main__":
    main()
