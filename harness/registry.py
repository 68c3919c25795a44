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

import ast
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Registered",
    "get",
    "get_reference",
    "implementation",
    "names",
    "reference",
    "source",
]


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


def source(name: str) -> tuple[str, str]:
    """The source of registered implementation ``name`` as standalone code: its factory
    and every module-level function and constant of its module that the factory uses,
    directly or through another, in the module's order, decorators dropped; and the
    factory's name. Imports inside those functions (SciPy, NumPy) stay as written."""
    factory = get(name).factory
    module = sys.modules[factory.__module__]
    text = inspect.getsource(module)
    tree = ast.parse(text)
    defined: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    defined[t.id] = node
    wanted: set[int] = set()
    todo = [factory.__name__]
    while todo:
        node = defined.get(todo.pop())
        if node is None or id(node) in wanted:
            continue
        wanted.add(id(node))
        body = node.body if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else [node]
        for part in body:
            todo.extend(n.id for n in ast.walk(part) if isinstance(n, ast.Name))
    lines = text.splitlines()
    blocks = []
    for node in tree.body:
        if id(node) in wanted:
            blocks.append("\n".join(lines[node.lineno - 1 : node.end_lineno]))  # no decorators
    return "\n\n\n".join(blocks), factory.__name__
