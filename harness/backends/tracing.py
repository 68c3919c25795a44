"""What the three tracers share (:mod:`harness.backends.jax.trace`, ``torch.trace``,
``tensorflow.trace``): a function's input names, a constant as an exact number node, and
the nodes of a mapped operation (a function of the operator table, arithmetic, a
comparison, a negation). Each tracer names its framework's operations in its own
``FUNCTIONS``, ``BINARY`` and ``COMPARE`` tables and handles the rest (calls to inline,
selects, identities) itself. No framework here."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping, Sequence

from harness.cases import expressions as ex
from harness.operators.table import OPERATORS

__all__ = ["Refusal", "input_names", "mapped", "number"]


class Refusal(Exception):
    """An operation the trace cannot express; the tracer adds where it is."""


def input_names(fn: Callable, names: Sequence[str] | None) -> list[str]:
    """``names``, or the function's parameters that have no default."""
    if names is not None:
        return list(names)
    params = inspect.signature(fn).parameters.values()
    return [p.name for p in params if p.default is inspect.Parameter.empty]


def number(value) -> ex.Num:
    """A constant as its exact float64 value: an integer as itself, a float as the
    shortest text that reads back to it."""
    if isinstance(value, bool):
        raise Refusal(f"a boolean constant {value}")
    if isinstance(value, int):
        return ex.Num(str(value), float(value))
    v = float(value)
    if not math.isfinite(v):
        # JAX's logaddexp rule compares with inf: the case language has no such literal.
        raise Refusal(f"a constant {v!r}, which a case file has no literal for")
    return ex.Num(repr(v), v)


def mapped(
    name: str,
    ins: Sequence[ex.Node],
    functions: Mapping[str, str],
    binary: Mapping[str, str],
    compare: Mapping[str, str],
    negate: str,
) -> ex.Node:
    """The node of the framework's operation ``name`` on ``ins``; a :class:`Refusal`
    where none of the tables has it, or where it takes a comparison's truth value."""
    if any(isinstance(n, ex.Compare) for n in ins):
        raise Refusal("applied to a comparison (where takes one comparison)")
    if name in functions:
        func = functions[name]
        low, high = OPERATORS[func].arity
        if not low <= len(ins) <= high:
            raise Refusal(f"{len(ins)} arguments for {func}")
        return ex.Call(func, tuple(ins))
    if name in binary and len(ins) == 2:
        return ex.Binary(binary[name], *ins)
    if name in compare and len(ins) == 2:
        return ex.Compare(compare[name], *ins)
    if name == negate and len(ins) == 1:
        return ex.Unary("neg", ins[0])
    raise Refusal("no entry of the operator table")
