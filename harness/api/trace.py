"""``harness.trace(fn, framework, inputs)``: a user's function of scalar inputs as the
harness's own expression, through the framework's tracer (its back end's ``tracer``
module), checked before it is trusted: the expression computed by the harness in the
same framework in float64 must give the function's own values at the inputs, bit for bit
(NaN where it gives NaN, the sign of a zero kept); the first point that differs is
reported and nothing is returned."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from harness.backends.catalogue import SPECS
from harness.backends.interface import TraceError
from harness.cases import expressions as ex

__all__ = ["Traced", "TraceError", "trace", "tracer_of", "verify"]


@dataclass(frozen=True)
class Traced:
    """A traced function: its expression of ``names``, from ``framework``'s trace."""

    expression: ex.Node
    names: tuple[str, ...]
    framework: str

    @property
    def text(self) -> str:
        """The expression in the case files' language."""
        return ex.unparse(self.expression)


def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Bit for bit, any NaN equal to any NaN."""
    both_nan = np.isnan(a) & np.isnan(b)
    return both_nan | (a.view(np.int64) == b.view(np.int64))


def tracer_of(framework: str):
    """The tracer module of ``framework``'s back end (:class:`TraceError` if none)."""
    spec = SPECS.get(framework)
    if spec is None:
        raise TraceError(f"unknown framework {framework!r}; known: {', '.join(sorted(SPECS))}")
    if not spec.tracer:
        raise TraceError(f"{spec.title} has no tracer yet")
    return importlib.import_module(spec.tracer)


def verify(fn: Callable, framework: str, node: ex.Node, names: Sequence[str], columns) -> None:
    """Raise :class:`TraceError` unless ``node`` computed by the harness in ``framework``
    in float64 gives ``fn``'s values at every point of ``columns``, bit for bit."""
    user, ours = tracer_of(framework).values(fn, node, names, columns)
    differ = np.flatnonzero(~_same(user, ours))
    if differ.size:
        i = int(differ[0])
        at = ", ".join(f"{n} = {float(c[i])!r}" for n, c in zip(names, columns))
        raise TraceError(
            f"the trace {ex.unparse(node)} does not compute what the function computes: at "
            f"{at} the function gives {float(user[i])!r} in float64, the trace "
            f"{float(ours[i])!r} ({differ.size} of {user.size} points differ); the trace "
            "is not used"
        )


def trace(fn: Callable, framework: str, inputs: Mapping[str, Sequence[float]]) -> Traced:
    """``fn`` of the scalar inputs named by ``inputs`` (in its parameters' order), traced
    by ``framework`` and checked at every point of ``inputs`` (one sequence of floats per
    name, all of one length)."""
    tracer = tracer_of(framework)
    names = tuple(inputs)
    columns = [np.asarray(inputs[n], dtype=np.float64).ravel() for n in names]
    if not columns or len({len(c) for c in columns}) != 1 or len(columns[0]) == 0:
        raise TraceError("inputs: one non-empty list of floats per input, all of one length")
    node = tracer.trace(fn, names)
    verify(fn, framework, node, names, columns)
    return Traced(node, names, framework)
