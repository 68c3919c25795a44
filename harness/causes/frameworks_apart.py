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
inputs in every framework and is no mechanism to localise: it takes no part in the
meeting (a root cause of noise alone stays whole), and a framework with noise alone goes
with the first group whose inputs its noise meets, else the first group.
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
        groups = _groups(findings, rows, [impacts[i] > NOISE for i in rows])
        if len(groups) < 2:
            continue
        kind, rest = root.split(":", 1)
        for frameworks, where in groups:
            for i in where:
                roots[i] = f"{kind}:{'+'.join(frameworks)}:{rest}"


def _groups(
    findings: pd.DataFrame, rows: list[int], real: list[bool]
) -> list[tuple[list[str], list[int]]]:
    """The members' frameworks in groups whose failing inputs meet (``real``: each
    member more than noise), each with its rows."""
    spans: dict[str, list[tuple]] = {}
    noise: dict[str, list[tuple]] = {}
    for i, more in zip(rows, real):
        backend = str(findings["backend"].iat[i])
        axis = str(findings["input"].iat[i] or "")
        lo, hi = findings["lo"].iat[i], findings["hi"].iat[i]
        if not axis or pd.isna(lo) or pd.isna(hi):
            span = None  # meets every other
        else:
            span = (findings["case"].iat[i], axis, float(lo), float(hi))
        (spans if more else noise).setdefault(backend, []).append(span)
    order = sorted(spans, key=_rank)
    if len(order) < 2 or any(None in v for v in spans.values()):
        return [(sorted({*spans, *noise}, key=_rank), rows)]
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
    groups = list(heads.values())
    for b in sorted(set(noise) - set(spans), key=_rank):
        own = [s for s in noise[b] if s is not None]
        home = next((g for g in groups if any(_meet(own, spans[a]) for a in g)), groups[0])
        home.append(b)
    out = []
    for frameworks in groups:
        frameworks.sort(key=_rank)
        out.append((frameworks, [i for i in rows if findings["backend"].iat[i] in frameworks]))
    return out


def _rank(backend: str) -> tuple:
    return (BACKENDS.index(backend) if backend in BACKENDS else 99, backend)


def _meet(these: list[tuple], those: list[tuple]) -> bool:
    if None in these or None in those:
        return True
    return any(
        c == d and x == y and lo <= hi2 and lo2 <= hi
        for c, x, lo, hi in these
        for d, y, lo2, hi2 in those
    )
