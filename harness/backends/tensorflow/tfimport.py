"""TensorFlow, imported once and quietly.

Importing TensorFlow 2.21 and starting its CPU device write absl's "All log messages
before absl::InitializeLog()", oneDNN's notice and the CPU-features line to the
process's standard error (file descriptor 2, below Python, before
``TF_CPP_MIN_LOG_LEVEL`` takes effect): noise in front of every command and log. Both
are diverted: the import here, the device's start in :func:`start` (which also sets the
threads, which TensorFlow accepts only before it starts). An error is still raised as
usual. Every module that uses TensorFlow imports it from here.
"""

from __future__ import annotations

import contextlib
import os
import sys

__all__ = ["one_order", "start", "tf"]

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


@contextlib.contextmanager
def _quiet():
    """File descriptor 2 to /dev/null for the duration (where there is one)."""
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # no real stderr (an embedding host)
        yield
        return
    sys.stderr.flush()
    saved = os.dup(fd)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, fd)
    try:
        yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)
        os.close(null)


with _quiet():
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")


def _threads(threads: int) -> None:
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(threads)


# One thread from the import on, so that whatever in this process runs TensorFlow first
# (a helper building a function, a test using TensorFlow directly) starts it as
# :func:`start` would; a process that started it before importing this module keeps its
# own threads, and :func:`start` then says so.
with contextlib.suppress(RuntimeError):
    _threads(1)

_started = False


def start(threads: int | None = None) -> None:
    """Set TensorFlow's intra- and inter-op threads (one unless given), make its ops
    deterministic, and start its CPU device, quietly; later calls do nothing.

    With several threads a reduction may sum in another order from one run to the next
    (56 values of one seven-run series of softplus differed by up to 43 ulps); one thread
    and ``enable_op_determinism`` make a rerun bitwise the same."""
    global _started
    if _started:
        return
    threads = threads or 1
    try:
        _threads(threads)
    except RuntimeError as exc:  # TensorFlow ran before its threads could be set
        raise RuntimeError(
            f"TensorFlow started before the harness could set its threads to {threads} "
            f"(one thread makes a rerun bitwise the same; now "
            f"{tf.config.threading.get_intra_op_parallelism_threads() or 'its default'}): "
            "import harness.backends.tensorflow.tfimport before running any TensorFlow "
            "operation in this process, or run the harness in a process of its own"
        ) from exc
    with _quiet():
        tf.config.experimental.enable_op_determinism()
        tf.constant([0.0]) + 0.0  # the device starts (and logs) here
    _started = True


#: The executor that runs a graph's ops in one fixed order (see :func:`one_order`).
SINGLE_THREADED = "SINGLE_THREADED_EXECUTOR"


@contextlib.contextmanager
def one_order():
    """Run the ``tf.function`` calls inside on TensorFlow's single-threaded executor.

    The default executor, even on one thread with op determinism on, runs the ready ops
    in an order that follows heap addresses (a node's out-edges beyond eight are a set
    hashed by pointer), and ``AddN`` sums its inputs starting from the first whose buffer
    it may reuse: the order of the additions, hence the last bits of a sum, changed from
    one process to the next (the naive softplus's fourth derivative in float64, 1 to 5
    ulps at 6 of 48 points, in about one process of five). The single-threaded executor
    runs the same graph, the same kernels, in one order. It is set through
    ``tensorflow.python.eager.context`` (no public ``tf.config`` switch exists); the
    kernels and the graph Grappler optimised are what a user's ``tf.function`` runs."""
    from tensorflow.python.eager import context

    with context.function_executor_type(SINGLE_THREADED):
        yield
