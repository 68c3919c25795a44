"""The reference stage: the certified reference of a case at its points (mpmath and Arb,
no framework) -> ``results/<case>/reference.parquet``, its timings beside it. An
experiment case computes its own (:mod:`harness.experiments.stages`)."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pandas as pd

from harness import provenance
from harness.results import write_table
from harness.stages.inputs import (
    Progress,
    case_dir,
)
from harness.stages.prepared import Prepared

__all__ = ["reference_stage"]


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
