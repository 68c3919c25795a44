"""``harness probe`` in TensorFlow: one value through the study's own runner (the
implementation built from the case, the method's nested pass, the mode's compilation), at
one input placed at ``index`` in a batch of ``batch``, ones elsewhere
(:func:`harness.backends.padding.probe_batch`), so that it is the study's
value bit for bit (:mod:`harness.stages.probe` judges it)."""

from __future__ import annotations

import numpy as np

__all__ = ["value"]


def value(case, implementation, point, partial, method, mode, dtype, batch, index, partials):
    """``(value, status, message)``: the value of ``partial``, computed in one pass with
    ``partials``; ``missing`` or ``error`` with the framework's words."""
    from harness.backends.padding import probe_batch
    from harness.backends.tensorflow.build import build_implementation
    from harness.backends.tensorflow.evaluate import TF_DTYPES, EvaluationStats, Runner
    from harness.backends.tensorflow.tfimport import start, tf

    start()
    impl = case.implementation(implementation)
    names = list(case.input_names)
    tf_dtype = TF_DTYPES[dtype]
    fn = build_implementation(impl, names, tf_dtype, case.functions)
    xs = {n: tf.constant(probe_batch(float(point[n]), batch, index), dtype=tf_dtype) for n in names}
    runner = Runner(method, mode, dtype, xs, EvaluationStats(), case.label)
    got = runner.run({implementation: fn}, partials)[implementation].get(partial)
    if got is None:
        return np.nan, "missing", "the framework returned None"
    if hasattr(got, "message"):
        return np.nan, "error", got.message
    return float(got[index]), "value", ""
