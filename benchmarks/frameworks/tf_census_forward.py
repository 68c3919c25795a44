"""The quick census's largest piece of TensorFlow work without the harness: every census
kernel's derivatives to order 3 by nested ``tf.autodiff.ForwardAccumulator`` in eager
mode, one nested pass per chain of partials (``x, xx, xxx``; for two inputs ``xxx``,
``xxy``, ``xyy`` and ``yyy``), on batches of 2,048 points, in one process and one dtype,
the kernels in the census job's order, one thread. This is the work the census's
TensorFlow job times as ``forward``/``eager`` (its timings tables), written here with
nothing but TensorFlow and NumPy: the kernels as the operator table names them
(``harness/operators/table_*.py``), the reductions over two inputs stacked as the
harness's TensorFlow back end stacks them, a constant exponent as a ``tf.constant``.

Each kernel's first pass pays TensorFlow's tracing of the JVP functions of the ops it
meets for the first time in the process (per op, shape, dtype and nesting depth); a
second pass of every kernel shows what is left once those are traced.

    python benchmarks/frameworks/tf_census_forward.py [float32|float64]
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import ExitStack

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)
tnp = tf.experimental.numpy
N = 2048


def stack(*args):
    """As the harness's TensorFlow back end stacks a reduction's arguments."""
    shape = tf.shape(sum(args))
    return tf.stack([tf.broadcast_to(a, shape) for a in args])


def constant_power(c, dtype):
    return lambda x: tf.math.pow(x, tf.constant(c, dtype))


ONE = {
    "abs": tf.abs,
    "acosh": tf.math.acosh,
    "asinh": tf.math.asinh,
    "atan": tf.math.atan,
    "atanh": tf.math.atanh,
    "cos": tf.cos,
    "cosh": tf.cosh,
    "digamma": tf.math.digamma,
    "elu": tf.nn.elu,
    "erf": tf.math.erf,
    "erfc": tf.math.erfc,
    "erfinv": tf.math.erfinv,
    "exp": tf.exp,
    "exp2": tnp.exp2,
    "expm1": tf.math.expm1,
    "gelu": lambda x: tf.nn.gelu(x, approximate=False),
    "gelu_tanh": lambda x: tf.nn.gelu(x, approximate=True),
    "lgamma": tf.math.lgamma,
    "log": tf.math.log,
    "log1p": tf.math.log1p,
    "log2": tnp.log2,
    "log_sigmoid": tf.math.log_sigmoid,
    "reciprocal": tf.math.reciprocal,
    "rsqrt": tf.math.rsqrt,
    "selu": tf.nn.selu,
    "sigmoid": tf.sigmoid,
    "silu": tf.nn.silu,
    "sin": tf.sin,
    "sinc": tnp.sinc,
    "sinh": tf.sinh,
    "softplus": tf.math.softplus,
    "softsign": tf.nn.softsign,
    "sqrt": tf.sqrt,
    "square": tf.math.square,
    "tan": tf.tan,
    "tanh": tf.tanh,
}
POWERS = {"pow_0_5": 0.5, "pow_2": 2.0, "pow_2_5": 2.5, "pow_3": 3.0, "pow_minus_1_5": -1.5}
TWO = {
    "atan2": tf.math.atan2,
    "hypot": tnp.hypot,
    "log_softmax": lambda x, y: tf.nn.log_softmax(stack(x, y), axis=0)[0],
    "logaddexp": tnp.logaddexp,
    "logsumexp": lambda x, y: tf.math.reduce_logsumexp(stack(x, y), axis=0),
    "maximum": tf.maximum,
    "minimum": tf.minimum,
    "pow": tf.math.pow,
    "xlog1py": tf.math.xlog1py,
    "xlogy": tf.math.xlogy,
}


def cases(dtype):
    """(census case, function of keyword tensors, input names), in the job's order (the
    case files' names sorted; mish has no TensorFlow kernel)."""
    out = [(f"census_{k}", lambda f=f: lambda x: f(x), ("x",)) for k, f in ONE.items()]
    out += [
        (f"census_{k}", lambda c=c: constant_power(c, dtype), ("x",)) for k, c in POWERS.items()
    ]
    for k, f in TWO.items():
        for layout in ("diagonal", "grid"):
            out.append((f"census_{k}_{layout}", lambda f=f: lambda x, y: f(x, y), ("x", "y")))
    return sorted(out)


def chains(names):
    """The leaves of the partials to order 3, as the harness runs forward mode."""
    if len(names) == 1:
        return [("x", "x", "x")]
    return [("x", "x", "x"), ("x", "x", "y"), ("x", "y", "y"), ("y", "y", "y")]


def nested_forward(f, xs, leaf):
    """One nested pass: an accumulator per prefix, the deepest outermost."""
    nodes = [leaf[:k] for k in range(len(leaf) + 1)]
    values = {}
    with ExitStack() as stack_:
        accumulators = {}
        for p in sorted(nodes, key=len, reverse=True):
            if p:
                x = xs[p[-1]]
                accumulators[p] = stack_.enter_context(
                    tf.autodiff.ForwardAccumulator(x, tf.ones_like(x))
                )
        values[()] = f(**xs)
        for p in nodes:
            if p:
                values[p] = accumulators[p].jvp(values[p[:-1]])
    return values


def main() -> None:
    dtype = tf.float32 if (sys.argv[1:] or ["float32"])[0] == "float32" else tf.float64
    points = tf.constant(np.geomspace(0.25, 0.75, N), dtype)
    listed = cases(dtype)
    started = time.perf_counter()
    for rnd in ("first", "again"):
        total = 0.0
        for name, make, names in listed:
            f = make()
            xs = {n: points if n == "x" else points * 0.5 for n in names}
            t0 = time.perf_counter()
            failed = ""
            for leaf in chains(names):
                try:
                    nested_forward(f, xs, leaf)
                except Exception as exc:  # the harness reports these combinations as error
                    failed = f"  ({type(exc).__name__} in {''.join(leaf)})"
            seconds = time.perf_counter() - t0
            total += seconds
            if rnd == "first":
                print(f"{name:28s} {seconds:7.2f} s{failed}", flush=True)
        print(f"{rnd}: {len(listed)} cases, {total:.1f} s", flush=True)
    print(f"in all {time.perf_counter() - started:.1f} s ({dtype.name}, {N} points, one thread)")


if __name__ == "__main__":
    main()
