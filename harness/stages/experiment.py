"""The reference and judge steps of an experiment case (:mod:`harness.stages.kinds`),
through the experiment's own code (:mod:`harness.experiments.stages`): its reference
checked at two precisions, and its values judged (its evaluation:
:mod:`harness.stages.experiment_evaluate`)."""

from __future__ import annotations

import pandas as pd

from harness.stages.inputs import Progress
from harness.stages.prepared import Prepared

__all__ = ["judge", "reference"]


def reference(
    prep: Prepared, results, cache: bool, progress: Progress | None
) -> tuple[pd.DataFrame, dict]:
    from harness.experiments.stages import reference_experiment

    s = prep.settings
    table, facts = reference_experiment(
        prep.case, prep.case.params(s.setting), s.dtypes, s.precision, s.verify_digits
    )
    counts = {"computed": len(table) // max(1, len(s.dtypes)), "cached": 0}
    return table, {"reference_counts": counts, "facts": facts}


def judge(prep: Prepared, table: pd.DataFrame, reference: pd.DataFrame, flush) -> pd.DataFrame:
    from harness.experiments.stages import compare_experiment

    return compare_experiment(prep.case, table, reference, prep.settings.tolerance)
