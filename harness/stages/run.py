"""The stages of one case, each reading and writing ``results/<case>/``:

``reference`` (:mod:`.reference`, no framework) -> ``reference.parquet``;
``evaluate`` (:mod:`.evaluate`, one back end, one job per piece) ->
``<backend>/<piece>/evaluations.parquet`` and ``edges.parquet``;
``compare`` (:mod:`.compare`) -> ``errors.parquet``. :func:`run_case` runs them all in
one process (``harness run``). Every table carries provenance (see
:mod:`harness.provenance`); compare refuses inputs whose case or settings differ.
Nothing is written for a case that fails validation: the case is loaded (and raises)
before any stage touches the disk.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from harness.config import StudyConfig
from harness.stages.compare import compare_stage
from harness.stages.evaluate import evaluate_stage
from harness.stages.inputs import (
    Progress,
)
from harness.stages.prepared import Prepared, Selection, prepare
from harness.stages.reference import reference_stage

__all__ = ["run_case", "run_stages"]


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
