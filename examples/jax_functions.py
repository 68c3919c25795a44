"""The seeds' functions as a JAX user writes them."""

import jax
import jax.numpy as jnp


def naive_log1pexp(x):
    """Seed 002's log(1 + exp(x)), differentiated by autodiff."""
    return jnp.log(1.0 + jnp.exp(x))


@jax.custom_jvp
def log1pexp(x):
    """The JAX tutorial's log1pexp with its custom_jvp rule (custom_derivative_rules)."""
    return jnp.log(1.0 + jnp.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    ans = log1pexp(x)
    ans_dot = (1 - 1 / (1 + jnp.exp(x))) * x_dot
    return ans, ans_dot


@jax.custom_vjp
def new_div(x, y):
    """Seed 000's accepted answer, the division with its own gradient, as a custom_vjp."""
    return x / y


def new_div_fwd(x, y):
    return x / y, (x, y)


def new_div_bwd(res, g):
    x, y = res
    return 1 / y * g, -((x / y) / y) * g


new_div.defvjp(new_div_fwd, new_div_bwd)


def ratio(a, b):
    """The seed's f = -a/b through the custom division."""
    return -new_div(a, b)
