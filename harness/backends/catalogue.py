"""The back ends: what each framework offers, whether it is installed, and its module.

Nothing here imports a framework: :func:`installed` asks the import system whether the
package is there, and :func:`load` imports a back end's module (and with it the framework)
only when a job evaluates in it.

A back end offers its own methods, modes and dtypes. A study's lists name the union
(:data:`harness.cases.schema.METHODS`, ``MODES``); each back end runs the part it offers,
so TensorFlow never has a ``jit`` mode and PyTorch never a ``taylor`` method (those are
features of a framework, not combinations of a case that fail). A combination a back end
offers but cannot express for one implementation (a TensorFlow-registered implementation
in JAX, a custom rule JAX's ``jet`` has no place for) is a row with the outcome
``not_applicable`` and the reason.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass

from harness.cases.schema import BACKENDS, DTYPES

__all__ = ["BackendSpec", "SPECS", "get", "installed", "load", "names"]


@dataclass(frozen=True)
class BackendSpec:
    name: str  # as in results' ``backend`` column and the study's ``backends`` list
    title: str  # as a reader knows it
    package: str  # the importable package that must be installed
    module: str  # the harness module defining ``BACKEND`` (imports the framework)
    methods: tuple[str, ...]
    modes: tuple[str, ...]  # in the order a case's evaluation runs them
    dtypes: tuple[str, ...]
    install: str  # how to install it
    #: The exception types the framework raises to refuse a transformation it does not
    #: offer (an ``unsupported`` combination, not a bug): JAX's ``jvp`` of a
    #: ``custom_vjp`` function is a TypeError, a missing rule a NotImplementedError,
    #: ``jet`` through a custom rule an UnexpectedTracerError; PyTorch's forward mode
    #: through an ``autograd.Function`` without ``jvp`` a NotImplementedError.
    refusals: tuple[str, ...] = ("NotImplementedError",)
    #: The compiler behind each compiled mode: TensorFlow's ``jit_compile=True`` and
    #: ``jax.jit`` are both XLA, so one XLA rewrite failing in both is one mechanism.
    compilers: tuple[tuple[str, str], ...] = ()
    #: The module writing each finding's standalone script and probe command
    #: (``snippet``, ``probe_command``), where the back end has one.
    repro: str = ""
    #: The module computing one probed value its own way (``value``), where the back end
    #: has one; the others are probed through ``evaluate_case`` on a batch.
    probe: str = ""

    @property
    def snippet(self) -> str:
        """The module writing its reproducers' functions (``snippet.py`` beside ``module``)."""
        return self.module.rsplit(".", 1)[0] + ".snippet"


SPECS: dict[str, BackendSpec] = {
    "tensorflow": BackendSpec(
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
    ),
    "jax": BackendSpec(
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
    ),
    "torch": BackendSpec(
        "torch",
        "PyTorch",
        "torch",
        "harness.backends.torch.backend",
        ("reverse", "forward", "forward_over_reverse", "finite_difference"),
        ("eager", "compile"),
        DTYPES,
        "pip install -e .[torch]",
        compilers=(("compile", "TorchInductor"),),
    ),
}
assert tuple(SPECS) == BACKENDS


def names() -> tuple[str, ...]:
    return BACKENDS


def get(name: str) -> BackendSpec:
    try:
        return SPECS[name]
    except KeyError:
        raise ValueError(f"unknown back end {name!r}; choose from {', '.join(BACKENDS)}") from None


def installed(name: str) -> bool:
    """Whether the framework can be imported here (without importing it)."""
    return importlib.util.find_spec(get(name).package) is not None


def load(name: str):
    """The back end (:class:`harness.backends.interface.Backend`); imports the framework."""
    spec = get(name)
    if not installed(name):
        raise ValueError(f"back end {name!r} is not installed here; {spec.install}")
    return importlib.import_module(spec.module).BACKEND
