"""How one case's evaluation in one back end is split into jobs: pieces.

A piece is a slice of the evaluation by dtype, or by dtype and method (the study's
``split`` setting, per setting: :data:`harness.cases.schema.SPLIT_KEYS`). Each piece is one
job with its own folder, ``results/<case>/<backend>/<piece>/`` holding its
``evaluations.parquet`` and ``edges.parquet``; the comparison reads every piece of the
plan and merges them. Pieces are independent: an outcome's edges are bisected per method
and dtype, and a piece's compiled functions serve only it, so splitting changes no value
(a test checks it), only how many framework starts the study pays and how much memory
one job holds.

The names: ``all`` (no split), ``float32`` (by dtype), ``float32.reverse`` (by dtype and
method). An experiment (:mod:`harness.experiments`) is one piece, ``all``: it evaluates
its dtypes and methods in one computation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["ALL", "Piece", "parse_piece", "plan"]

#: The name of the one piece of an unsplit evaluation.
ALL = "all"


@dataclass(frozen=True)
class Piece:
    name: str
    dtypes: tuple[str, ...]
    methods: tuple[str, ...]


def plan(
    split: Sequence[str], dtypes: Sequence[str], methods: Sequence[str], whole: bool = False
) -> list[Piece]:
    """The pieces of an evaluation over ``dtypes`` x ``methods`` split by ``split``
    (``whole``: one piece whatever the split, for an experiment). Never empty: an
    evaluation with nothing to run is one piece that writes empty tables."""
    dtypes, methods = tuple(dtypes), tuple(methods)
    if whole or not split or not dtypes or ("method" in split and not methods):
        return [Piece(ALL, dtypes, methods)]
    if "method" in split:
        return [Piece(f"{d}.{m}", (d,), (m,)) for d in dtypes for m in methods]
    return [Piece(d, (d,), methods) for d in dtypes]


def parse_piece(name: str, pieces: Sequence[Piece]) -> Piece:
    """The piece called ``name`` among ``pieces`` (raises ``ValueError`` listing them)."""
    for piece in pieces:
        if piece.name == name:
            return piece
    known = ", ".join(p.name for p in pieces)
    raise ValueError(f"no piece {name!r} in this evaluation (its pieces: {known})")
