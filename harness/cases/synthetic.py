"""Cases made in code, not read from a file: one expression over a few inputs, its
derivatives up to an order, judged the way a case file's are. The root causes judge each
primitive of a failing expression this way (:mod:`harness.causes.localise`)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

from harness.cases import expressions as ex
from harness.cases.model import Case, Implementation, InputSpec, ReferenceSpec

__all__ = ["expression_case", "partials_up_to"]


def partials_up_to(names: Sequence[str], order: int) -> tuple[tuple[str, ...], ...]:
    """Every partial of ``names`` of order 0 to ``order``, lowest first: ``()``, ``(u,)``,
    ``(v,)``, ``(u, u)``, ``(u, v)``, ``(v, v)``, ..."""
    out: list[tuple[str, ...]] = [()]
    for n in range(1, order + 1):
        out += list(itertools.combinations_with_replacement(tuple(names), n))
    return tuple(out)


def expression_case(
    case_id: str,
    implementations: Mapping[str, ex.Node],
    names: Sequence[str],
    order: int,
    reference: ex.Node | None = None,
) -> Case:
    """A case over the inputs ``names`` whose implementations are the given expressions,
    with every partial up to ``order``; its reference is ``reference`` (by default the
    first implementation's expression). The points are given to each stage."""
    first = next(iter(implementations.values()))
    function = reference if reference is not None else first
    text = ex.unparse(function)
    partials = partials_up_to(names, order)
    raw = {
        "function": text,
        "inputs": {n: {"values": []} for n in names},
        "implementations": {k: ex.unparse(v) for k, v in implementations.items()},
        "partials": [list(p) for p in partials],
    }
    return Case(
        id=case_id,
        path="",
        title=text,
        source="",
        notes="",
        inputs=tuple(InputSpec(n, "values", {"values": []}) for n in names),
        function=function,
        function_text=text,
        partials=partials,
        implementations=tuple(
            Implementation(name, expression=node, text=ex.unparse(node))
            for name, node in implementations.items()
        ),
        reference=ReferenceSpec(function, text),
        dtypes=None,
        methods=None,
        modes=None,
        quick=None,
        expectations=(),
        tolerances=(),
        raw=raw,
    )
