"""JAX as the registry knows it (no JAX import)."""

from harness.backends.spec import BackendSpec
from harness.numerics.floats import DTYPES

SPEC = BackendSpec(
    "jax",
    "JAX",
    "jax",
    "harness.backends.jax.backend",
    ("reverse", "forward", "forward_over_reverse", "finite_difference", "taylor"),
    ("jit", "eager"),
    DTYPES,
    "pip install -e .[jax]",
    ("NotImplementedError", "TypeError", "UnexpectedTracerError"),
    compilers=(("jit", "XLA"),),
    custom_rules=(
        ("reverse", ("tangent", "gradient")),
        ("forward", ("tangent", "gradient")),
        ("forward_over_reverse", ("tangent", "gradient")),
        ("taylor", ()),
    ),
    one_custom_rule=True,
)
