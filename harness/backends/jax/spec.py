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
    (
        "NotImplementedError",
        # Only this TypeError: jet's erf_inv rule raises "lax.mul requires arguments to
        # have the same dtypes" in float32 with x64 on, a bug and not a refusal.
        "TypeError: can't apply forward-mode autodiff (jvp) to a custom_vjp function",
        "UnexpectedTracerError",
    ),
    compilers=(("jit", "XLA"),),
    eager_wide=False,
    tracer="harness.backends.jax.trace",
    custom_rules=(
        ("reverse", ("tangent", "gradient")),
        ("forward", ("tangent", "gradient")),
        ("forward_over_reverse", ("tangent", "gradient")),
        ("taylor", ()),
    ),
    one_custom_rule=True,
)
