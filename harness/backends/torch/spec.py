"""PyTorch as the registry knows it (no PyTorch import)."""

from harness.backends.spec import BackendSpec
from harness.numerics.floats import DTYPES

SPEC = BackendSpec(
    "torch",
    "PyTorch",
    "torch",
    "harness.backends.torch.backend",
    ("reverse", "forward", "forward_over_reverse", "finite_difference"),
    ("eager", "compile"),
    DTYPES,
    "pip install -e .[torch]",
    compilers=(("compile", "TorchInductor"),),
    tracer="harness.backends.torch.trace",
    custom_rules=(
        ("reverse", ("gradient",)),
        ("forward", ("tangent",)),
        ("forward_over_reverse", ("gradient", "tangent")),
    ),
)
