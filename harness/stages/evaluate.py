"""The evaluation stage: one back end (TensorFlow, JAX or PyTorch), one job per piece
(:mod:`harness.stages.pieces`) -> ``results/<case>/<backend>/<piece>/evaluations.parquet``,
``edges.parquet`` (the exact edges of each run of one outcome) and ``localised.parquet``
(the failing primitives, :mod:`harness.causes.localise`), timings beside them."""

from __future__ import annotations

import dataclasses
import gc
import time
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
from harness.stages.pieces import Piece, parse_piece
from harness.stages.prepared import Prepared

__all__ = ["evaluate_stage"]


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
    engine.start()  # the framework starts here (a no-op where the command set its threads)
    # What the framework's import built (TensorFlow: about 430,000 objects) lives as long
    # as the process: keep the cyclic collector from scanning it again at every full
    # collection (TensorFlow's per-method release collects; softplus's quick evaluation
    # spent 4.4 of its 24.6 s there, 0.9 s once frozen).
    gc.freeze()
    pieces = prep.pieces(backend)
    if piece is not None:
        pieces = [parse_piece(piece, pieces)]
    if bisect and not prep.is_experiment:
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
    """One piece: ``prep`` is the case narrowed to it (:meth:`Prepared.narrowed`)."""
    _, modes, _ = prep.offered(backend)
    dtypes, methods = piece.dtypes, piece.methods
    s = prep.settings
    where = piece_dir(results, prep.case, backend, piece.name)
    flags = engine.probe_flush(dtypes, modes)
    if prep.is_experiment:
        from harness.experiments.stages import evaluate_experiment

        t0 = time.perf_counter()
        params = prep.case.params(s.setting)
        table, timing = evaluate_experiment(prep.case, params, dtypes, modes, backend)
        table = table[table["method"].isin(s.methods)].reset_index(drop=True)
        stats = {"seconds": round(time.perf_counter() - t0, 3), "traces": 0, **timing}
        meta = prep.provenance(
            "evaluate",
            backend=backend,
            piece=piece.name,
            framework=engine.facts(),
            platform={"flush": flags},
            evaluation=stats,
        )
        table = with_backend(table, backend)
        _write_evaluation(
            where, table, _empty_edges(), meta, with_backend(_empty_localised(), backend)
        )
        return table.drop(columns=["seconds"], errors="ignore"), meta
    edges = None
    if bisect:
        from harness.edges.finder import EdgeFinder
        from harness.reference.table import ReferenceStore
        from harness.reference.verify import ReferenceSettings

        ref_settings = ReferenceSettings(s.precision, s.verify_digits, s.max_precision)
        cache_dir = Path(results) / ".cache" / "reference" if cache else None
        # Each piece keeps the values its bisection verifies in a shard of its own.
        store = ReferenceStore(prep.case, ref_settings, cache_dir, shard=f"{backend}.{piece.name}")
        edges = EdgeFinder(
            prep.case, prep.points, reference[0], store, s.tolerance, flags, prep.segments
        )
    label = f"evaluate {backend}" + ("" if piece.name == "all" else f" {piece.name}")
    table, stats = engine.evaluate_case(
        prep.case,
        prep.points,
        dtypes,
        methods,
        modes,
        (lambda i, n: progress(label, i, n)) if progress else None,
        s.max_order,
        edges,
    )
    meta = prep.provenance(
        "evaluate",
        backend=backend,
        piece=piece.name,
        framework=engine.facts(),
        platform={"flush": flags},
        evaluation={**dataclasses.asdict(stats), "bisection": edges.stats if edges else None},
    )
    table = with_backend(table, backend)
    if edges is not None:
        edges.store.save()
    found = edges.table() if edges else _empty_edges()
    localise = bisect and prep.settings.localise
    localised = _localise(prep, engine, table, reference, flags, meta) if localise else None
    localised = with_backend(localised if localised is not None else _empty_localised(), backend)
    _write_evaluation(where, table, with_backend(found, backend), meta, localised)
    return table.drop(columns=["seconds"]), meta


def _localise(prep: Prepared, engine, table, reference, flags, meta) -> pd.DataFrame:
    """Each failing row's primitives judged at the arguments they receive
    (:mod:`harness.causes.localise`); seconds in the piece's statistics."""
    from harness.causes.localise import FAILING, localise
    from harness.judge.compare import join_reference, judge_frame

    t0 = time.perf_counter()
    rows = table.drop(columns=["backend", "seconds"], errors="ignore")
    rows = rows[rows["status"] == "value"]
    if rows.empty:
        return _empty_localised()
    judged = judge_frame(
        join_reference(prep.case, rows, reference[0], flags), prep.settings.tolerance
    )
    failing = judged[judged["outcome"].isin(FAILING)]
    sizes = {d: len(f) for d, f in prep.points.items()}
    out = localise(engine, prep.case, failing, prep.settings, flags, sizes)
    meta["evaluation"]["localise_seconds"] = round(time.perf_counter() - t0, 3)
    return out


def _empty_localised() -> pd.DataFrame:
    from harness.causes.localise import LOCALISED_COLUMNS

    return pd.DataFrame(columns=LOCALISED_COLUMNS)


def _empty_edges() -> pd.DataFrame:
    from harness.edges.bisection import EDGE_COLUMNS

    return pd.DataFrame(columns=list(EDGE_COLUMNS))
