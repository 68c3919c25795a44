"""The lookup of registered implementations and references (a case's ``registered:``).

Importing this module registers everything the package ships
(:mod:`harness.registered.seeds`) and what installed packages register through the
entry-point group ``harness.implementations`` (:data:`GROUP`: each entry a module that
registers with :mod:`harness.registered.register`'s decorators when imported): code the
user installed, never code a case file points to. :mod:`harness.registered.register`
holds the decorators and the tables.
"""

from __future__ import annotations

import ast
import inspect
import sys
import warnings
from importlib.metadata import entry_points

from harness.registered import seeds  # noqa: F401  (registers on import)
from harness.registered.register import (
    IMPLEMENTATIONS,
    PORT_MODES_LEFT_OUT,
    PORTS,
    REFERENCES,
    Registered,
)

#: The entry-point group installed packages register implementations through.
GROUP = "harness.implementations"

__all__ = [
    "GROUP",
    "Registered",
    "get",
    "get_port",
    "get_reference",
    "names",
    "ported_to",
    "reference_names",
    "source",
]


def _load_installed() -> None:
    """Import each module of :data:`GROUP`; one that fails is left out with a warning
    naming it (the package's own implementations still load)."""
    for entry in entry_points(group=GROUP):
        try:
            entry.load()
        except Exception as exc:  # noqa: BLE001 - an installed package's own error
            warnings.warn(
                f"{GROUP} entry point {entry.name!r} ({entry.value}) from "
                f"{getattr(entry.dist, 'name', '?')} failed to load and is left out: "
                f"{type(exc).__name__}: {exc}",
                stacklevel=2,
            )


_load_installed()


def names() -> list[str]:
    """Names of the registered implementations."""
    return sorted(IMPLEMENTATIONS)


def get(name: str) -> Registered:
    """The registered implementation ``name`` (KeyError if unknown)."""
    return IMPLEMENTATIONS[name]


def get_port(name: str, backend: str):
    """The factory of registered implementation ``name`` in ``backend`` (``tensorflow``:
    the implementation itself), or None where it has no port."""
    if backend == "tensorflow":
        return get(name).factory
    return PORTS.get((name, backend))


def mode_left_out(name: str, backend: str, mode: str) -> str:
    """Why registered implementation ``name``'s port to ``backend`` is not run in
    ``mode`` ("" where it is)."""
    return PORT_MODES_LEFT_OUT.get((name, backend), {}).get(mode, "")


def ported_to(name: str) -> list[str]:
    """The back ends that run registered implementation ``name``."""
    return ["tensorflow", *sorted(b for n, b in PORTS if n == name)]


def reference_names() -> list[str]:
    return sorted(REFERENCES)


def get_reference(name: str) -> Registered:
    return REFERENCES[name]


def source(name: str, backend: str = "tensorflow") -> tuple[str, str] | None:
    """The source of registered implementation ``name`` (its port to ``backend``) as
    standalone code: its factory and every module-level function and constant of its
    module that the factory uses, directly or through another, in the module's order,
    decorators dropped; and the factory's name (``None``: no port to ``backend``).
    Imports inside those functions (SciPy, NumPy) stay as written."""
    factory = get_port(name, backend)
    if factory is None:
        return None
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
