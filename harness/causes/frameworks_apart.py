"""A primitive's root cause told per framework where the frameworks fail apart.

Each framework's kernel of a primitive is its own code. Where several frameworks' kernels
fail at the same inputs (all three frameworks' ``cosh`` overflow on
``|x| in [88.72284, 89.415985]``), that is one mechanism, stated once. Where they fail at
inputs that never meet (TensorFlow's softplus inaccurate at its switch at -13.942386,
PyTorch's zero below -88.72284 and wrong past its threshold 20), they are as many
mechanisms: the root cause splits into one per group of frameworks whose failing inputs
meet, each keyed with its frameworks (``kernel:tensorflow:softplus:value:wrong``).

Inputs meet where two members' intervals on the same case's same input overlap, whatever
their dtypes (a region is a set of reals: float32's ``[4.93, 87.3]`` and float64's
``[4.93, 708.4]`` are the same mechanism in two dtypes). A member with no interval (a grid's
ranges, a point without a region) meets every other: nothing splits it off. Rounding
noise (impact 1: an error at the rounding of the function's own scale) falls at scattered
inputs in every framework and is no mechanism to localise: a root cause of noise alone
stays whole.
"""

from __future__ import annotations

import pandas as pd

from harness.cases.schema import BACKENDS

__all__ = ["SPLIT_KINDS", "apart"]

#: The kinds whose subject is a primitive each framework implements on its own.
SPLIT_KINDS = ("kernel",)
#: The impact tier of rounding noise (:data:`harness.causes.classify.SEVERITY_LABELS`).
NOISE = 1


def apart(findings: pd.DataFrame, kinds: list[str], impacts: list[int], roots: list[str]) -> None:
    """Re-key, in place in ``roots``, each root cause of :data:`SPLIT_KINDS` whose
    frameworks fall into groups whose failing inputs never meet: each group's members get
    ``kind:<frameworks joined by +>:rest-of-the-id``. A root cause whose frameworks all
    meet (or that holds one framework, or noise alone) keeps its id."""
    members: dict[str, list[int]] = {}
    for i, (kind, root) in enumerate(zip(kinds, roots)):
        if kind in SPLIT_KINDS:
            members.setdefault(root, []).append(i)
    for root, rows in members.items():
        if max(impacts[i] for i in rows) <= NOISE:
            continue
        groups = _groups(findings, rows)
        if len(groups) < 2:
            continue
        kind, rest = root.split(":", 1)
        for frameworks, where in groups:
            for i in where:
                roots[i] = f"{kind}:{'+'.join(frameworks)}:{rest}"


def _groups(findings: pd.DataFrame, rows: list[int]) -> list[tuple[list[str], list[int]]]:
    """The members' frameworks in groups whose failing inputs meet, each with its rows."""
    spans: dict[str, list[tuple]] = {}
    open_ended: set[str] = set()
    for i in rows:
        backend = str(findings["backend"].iat[i])
        axis = str(findings["input"].iat[i] or "")
        lo, hi = findings["lo"].iat[i], findings["hi"].iat[i]
        spans.setdefault(backend, [])
        if not axis or pd.isna(lo) or pd.isna(hi):
            open_ended.add(backend)
            continue
        spans[backend].append((findings["case"].iat[i], axis, float(lo), float(hi)))
    order = sorted(spans, key=lambda b: (BACKENDS.index(b) if b in BACKENDS else 99, b))
    if len(order) < 2 or open_ended:
        return [(order, rows)]
    parent = {b: b for b in order}

    def find(b: str) -> str:
        while parent[b] != b:
            b = parent[b]
        return b

    for n, a in enumerate(order):
        for b in order[n + 1 :]:
            if find(a) != find(b) and _meet(spans[a], spans[b]):
                parent[find(b)] = find(a)
    heads: dict[str, list[str]] = {}
    for b in order:
        heads.setdefault(find(b), []).append(b)
    out = []
    for frameworks in heads.values():
        out.append(([*frameworks], [i for i in rows if findings["backend"].iat[i] in frameworks]))
    return out


def _meet(these: list[tuple], those: list[tuple]) -> bool:
    return any(
        c == d and x == y and lo <= hi2 and lo2 <= hi
        for c, x, lo, hi in these
        for d, y, lo2, hi2 in those
    )
