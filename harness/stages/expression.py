"""The reference and judge steps of an expression case (:mod:`harness.stages.kinds`): its
reference by Arb and mpmath at its points (cached), and its values judged against it
(its evaluation: :mod:`harness.stages.expression_evaluate`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from harness.stages.inputs import Progress
from harness.stages.prepared import Prepared

__all__ = ["judge", "reference"]


def reference(
    prep: Prepared, results, cache: bool, progress: Progress | None
) -> tuple[pd.DataFrame, dict]:
    """The certified reference at the case's points (:mod:`harness.reference.table`)."""
    from harness.reference.table import compute_reference
    from harness.reference.verify import ReferenceSettings

    cache_dir = Path(results) / ".cache" / "reference" if cache else None
    table, counts = compute_reference(
        prep.case,
        prep.points,
        ReferenceSettings.of(prep.settings),
        cache_dir,
        (lambda i, n: progress("reference", i, n)) if progress else None,
    )
    return table, {"reference_counts": counts}


def judge(prep: Prepared, table: pd.DataFrame, reference: pd.DataFrame, flush) -> pd.DataFrame:
    """One back end's values judged against the reference (:func:`harness.judge.compare.compare`)."""
    from harness.judge.compare import compare

    return compare(prep.case, table, reference, prep.settings.tolerance, flush)
