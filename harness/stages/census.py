"""The census stage: the atlas of the census's results (its table, ``atlas.parquet`` and
``atlas.csv`` beside the cases' results, with provenance) and ``reports/census.html``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from harness import provenance
from harness.census.atlas import build_atlas, verdicts
from harness.report.census_page import census_page
from harness.results import atomic_write_text, write_csv, write_table

__all__ = ["write_atlas"]


def write_atlas(results: Path, cases: Path, reports: Path) -> pd.DataFrame:
    """Build, write and render the atlas; returns its table."""
    if not cases.is_dir():
        raise FileNotFoundError(f"{cases}: no census case files (run harness census-cases)")
    atlas = build_atlas(results, cases)
    meta = provenance.collect(
        stage="census",
        cases=sorted(p.stem for p in cases.glob("census_*.yaml")),
        compared=sorted(set(atlas["case"])),
    )
    results.mkdir(parents=True, exist_ok=True)
    write_table(atlas, results / "atlas.parquet", meta)
    write_csv(atlas, results / "atlas.csv", meta)
    reports.mkdir(parents=True, exist_ok=True)
    atomic_write_text(reports / "census.html", census_page(atlas, verdicts))
    return atlas
