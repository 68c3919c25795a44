"""The stages of one case, each reading and writing ``results/<case>/``.

``reference`` (mpmath, no framework) -> ``reference.parquet``;
``evaluate`` (one back end: TensorFlow, JAX or PyTorch; one job per piece, see
:mod:`harness.pieces`) -> ``<backend>/<piece>/evaluations.parquet`` and ``edges.parquet``;
``compare`` (the reference and every back end's evaluations) -> ``errors.parquet``, with a
``backend`` column. :func:`run_case` runs them all in one process. Every table carries provenance (see
:mod:`harness.provenance`); compare refuses inputs whose case or settings differ.
Nothing is written for a case that fails validation: the case is loaded (and raises)
before any stage touches the disk.
"""

from __future__ import annotations

import dataclasses
import gc
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from harness import provenance
from harness.cases.schema import DEFAULT_BACKEND
from harness.config import StudyConfig
from harness.pieces import Piece, parse_piece
from harness.prepared import Prepared, Selection, prepare
from harness.results import write_table
from harness.stage_inputs import (
    case_dir,
    check_input,
    merge_pieces,
    piece_dir,
    read_edges,
    read_evaluations,
    read_localised,
    read_stage_input,
    with_backend,
)

__all__ = [
    "Selection",
    "prepare",
    "compare_stage",
    "evaluate_stage",
    "reference_stage",
    "run_case",
    "run_stages",
]

Progress = Callable[[str, int, int], None]


