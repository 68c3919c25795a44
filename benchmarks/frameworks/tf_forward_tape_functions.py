"""Which tape functions TensorFlow builds for a traced function called under nested
forward accumulators (no tape anywhere): its concrete function's caches after one call
under 1, 2 and 3 ``tf.autodiff.ForwardAccumulator``s. Under two or more it builds
``_HigherOrderTapeGradientFunctions`` (a forward function and a backward function, the
backward rebuilt until the side outputs stop growing); in eager nested forward mode every
op's JVP function is such a traced function, which is where the census's TensorFlow time
goes (benchmarks/README.md).

    python benchmarks/frameworks/tf_forward_tape_functions.py
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402


def main() -> None:
    x = tf.constant([0.5, 1.5])
    for depth in (1, 2, 3):
        f = tf.function(lambda x: tf.sin(x) * x)
        concrete = f.get_concrete_function(tf.TensorSpec([2], tf.float32))
        accumulators = [tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) for _ in range(depth)]
        for a in accumulators:
            a.__enter__()
        concrete(x)
        for a in reversed(accumulators):
            a.__exit__(None, None, None)
        print(
            f"{depth} accumulator(s): first-order tape functions "
            f"{len(concrete._first_order_tape_functions)}, higher-order "
            f"{len(concrete._higher_order_tape_functions)}"
        )


if __name__ == "__main__":
    main()
