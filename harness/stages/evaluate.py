"""The evaluation stage: one back end (TensorFlow, JAX or PyTorch), one job per piece
(:mod:`harness.stages.pieces`) -> ``results/<case>/<backend>/<piece>/evaluations.parquet``,
``edges.parquet`` (the exact edges of each run of one outcome) and ``localised.parquet``
(the failing primitives, :mod:`harness.causes.localise`), timings beside them."""

from __future__ import annotations

import gc
from pathlib import Path

import pandas as pd

from harness import provenance
from harness.cases.schema import DEFAULT_BACKEND
from harness.results import write_table
from harness.stages.inputs import (
    Progress,
    merge_pieces,
    piece_dir,
    read_stage_input,
    with_backend,
)
from harness.stages.kinds import kind_of
from harness.stages.pieces import Piece, parse_piece
from harness.stages.prepared import Prepared

__all__ = ["compilation_cache", "evaluate_stage"]


def _write_evaluation(
    where: Path, table: pd.DataFrame, edges: pd.DataFrame, meta: dict, localised: pd.DataFrame
) -> None:
    """One piece's evaluations, edges and localisation (:mod:`harness.causes.localise`),
    and its timings: seconds per method, mode and dtype (the back ends' ``seconds``
    column), with the run's facts as provenance."""
    kept, facts = provenance.split_run_facts(meta)
    keys = ["backend", "method", "mode", "dtype"]
    if "seconds" in table:
        timings = table.groupby(keys, sort=False)["seconds"].first().reset_index()
        table = table.drop(columns=["seconds"])
    else:
        timings = pd.DataFrame(columns=[*keys, "seconds"])
    timings.insert(1, "piece", meta.get("piece"))
    write_table(table, where / "evaluations.parquet", kept)
    write_table(edges, where / "edges.parquet", kept)
    write_table(localised, where / "localised.parquet", kept)
    write_table(timings, where / "timings.parquet", facts)


def compilation_cache(prep: Prepared, results: str | Path) -> Path | None:
    """Where a framework keeps what it compiles for the processes after this one,
    ``<results>/.cache/compiled`` (:mod:`harness.backends.jax.cache`); ``None`` where
    the study's ``compilation_cache`` is off. A ``.cache`` that links to the per-user
    cache (:func:`harness.stages.folders.share_cache`) is given resolved: JAX keeps the
    path for the process, and a temporary run's link goes with its run."""
    if not prep.settings.compilation_cache:
        return None
    own = Path(results) / ".cache"
    return (own.resolve() if own.is_symlink() else own) / "compiled"


def evaluate_stage(
    prep: Prepared,
    results: str | Path,
    progress: Progress | None = None,
    reference: tuple[pd.DataFrame, dict] | None = None,
    bisect: bool = True,
    cache: bool = True,
    backend: str = DEFAULT_BACKEND,
    piece: str | None = None,
) -> tuple[pd.DataFrame, dict]:
    """Evaluate the case in one back end, piece by piece (:meth:`Prepared.pieces`; only
    ``piece`` if given), and find the exact edges of every run of one outcome
    (:mod:`harness.edges.bisection`), which needs the case's reference (read from
    ``results`` unless given): each piece writes ``<backend>/<piece>/evaluations.parquet``
    and ``edges.parquet``. Returns the pieces' evaluations merged."""
    from harness.backends.catalogue import load

    engine = load(backend)
    # The framework starts here (a no-op where the command started it).
    engine.start(cache=compilation_cache(prep, results))
    # What the framework's import built (TensorFlow: about 430,000 objects) lives as long
    # as the process: keep the cyclic collector from scanning it again at every full
    # collection (TensorFlow's per-method release collects; softplus's quick evaluation
    # spent 4.4 of its 24.6 s there, 0.9 s once frozen).
    gc.freeze()
    pieces = prep.pieces(backend)
    if piece is not None:
        pieces = [parse_piece(piece, pieces)]
    if bisect and prep.case.kind == "expression":
        reference = reference or read_stage_input(prep, results, "reference")
    done = [
        _evaluate_piece(
            prep.narrowed(one), results, engine, backend, one, progress, reference, bisect, cache
        )
        for one in pieces
    ]
    return merge_pieces(done)


def _evaluate_piece(
    prep: Prepared, results, engine, backend: str, piece: Piece, progress, reference, bisect, cache
) -> tuple[pd.DataFrame, dict]:
    """One piece: ``prep`` is the case narrowed to it (:meth:`Prepared.narrowed`), by its
    kind's step (:mod:`harness.stages.kinds`)."""
    _, modes, _ = prep.offered(backend)
    where = piece_dir(results, prep.case, backend, piece.name)
    flags = engine.probe_flush(piece.dtypes, modes)
    step = kind_of(prep.case).step("evaluate")
    out = step(
        prep, engine, backend, piece, modes, flags, progress, reference, bisect, cache, results
    )
    meta = prep.provenance(
        "evaluate",
        backend=backend,
        piece=piece.name,
        framework=engine.facts(),
        platform={"flush": flags},
        evaluation=out.stats,
    )
    table = with_backend(out.table, backend)
    _write_evaluation(where, table, out.edges, meta, with_backend(out.localised, backend))
    return table.drop(columns=["seconds"], errors="ignore"), meta
