"""What about this TensorFlow shapes the numbers: its versions, devices and graph
options (for provenance), and whether this platform flushes subnormal inputs and
results in each mode (:mod:`harness.numerics.flush`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from harness.backends.tensorflow.evaluate import TF_DTYPES
from harness.backends.tensorflow.tfimport import tf

__all__ = ["probe_flush", "tensorflow_facts"]


def tensorflow_facts() -> dict[str, object]:
    """What about this TensorFlow shapes the numbers (for provenance)."""
    return {
        "tensorflow": tf.__version__,
        "devices": [d.name for d in tf.config.list_logical_devices()],
        "grappler_options": {
            k: str(v) for k, v in tf.config.optimizer.get_experimental_options().items()
        }
        or "default",
        "jit_autoclustering": bool(tf.config.optimizer.get_jit()),
    }


def probe_flush(dtypes: Sequence[str], modes: Sequence[str]) -> dict[str, dict[str, dict]]:
    """Whether this platform flushes subnormal inputs and results, per dtype and mode:
    ``{dtype: {mode: {"inputs": bool, "results": bool}}}``.

    Both probes multiply two tensors passed in as arguments (nothing to fold): a
    subnormal times 2**10 is a normal number unless the subnormal was read as 0
    (``inputs``), and the smallest normal times 1/4 is subnormal unless the result was
    written as 0 (``results``).
    """
    from harness.numerics.floats import FORMATS

    out: dict[str, dict[str, dict]] = {}
    for dtype in dtypes:
        fmt, tf_dtype = FORMATS[dtype], TF_DTYPES[dtype]
        sub = fmt.smallest_normal / 4
        x = tf.constant([sub, fmt.smallest_normal], dtype=tf_dtype)
        y = tf.constant([2.0**10, 0.25], dtype=tf_dtype)
        out[dtype] = {}
        for mode in modes:
            if mode == "eager":
                fn = tf.multiply
            else:
                spec = [tf.TensorSpec([2], tf_dtype)] * 2
                fn = tf.function(
                    lambda a, b: a * b, input_signature=spec, jit_compile=(mode == "xla")
                )
            got = np.asarray(fn(x, y).numpy(), dtype=np.float64)
            out[dtype][mode] = {"inputs": bool(got[0] == 0), "results": bool(got[1] == 0)}
    return out