def reference_stage(
    prep: Prepared, results: str | Path, cache: bool = True, progress: Progress | None = None
) -> tuple[pd.DataFrame, dict]:
    from harness.reference.table import compute_reference
    from harness.reference.verify import ReferenceSettings

    s = prep.settings
    ref_settings = ReferenceSettings(s.precision, s.verify_digits, s.max_precision)
    if prep.is_experiment:
        from harness.experiments.stages import reference_experiment

        t0 = time.perf_counter()
        table, facts = reference_experiment(
            prep.case, prep.case.params(s.setting), s.dtypes, s.precision, s.verify_digits
        )
        meta = prep.provenance(
            "reference",
            reference=dataclasses.asdict(ref_settings),
            reference_counts={"computed": len(table) // max(1, len(s.dtypes)), "cached": 0},
            facts=facts,
            seconds=round(time.perf_counter() - t0, 3),
        )
        _write_reference(prep, results, table, meta)
        return table, meta
    cache_dir = Path(results) / ".cache" / "reference" if cache else None
    t0 = time.perf_counter()
    table, counts = compute_reference(
        prep.case,
        prep.points,
        ref_settings,
        cache_dir,
        (lambda i, n: progress("reference", i, n)) if progress else None,
    )
    seconds = time.perf_counter() - t0
    meta = prep.provenance(
        "reference",
        reference=dataclasses.asdict(ref_settings),
        reference_counts=counts,
        seconds=round(seconds, 3),
    )
    _write_reference(prep, results, table, meta)
    return table, meta


def _write_reference(prep: Prepared, results, table: pd.DataFrame, meta: dict) -> None:
    """The reference table, and beside it its timings (what differs from run to run)."""
    kept, facts = provenance.split_run_facts(meta)
    where = case_dir(results, prep.case)
    write_table(table, where / "reference.parquet", kept)
    counts = facts.get("reference_counts") or {}
    timings = pd.DataFrame([{"stage": "reference", "seconds": facts.get("seconds"), **counts}])
    write_table(timings, where / "reference.timings.parquet", facts)


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


def compare_stage(
    prep: Prepared,
    results: str | Path,
    reference: tuple[pd.DataFrame, dict] | None = None,
    evaluations: dict[str, tuple[pd.DataFrame, dict]] | None = None,
) -> pd.DataFrame:
    """Judge every back end's evaluations against the reference: ``errors.parquet`` (one
    table, a ``backend`` column), the case's findings and summary rows."""
    from harness.judge.compare import compare

    where = case_dir(results, prep.case)
    if reference is None:
        reference = read_stage_input(prep, results, "reference")
    else:
        check_input(prep, "reference", reference[1], where / "reference.parquet")
    evaluations = dict(evaluations or {})
    for backend in prep.backends:
        if backend not in evaluations:
            evaluations[backend] = read_evaluations(prep, results, backend)
    if not prep.backends:
        raise ValueError(f"{prep.case.id}: none of the study's back ends is installed here")
    s = prep.settings
    mine = prep.provenance(
        "compare",
        # The study's settings as this stage was given them (the index shows them; the
        # case's own narrowing is its ``selection``).
        study=prep.config.data,
        reference={
            "precision": s.precision,
            "verify_digits": s.verify_digits,
            "max_precision": s.max_precision,
        },
    )
    parts = []
    for backend in prep.backends:
        table, emeta = evaluations[backend]
        if table.empty:  # the back end offers none of the case's modes or methods
            continue
        if prep.is_experiment:
            from harness.experiments.stages import compare_experiment

            part = compare_experiment(prep.case, table, reference[0], prep.settings.tolerance)
        else:
            flush = (emeta.get("platform") or {}).get("flush")
            part = compare(prep.case, table, reference[0], prep.settings.tolerance, flush)
        parts.append(with_backend(part.drop(columns=["case"], errors="ignore"), backend))
    errors = pd.concat(parts, ignore_index=True)
    errors.insert(0, "case", prep.case.id)
    meta = {
        **mine,
        # The inputs' provenance as their files hold it (without the run's timings).
        "inputs": {
            "reference": provenance.split_run_facts(reference[1])[0],
            "evaluations": {
                b: provenance.split_run_facts(evaluations[b][1])[0] for b in prep.backends
            },
        },
        "frameworks": {b: evaluations[b][1].get("framework") for b in prep.backends},
        # The platform's subnormal flush as each back end probed it.
        "flush": {b: (evaluations[b][1].get("platform") or {}).get("flush") for b in prep.backends},
    }
    write_table(errors, where / "errors.parquet", meta)
    from harness.judge.collect import file_digest, write_case_summary
    from harness.judge.findings import find
    from harness.judge.summary import compact

    errors = compact(errors)  # the same values; faster to group (written above as they were)
    edges = [read_edges(prep, results, backend) for backend in prep.backends]
    edges = pd.concat(edges, ignore_index=True) if edges else None
    names = list(prep.case.input_names)
    memo: dict = {}  # each combination's runs, found once for the findings and the summary
    findings = find(errors, edges, names, prep.segments, prep.case, memo)
    from harness.causes.evidence import attach

    localised = [read_localised(prep, results, backend) for backend in prep.backends]
    localised = pd.concat(localised, ignore_index=True) if localised else None
    findings = attach(findings, errors, localised, None if prep.is_experiment else prep.case, names)
    from harness.causes.study import classify

    findings = classify(findings)  # each finding's kind and root cause (its id)
    digest = {"errors_sha256": file_digest(where / "errors.parquet")}
    write_table(findings, where / "findings.parquet", {**meta, **digest})
    write_case_summary(errors, where / "errors.parquet", names, meta, edges, memo)
    return errors


def run_case(
    case_path: str | Path,
    config: StudyConfig | None = None,
    selection: Selection | None = None,
    results: str | Path = "results",
    cache: bool = True,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """All three stages of one case in this process; returns the errors table."""
    return run_stages(
        prepare(case_path, config, selection or Selection()), results, cache, progress
    )


def run_stages(
    prep: Prepared,
    results: str | Path = "results",
    cache: bool = True,
    progress: Progress | None = None,
    bisect: bool = True,
) -> pd.DataFrame:
    """Reference, evaluation and comparison of a prepared case; returns the errors table."""
    reference = reference_stage(prep, results, cache, progress)
    evaluations = {
        b: evaluate_stage(prep, results, progress, reference, bisect, cache, b)
        for b in prep.backends
    }
    return compare_stage(prep, results, reference, evaluations)
