"""TensorFlow as the registry knows it (no TensorFlow import)."""

from harness.backends.spec import BackendSpec
from harness.numerics.floats import DTYPES

SPEC = BackendSpec(
    "tensorflow",
    "TensorFlow",
    "tensorflow",
    "harness.backends.tensorflow.backend",
    ("reverse", "forward", "forward_over_reverse", "finite_difference"),
    # Compiled modes first: the xla mode reuses the graphs traced for the function mode.
    ("function", "xla", "eager"),
    DTYPES,
    "pip install -e .",
    ("NotImplementedError", "LookupError"),
    compilers=(("function", "Grappler"), ("xla", "XLA")),
    repro="harness.backends.tensorflow.repro",
    probe="harness.backends.tensorflow.probe",
    tracer="harness.backends.tensorflow.trace",
    custom_rules=(
        ("reverse", ("gradient",)),
        ("forward", ("gradient",)),
        ("forward_over_reverse", ("gradient",)),
    ),
)
