"""``harness.trace(fn, framework, inputs)``: a user's function of scalar inputs as the
harness's own expression, through the framework's tracer (its back end's ``tracer``
module), checked before it is trusted: the expression computed by the harness in the
same framework in float64 must give the function's own values at the inputs, bit for bit
(NaN where it gives NaN, the sign of a zero kept); the first point that differs is
reported and nothing is returned.

A function that goes through a custom rule of its framework (``jax.custom_jvp`` or
``custom_vjp``, an ``autograd.Function``, ``tf.custom_gradient``) has its rule traced
too (:func:`trace_rules`): the first derivative the framework computes through it, in
each input, as an expression of the inputs and the seed (``dy`` for a reverse rule,
``dx`` for a forward one), checked bit for bit in float64 the same way. It is what the
framework differentiates, so the causes judge it as a hand-written rule (exactly, in
Arb: is it the derivative?)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from harness.backends.catalogue import SPECS
from harness.backends.interface import TraceError
from harness.cases import expressions as ex

__all__ = ["SEEDS", "Traced", "TraceError", "trace", "trace_rules", "tracer_of", "verify"]

#: A rule's seed: the upstream gradient of a reverse rule, the tangent of a forward one.
SEEDS = {"gradient": "dy", "tangent": "dx"}


@dataclass(frozen=True)
class Traced:
    """A traced function: its expression of ``names``, from ``framework``'s trace."""

    expression: ex.Node | None
    names: tuple[str, ...]
    framework: str
    #: The custom rule's trace: ``{"gradient" | "tangent": {input: node}}``.
    rules: dict = field(default_factory=dict)
    #: Why a custom rule the function has is not traced ("" where nothing is missing).
    note: str = ""

    @property
    def text(self) -> str:
        """The expression in the case files' language ("not traced" where the function
        could not be and a reference was given instead)."""
        return ex.unparse(self.expression) if self.expression is not None else "not traced"

    def rule_texts(self) -> dict:
        """The rules in the case files' language, as an implementation's ``gradient`` and
        ``tangent`` entries."""
        return {k: {p: ex.unparse(n) for p, n in r.items()} for k, r in self.rules.items()}


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


def trace_rules(fn: Callable, framework: str, names: Sequence[str], columns) -> tuple[dict, str]:
    """``(rules, note)``: ``fn``'s custom rule traced (``{}`` where it has none), each
    input's rule checked bit for bit at the points ``columns`` with the seed 1; ``note``
    says why a rule it has could not be traced (and the check goes on without it)."""
    tracer = tracer_of(framework)
    if not tracer.ruled(fn, names):
        return {}, ""
    rules, why = {}, []
    ones = np.ones_like(np.asarray(columns[0], dtype=np.float64))
    for kind in tracer.RULES:
        seed = SEEDS[kind]
        if seed in names:
            why.append(f"an input is named {seed}, the {kind} rule's seed")
            continue
        traced = {}
        try:
            for p in names:
                d = tracer.derivative(fn, kind, p, names)
                if tracer.nested(fn, kind, p, names):
                    raise TraceError(
                        f"the rule for {p} goes through a custom rule of its own (a nested "
                        "rule), which is not traced"
                    )
                node = tracer.trace(d, (*names, seed))
                verify(d, framework, node, (*names, seed), [*columns, ones])
                traced[p] = node
        except Exception as e:  # noqa: BLE001 - a rule the framework cannot compute here
            why.append(f"{kind}: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
            continue
        rules[kind] = traced
        if tracer.ONE_RULE:
            break
    note = "" if rules else "its custom rule is not traced (" + "; ".join(why) + ")"
    return rules, note


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
    rules, note = trace_rules(fn, framework, names, columns)
    return Traced(node, names, framework, rules, note)
