"""Registration of the Python code a case may name.

A case file names a registered implementation (``registered: seed000_newdiv``); it can
never name a module, a file or a callable. Registration happens in modules of this
package (:mod:`harness.registered.seeds`), so the set of reachable code is exactly what the
package ships; :mod:`harness.registered.catalogue` is the lookup.

A registered implementation is a *factory*: ``factory(tf, dtype) -> fn``, where ``fn``
takes one tensor per case input (keyword arguments, each a 1-D batch) and returns the
function's values as a tensor of the same shape. TensorFlow is passed in, so this
module and the validator never import it.

A registered implementation may also have *ports* to other frameworks
(:func:`port`): ``factory(framework_module, dtype) -> fn`` with the same inputs, the
same computation written as a user of that framework writes it (``jax`` with
``jax.numpy`` and ``jax.lax``; ``torch``). A back end without a port reports the
implementation as ``not_applicable``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "IMPLEMENTATIONS",
    "PORTS",
    "PORT_MODES_LEFT_OUT",
    "REFERENCES",
    "Registered",
    "implementation",
    "port",
    "reference",
    "user_function",
    "user_reference",
]


@dataclass(frozen=True)
class Registered:
    name: str
    factory: Callable[..., Any]
    inputs: tuple[str, ...]
    description: str
    #: A user's function's trace (:func:`user_function`): its ``expression`` and its
    #: custom rule's ``gradient`` and ``tangent`` (``{input: text}``), in the case files'
    #: language, for the causes to judge its rule by; ``None`` for the package's own.
    trace: Mapping[str, Any] | None = None


#: Every registered implementation and reference by name (filled as modules register).
IMPLEMENTATIONS: dict[str, Registered] = {}
REFERENCES: dict[str, Registered] = {}
#: Ports of registered implementations to other frameworks, by (name, back end).
PORTS: dict[tuple[str, str], Callable[..., Any]] = {}
#: (implementation, back end) -> {mode: why the port is not run in that mode}.
PORT_MODES_LEFT_OUT: dict[tuple[str, str], dict[str, str]] = {}


def implementation(name: str, inputs: tuple[str, ...], description: str) -> Callable:
    """Register ``factory(tf, dtype) -> fn(**inputs)`` under ``name``."""

    def register(factory: Callable) -> Callable:
        if name in IMPLEMENTATIONS:
            raise ValueError(f"implementation {name!r} registered twice")
        IMPLEMENTATIONS[name] = Registered(name, factory, tuple(inputs), description)
        return factory

    return register


def port(name: str, backend: str, not_in: dict[str, str] | None = None) -> Callable:
    """Register ``factory(framework, dtype) -> fn(**inputs)`` as implementation ``name``
    (registered before) in ``backend`` (``jax`` or ``torch``). ``not_in``: the back end's
    modes the port is not run in, each with the measured reason (its rows are
    ``not_applicable`` with that reason)."""

    def register(factory: Callable) -> Callable:
        if name not in IMPLEMENTATIONS:
            raise ValueError(f"port of {name!r}: no such registered implementation")
        if (name, backend) in PORTS:
            raise ValueError(f"implementation {name!r} ported to {backend} twice")
        PORTS[name, backend] = factory
        PORT_MODES_LEFT_OUT[name, backend] = dict(not_in or {})
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


def user_reference(name: str, fn: Callable, inputs: tuple[str, ...], description: str):
    """Register a user's mpmath function ``fn`` of the ``inputs`` (mpf in, mpf out) as
    the reference ``name``, for this process only (registered again, the newer one
    replaces it): its value at the working precision, each derivative by
    ``mpmath.diff`` there; verified, as every registered reference is, by two precisions
    agreeing, not certified by Arb."""
    import mpmath

    def factory(point, partials, dps):
        xs = [mpmath.mpf(point[n]) for n in inputs]
        out = {}
        for p in partials:
            counts = tuple(p.count(n) for n in inputs)
            if not any(counts):
                out[p] = mpmath.mpf(fn(*xs))
            elif len(inputs) == 1:
                out[p] = mpmath.diff(fn, xs[0], counts[0])
            else:
                out[p] = mpmath.diff(fn, tuple(xs), counts)
        return out

    factory.__wrapped__ = fn  # the user's source keys the reference cache
    REFERENCES[name] = Registered(name, factory, tuple(inputs), description)


def user_function(
    name: str,
    backend: str,
    fn: Callable,
    inputs: tuple[str, ...],
    description: str,
    trace: Mapping[str, Any] | None = None,
):
    """Register a user's own function ``fn`` (of one positional batch per input, written
    for ``backend``) under ``name`` for this process only: what ``harness.check`` runs;
    ``trace``: what its trace says it computes (:attr:`Registered.trace`). Registered
    again under the same name, the newer function replaces it. A case file written to
    disk that names it validates only in the process that registered it."""

    def factory(framework, dtype):
        return lambda **xs: fn(*(xs[n] for n in inputs))

    def elsewhere(framework, dtype):
        raise ValueError(f"{name} is a {backend} function: it runs in {backend} only")

    base = factory if backend == "tensorflow" else elsewhere
    IMPLEMENTATIONS[name] = Registered(name, base, tuple(inputs), description, trace)
    if backend != "tensorflow":
        PORTS[name, backend] = factory
        PORT_MODES_LEFT_OUT[name, backend] = {}
