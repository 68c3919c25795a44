"""Kinks and ties: where an expression's derivative exists only as its two sides together.

At a zero of ``abs``, a tie of ``maximum``/``minimum``'s arguments, or a point where a
``where``'s condition has both sides equal, the primitive has no derivative of its own,
and each framework takes a one-sided derivative (or 0, or half of each) by its own
convention: ``maximum(x, 0) + log1p(exp(-abs(x)))`` is softplus, smooth with slope 1/2 at
0, and at x = 0 TensorFlow 2.21 gives 1 (``tf.maximum``'s gradient goes to its first
argument at a tie, ``tf.abs``'s is 0), JAX 0.10.2 gives 0, PyTorch 2.13 gives 1/2. That
is neither rounding nor a wrong kernel: it is a choice made at a kink, stated as such.

A tie is read in the framework's own values of the arguments at the failing point (the
localisation's, :mod:`harness.causes.localise`): a tie the dtype's rounding makes is a
tie for the framework too. No framework here.
"""

from __future__ import annotations

import json
import math

from harness.cases import expressions as ex

__all__ = ["KINKS", "branches", "kink_at", "kink_names", "sides"]

#: The primitives with a kink, and where: the arguments' relation at which it has none.
KINKS = {"abs": "its argument is 0", "maximum": "its arguments tie", "minimum": "its arguments tie"}

#: Whether ``where(cond, a, b)`` takes ``a`` when the condition's two sides are equal.
_TIE_TAKES_FIRST = {"le": True, "ge": True, "eq": True, "lt": False, "gt": False, "ne": False}


def branches(expression: ex.Node) -> list[ex.Where]:
    """The ``where`` selections of ``expression`` whose condition varies with its inputs."""
    return [
        n
        for n in ex.walk(expression)
        if isinstance(n, ex.Where) and not all(_constant(s) for s in (n.cond.left, n.cond.right))
    ]


def sides(where: ex.Where) -> tuple[ex.Node, ...]:
    """The condition's sides that vary (their values come from the framework)."""
    return tuple(s for s in (where.cond.left, where.cond.right) if not _constant(s))


def _constant(node: ex.Node) -> bool:
    return not any(isinstance(n, ex.Var) for n in ex.walk(node))


def _side(node: ex.Node, values: dict) -> float | None:
    if node in values:
        return values[node]
    if isinstance(node, ex.Num):
        return float(node.value)
    if isinstance(node, ex.Unary) and isinstance(node.arg, ex.Num):
        return -float(node.arg.value)
    return None


def kink_at(args, wheres, values: dict, judged: dict, dtype: str, via: str, mode: str) -> str:
    """The kinks at a point (JSON list, ``""`` none), in the order of its sites: ``args``
    the point's sites with their arguments' values (:func:`harness.causes.localise.localise`),
    ``wheres`` the expression's :func:`branches` and ``values`` its condition sides'
    values there; ``judged`` the primitives judged alone ((site text, dtype, arguments,
    mode) -> {(method, partial): row}), whose first-order rows at the tie are what the
    framework picks (the reference has no value there)."""
    out = []
    for site, a in args:
        if site.name not in KINKS or not all(math.isfinite(v) for v in a):
            continue
        operands = _operands(site, a)
        tie = operands[0] == 0 if site.name == "abs" else len(set(operands)) == 1
        if None in operands or not tie:
            continue
        found = judged.get((site.text, dtype, a, mode), {})
        picks = {
            label: float(g.value)
            for (method, label), g in sorted(found.items())
            if method == via and len(label) == 1
        }
        out.append(
            {
                "name": site.name,
                "primitive": site.text,
                "where": KINKS[site.name],
                "inputs": dict(zip(site.variables, a)),
                "picks": picks,
            }
        )
    for w in wheres:
        left, right = _side(w.cond.left, values), _side(w.cond.right, values)
        if left is not None and left == right:
            first = _TIE_TAKES_FIRST[w.cond.op]
            out.append(
                {
                    "name": "where",
                    "primitive": ex.unparse(w),
                    "where": "its condition's two sides are equal",
                    "inputs": {ex.unparse(w.cond.left): left},
                    "branch": ex.unparse(w.then if first else w.otherwise),
                    "picks": {},
                }
            )
    return json.dumps(out) if out else ""


def _operands(site, a: tuple) -> list:
    """The primitive's operands at the point: its variables' values, its constants as
    written (``maximum(u, 0)``'s 0); ``None`` for a constant it cannot read."""
    bound = dict(zip(site.variables, a))
    out = []
    for arg in getattr(site.primitive, "args", ()):
        out.append(bound.get(arg.name) if isinstance(arg, ex.Var) else _side(arg, {}))
    return out or [None]


def kink_names(text: str) -> str:
    """``abs+maximum``: the primitives of :func:`kink_at`'s JSON, as a key."""
    return "+".join(sorted({k["name"] for k in json.loads(text)}))
