"""Registration of the Python code a case may name.

A case file names a registered implementation (``registered: seed000_newdiv``); it can
never name a module, a file or a callable. Registration happens in modules of this
package (:mod:`harness.registered.seeds`), so the set of reachable code is exactly what the
package ships; :mod:`harness.registered.catalogue` is the lookup.

A registered implementation is a *factory*: ``factory(tf, dtype) -> fn``, where ``fn``
takes one tensor per case input (keyword arguments, each a 1-D batch) and returns the
function's values as a tensor of the same shape. TensorFlow is passed in, so this
module and the validator never import it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["IMPLEMENTATIONS", "REFERENCES", "Registered", "implementation", "reference"]


@dataclass(frozen=True)
class Registered:
    name: str
    factory: Callable[..., Any]
    inputs: tuple[str, ...]
    description: str


#: Every registered implementation and reference by name (filled as modules register).
IMPLEMENTATIONS: dict[str, Registered] = {}
REFERENCES: dict[str, Registered] = {}


def implementation(name: str, inputs: tuple[str, ...], description: str) -> Callable:
    """Register ``factory(tf, dtype) -> fn(**inputs)`` under ``name``."""

    def register(factory: Callable) -> Callable:
        if name in IMPLEMENTATIONS:
            raise ValueError(f"implementation {name!r} registered twice")
        IMPLEMENTATIONS[name] = Registered(name, factory, tuple(inputs), description)
        return factory

    return register


def reference(name: str, inputs: tuple[str, ...], description: str) -> Callable:
    """Register ``fn(point: dict[str, mpf], partials, dps) -> dict[partial, mpf]``."""

    def register(fn: Callable) -> Callable:
        if name in REFERENCES:
            raise ValueError(f"reference {name!r} registered twice")
        REFERENCES[name] = Registered(name, fn, tuple(inputs), description)
        return fn

    return register
