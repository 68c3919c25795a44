"""The only way a case reaches Python code: implementations registered by name.

A case file names a registered implementation (``registered: seed000_newdiv``); it can
never name a module, a file or a callable. Registration happens in modules of this
package (:mod:`harness.builtin_implementations`), so the set of reachable code is exactly
what the package ships.

A registered implementation is a *factory*: ``factory(tf, dtype) -> fn``, where ``fn``
takes one tensor per case input (keyword arguments, each a 1-D batch) and returns the
function's values as a tensor of the same shape. TensorFlow is passed in, so this
module and the validator never import it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Registered", "get", "implementation", "names", "reference", "get_reference"]


@dataclass(frozen=True)
class Registered:
    name: str
    factory: Callable[..., Any]
    inputs: tuple[str, ...]
    description: str


_IMPLEMENTATIONS: dict[str, Registered] = {}
_REFERENCES: dict[str, Registered] = {}


def implementation(name: str, inputs: tuple[str, ...], description: str) -> Callable:
    """Register ``factory(tf, dtype) -> fn(**inputs)`` under ``name``."""

    def register(factory: Callable) -> Callable:
        if name in _IMPLEMENTATIONS:
            raise ValueError(f"implementation {name!r} registered twice")
        _IMPLEMENTATIONS[name] = Registered(name, factory, tuple(inputs), description)
        return factory

    return register


def reference(name: str, inputs: tuple[str, ...], description: str) -> Callable:
    """Register ``fn(point: dict[str, mpf], partials, dps) -> dict[partial, mpf]``."""

    def register(fn: Callable) -> Callable:
        if name in _REFERENCES:
            raise ValueError(f"reference {name!r} registered twice")
        _REFERENCES[name] = Registered(name, fn, tuple(inputs), description)
        return fn

    return register


def _load() -> None:
    from . import builtin_implementations  # noqa: F401  (registers on import)


def names() -> list[str]:
    """Names of the registered implementations."""
    _load()
    return sorted(_IMPLEMENTATIONS)


def get(name: str) -> Registered:
    """The registered implementation ``name`` (KeyError if unknown)."""
    _load()
    return _IMPLEMENTATIONS[name]


def reference_names() -> list[str]:
    _load()
    return sorted(_REFERENCES)


def get_reference(name: str) -> Registered:
    _load()
    return _REFERENCES[name]
