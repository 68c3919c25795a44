"""The census stage: the atlas of the census's results (its table, ``atlas.parquet`` and
``atlas.csv`` beside the cases' results, with provenance), its root causes with their
reproducers (``causes.parquet``/``.csv``), its clean bills (``clean_bills.parquet``/
``.csv``: :mod:`harness.census.bills`) and ``reports/census.html``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from harness import provenance
from harness.census.atlas import build_atlas, verdicts
from harness.census.bills import clean_bills
from harness.census.causes import census_causes
from harness.report.census_page import census_page
from harness.results import atomic_write_text, write_csv, write_table

__all__ = ["write_atlas"]


def write_atlas(
    results: Path, cases: Path, reports: Path, study: Path | None = None
) -> pd.DataFrame:
    """Build, write and render the atlas; returns its table. The census's root causes
    (where ``harness collect`` and ``harness repro`` have run on ``results``) go beside it
    as ``causes.parquet``/``.csv`` with their reproducers' verdicts and the cases of the
    study's results (``study``) that share each one."""
    if not cases.is_dir():
        raise FileNotFoundError(f"{cases}: no census case files (run harness census-cases)")
    atlas = build_atlas(results, cases)
    causes = census_causes(results, study)
    bills = clean_bills(atlas)
    meta = provenance.collect(
        stage="census",
        cases=sorted(p.stem for p in cases.glob("census_*.yaml")),
        compared=sorted(set(atlas["case"])),
        study=str(study) if study is not None else None,
    )
    results.mkdir(parents=True, exist_ok=True)
    write_table(atlas, results / "atlas.parquet", meta)
    write_csv(atlas, results / "atlas.csv", meta)
    write_table(causes, results / "causes.parquet", meta)
    write_csv(causes, results / "causes.csv", meta)
    write_table(bills, results / "clean_bills.parquet", meta)
    write_csv(bills, results / "clean_bills.csv", meta)
    reports.mkdir(parents=True, exist_ok=True)
    atomic_write_text(reports / "census.html", census_page(atlas, verdicts, causes, bills))
    return atlas
