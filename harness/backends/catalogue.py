"""The back ends: what each framework offers, whether it is installed, and its module.

Nothing here imports a framework: :func:`installed` asks the import system whether the
package is there, and :func:`load` imports a back end's module (and with it the framework)
only when a job evaluates in it.

Each back end writes what it is in its own folder (``<name>/spec.py``: a
:class:`~harness.backends.spec.BackendSpec`, data only) and is registered here by one line;
the case schema, the study's settings and the command line take the back ends' names and
the methods and modes from :data:`BACKENDS`, :data:`METHODS` and :data:`MODES`.

A back end offers its own methods, modes and dtypes. A study's lists name the union; each back end runs the part it offers,
so TensorFlow never has a ``jit`` mode and PyTorch never a ``taylor`` method (those are
features of a framework, not combinations of a case that fail). A combination a back end
offers but cannot express for one implementation (a TensorFlow-registered implementation
in JAX, a custom rule JAX's ``jet`` has no place for) is a row with the outcome
``not_applicable`` and the reason.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util

from harness.backends.jax.spec import SPEC as JAX
from harness.backends.spec import BackendSpec
from harness.backends.tensorflow.spec import SPEC as TENSORFLOW
from harness.backends.torch.spec import SPEC as TORCH

__all__ = [
    "BACKENDS",
    "METHODS",
    "MODES",
    "BackendSpec",
    "SPECS",
    "TITLES",
    "get",
    "installed",
    "load",
    "names",
]

#: The registration: one line per back end, in the order studies list them (the first is
#: the back end of rows and probes that name none).
SPECS: dict[str, BackendSpec] = {spec.name: spec for spec in (TENSORFLOW, JAX, TORCH)}

#: Each back end's name as its framework calls itself (``torch``: "PyTorch").
TITLES: dict[str, str] = {name: spec.title for name, spec in SPECS.items()}

#: The frameworks a case runs in.
BACKENDS: tuple[str, ...] = tuple(SPECS)
#: Every method some back end offers, in registration order (``taylor``: JAX's
#: ``jax.experimental.jet``).
METHODS: tuple[str, ...] = tuple(dict.fromkeys(m for s in SPECS.values() for m in s.methods))
#: Every mode some back end offers: ``eager`` (no compiler) first, then each back end's
#: compiled modes in registration order (TensorFlow's ``tf.function`` and XLA, JAX's
#: ``jax.jit``, ``torch.compile``).
MODES: tuple[str, ...] = tuple(
    dict.fromkeys(("eager", *(m for s in SPECS.values() for m in s.modes)))
)


def names() -> tuple[str, ...]:
    return BACKENDS


def get(name: str) -> BackendSpec:
    try:
        return SPECS[name]
    except KeyError:
        raise ValueError(f"unknown back end {name!r}; choose from {', '.join(BACKENDS)}") from None


def installed(name: str) -> bool:
    """Whether the framework can be imported here (without importing it)."""
    return _importable(get(name).package)


@functools.cache
def _importable(package: str) -> bool:
    # Once per process: parsing the census's workflow asks about 10,000 times (0.76 s of
    # path searches), and what is installed does not change while a process runs.
    return importlib.util.find_spec(package) is not None


def load(name: str):
    """The back end (:class:`harness.backends.interface.Backend`); imports the framework."""
    spec = get(name)
    if not installed(name):
        raise ValueError(f"back end {name!r} is not installed here; {spec.install}")
    return importlib.import_module(spec.module).BACKEND
