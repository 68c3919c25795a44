"""The reference stage: the certified reference of a case at its points (mpmath and Arb,
no framework) -> ``results/<case>/reference.parquet``, its timings beside it; each kind
of case computes it its own way (:mod:`harness.stages.kinds`)."""

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
from harness.stages.kinds import kind_of
from harness.stages.prepared import Prepared

__all__ = ["reference_stage"]


def reference_stage(
    prep: Prepared, results: str | Path, cache: bool = True, progress: Progress | None = None
) -> tuple[pd.DataFrame, dict]:
    """The case's reference, by its kind's step (:mod:`harness.stages.kinds`), written with
    its provenance and timings."""
    from harness.reference.verify import ReferenceSettings

    ref_settings = ReferenceSettings.of(prep.settings)
    t0 = time.perf_counter()
    table, extra = kind_of(prep.case).step("reference")(prep, results, cache, progress)
    meta = prep.provenance(
        "reference",
        reference=dataclasses.asdict(ref_settings),
        **extra,
        seconds=round(time.perf_counter() - t0, 3),
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
