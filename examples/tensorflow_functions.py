"""The seeds' functions as a TensorFlow user writes them."""

import tensorflow as tf


def naive_log1pexp(x):
    """The tf.custom_gradient documentation's log1pexp before the fix (seed 002)."""
    return tf.math.log(1 + tf.exp(x))


@tf.custom_gradient
def log1pexp(x):
    """The documentation's fix: its gradient at x = 100 is 1.0 (seeds 002 and 003)."""
    e = tf.exp(x)

    def grad(dy):
        return dy * (1 - 1 / (1 + e))

    return tf.math.log(1 + e), grad


@tf.custom_gradient
def new_div(x, y):
    """Seed 000's Defun newDiv/newDivGrad as a tf.custom_gradient."""

    def new_div_grad(grad):
        return tf.math.reciprocal(y) * grad, -tf.math.divide(tf.math.divide(x, y), y) * grad

    return tf.math.divide(x, y), new_div_grad


def ratio(a, b):
    """The seed's f = -a/b through the custom division."""
    return -new_div(a, b)


@tf.custom_gradient
def foo(x):
    """Seed 003's foo: downstream = current * upstream."""

    def grad(dy_dx_upstream):
        dy_dx = 2 * x
        return dy_dx * dy_dx_upstream

    return x**2, grad


def composition(x):
    """foo(foo(foo(x))) = x**8: its gradient at x = 2 is 1024 (seed 003)."""
    return foo(foo(foo(x)))


@tf.custom_gradient
def log1pexp2(x):
    """Seed 004's nested custom gradient: the second order defined as ddy * (1 - e)."""
    e = tf.exp(x)
    y = tf.math.log(1 + e)
    x_grad = 1 - 1 / (1 + e)

    def first_order_gradient(dy):
        @tf.custom_gradient
        def first_order_custom(unused_x):
            def second_order_gradient(ddy):
                return ddy * (1 - e)

            return x_grad, second_order_gradient

        return dy * first_order_custom(x)

    return y, first_order_gradient
