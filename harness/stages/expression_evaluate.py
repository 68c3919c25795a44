"""The evaluate step of an expression case (:mod:`harness.stages.kinds`): its values in
one back end, the exact edges of each outcome bisected (judging as it goes) and the
failing rows' primitives localised."""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd

from harness.backends import crashes
from harness.backends.crashes import LOCALISE
from harness.stages.inputs import Progress, with_backend
from harness.stages.kinds import Evaluated
from harness.stages.pieces import Piece
from harness.stages.prepared import Prepared

__all__ = ["empty_edges", "empty_localised", "evaluate"]


def evaluate(
    prep: Prepared,
    engine,
    backend: str,
    piece: Piece,
    modes,
    flags: dict,
    progress: Progress | None,
    reference,
    bisect: bool,
    cache: bool,
    results,
) -> Evaluated:
    """The piece's values through the back end's ``evaluate_case``, bisecting the edges
    of each run of one outcome (it judges as it goes) and localising failing rows."""
    import dataclasses

    s = prep.settings
    edges = None
    if bisect:
        from harness.edges.finder import EdgeFinder
        from harness.reference.table import ReferenceStore
        from harness.reference.verify import ReferenceSettings

        cache_dir = Path(results) / ".cache" / "reference" if cache else None
        # Each piece keeps the values its bisection verifies in a shard of its own.
        store = ReferenceStore(
            prep.case,
            ReferenceSettings.of(prep.settings),
            cache_dir,
            shard=f"{backend}.{piece.name}",
        )
        from harness.backends.catalogue import get

        edges = EdgeFinder(
            prep.case,
            prep.points,
            reference[0],
            store,
            s.tolerance,
            flags,
            prep.segments,
            wide=get(backend).eager_wide,
        )
        if hasattr(progress, "verdicts"):
            edges.judged = lambda method, dtype, rows: progress.verdicts(
                backend, method, dtype, rows
            )
    label = f"evaluate {backend}" + ("" if piece.name == "all" else f" {piece.name}")
    table, stats = engine.evaluate_case(
        prep.case,
        prep.points,
        piece.dtypes,
        piece.methods,
        modes,
        (lambda i, n: progress(label, i, n)) if progress else None,
        s.max_order,
        edges,
        s.batch,
    )
    stats = {**dataclasses.asdict(stats), "bisection": edges.stats if edges else None}
    if edges is not None:
        edges.store.save()
    found = with_backend(edges.table() if edges else empty_edges(), backend)
    localised = None
    # A localisation that killed an earlier process is skipped (harness.backends.crashes).
    if bisect and s.localise and not crashes.crashed(prep.case.id, backend, piece.name, *LOCALISE):
        crashes.begin(prep.case.id, backend, piece.name, *LOCALISE)
        localised = _localise(prep, engine, table, reference, flags, stats)
        crashes.begin(None)
    if localised is None:
        localised = empty_localised()
    return Evaluated(table, stats, found, localised)


def _localise(prep: Prepared, engine, table, reference, flags, stats: dict) -> pd.DataFrame:
    """Each failing row's primitives judged at the arguments they receive
    (:mod:`harness.causes.localise`); seconds in the piece's statistics."""
    from harness.causes.localise import FAILING, localise
    from harness.judge.compare import join_reference, judge_frame

    t0 = time.perf_counter()
    rows = table.drop(columns=["backend", "seconds"], errors="ignore")
    rows = rows[rows["status"] == "value"]
    if rows.empty:
        return empty_localised()
    judged = judge_frame(
        join_reference(prep.case, rows, reference[0], flags), prep.settings.tolerance
    )
    failing = judged[judged["outcome"].isin(FAILING)]
    sizes = {d: len(f) for d, f in prep.points.items()}
    timed = _Timed(engine)
    out = localise(timed, prep.case, failing, prep.settings, flags, sizes, judged)
    stats["localise_seconds"] = round(time.perf_counter() - t0, 3)
    # Of them, inside the framework's calls (benchmarks/study_floor.py counts them in the
    # frameworks' floor, as the sweep's and the bisection's).
    stats["localise_call_seconds"] = round(timed.seconds, 3)
    return out


class _Timed:
    """A back end whose ``evaluate_case`` sums the seconds of the framework's calls it
    makes (each table's ``seconds``: one value per method, mode and dtype called)."""

    def __init__(self, engine):
        self.engine, self.seconds = engine, 0.0

    def __getattr__(self, name):
        return getattr(self.engine, name)

    def evaluate_case(self, *args, **kwargs):
        table, stats = self.engine.evaluate_case(*args, **kwargs)
        if "seconds" in table and len(table):
            calls = table.groupby(["method", "mode", "dtype"], sort=False)["seconds"].first()
            self.seconds += float(calls.sum())
        return table, stats


def empty_localised() -> pd.DataFrame:
    from harness.causes.localise import LOCALISED_COLUMNS

    return pd.DataFrame(columns=LOCALISED_COLUMNS)


def empty_edges() -> pd.DataFrame:
    from harness.edges.bisection import EDGE_COLUMNS

    return pd.DataFrame(columns=list(EDGE_COLUMNS))
