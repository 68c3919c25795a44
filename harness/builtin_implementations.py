"""Python implementations that case files may name (``registered: NAME``).

Each factory receives the TensorFlow module and the working dtype and returns a function
of 1-D input batches. Keep them faithful to the code a user would write: the point of a
registered implementation is to test that code, not a cleaned-up version of it.
"""

from __future__ import annotations

from .registry import implementation


@implementation(
    "seed000_newdiv",
    inputs=("a", "b"),
    description="The accepted answer of seed 000: division a/b with a hand-written gradient "
    "(1/b * dy, -(a/b)/b * dy), the Defun newDiv/newDivGrad ported to tf.custom_gradient.",
)
def _seed000_newdiv(tf, dtype):
    @tf.custom_gradient
    def new_div(x, y):
        def new_div_grad(grad):
            return tf.math.reciprocal(y) * grad, -tf.math.divide(tf.math.divide(x, y), y) * grad

        return tf.math.divide(x, y), new_div_grad

    def f(a, b):
        # The seed differentiates f = -a/b.
        return -new_div(a, b)

    return f
