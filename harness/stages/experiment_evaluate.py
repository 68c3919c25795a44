"""The evaluate step of an experiment case (:mod:`harness.stages.kinds`): the
experiment's own evaluation in one back end (no bisection: its points are its
parameters')."""

from __future__ import annotations

import time

from harness.stages.inputs import Progress
from harness.stages.kinds import Evaluated
from harness.stages.pieces import Piece
from harness.stages.prepared import Prepared

__all__ = ["evaluate"]


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
    from harness.experiments.stages import evaluate_experiment
    from harness.stages.expression_evaluate import empty_edges, empty_localised

    t0 = time.perf_counter()
    s = prep.settings
    table, timing = evaluate_experiment(
        prep.case, prep.case.params(s.setting), piece.dtypes, modes, backend, engine.framework
    )
    table = table[table["method"].isin(s.methods)].reset_index(drop=True)
    stats = {"seconds": round(time.perf_counter() - t0, 3), "traces": 0, **timing}
    return Evaluated(table, stats, empty_edges(), empty_localised())
