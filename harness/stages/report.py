"""The report stage: ``reports/index.html``, ``reports/frameworks.html`` and one page per
case, from the result tables.

An expression case's page is :func:`harness.report.case_page.case_page`, an experiment's
:func:`harness.experiments.page.experiment_page`; both read only the result tables.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from harness.report.findings_list import load_case_quietly
from harness.report.frameworks_page import render_frameworks
from harness.report.index import render_index
from harness.results import atomic_write_text, read_metadata, read_table
from harness.stages.kinds import KINDS, kind_of

__all__ = ["STUDY_PAGES", "render_case", "render_reports", "render_study_pages"]


def render_case(
    case_id: str,
    results: str | Path = "results",
    reports: str | Path = "reports",
    cases: str | Path = "cases",
    summary: pd.DataFrame | None = None,
) -> Path:
    """Write ``reports/<case_id>.html``; returns its path. Without the case's ``summary``
    rows it reads the one the compare stage wrote beside the errors table (the report
    judges nothing), so each page can be its own job, in parallel with the other cases."""
    from harness.judge.case_tables import case_findings, case_summary

    errors_path = Path(results) / case_id / "errors.parquet"
    errors = read_table(errors_path)
    meta = read_metadata(errors_path)
    case = load_case_quietly(cases, case_id)
    if summary is None:
        summary = case_summary(errors_path)
    findings = case_findings(errors_path)
    out = Path(reports) / f"{case_id}.html"
    # A case file gone or broken since its run: its page from the tables alone.
    kind = kind_of(case) if case is not None else KINDS["expression"]
    text = kind.step("page")(case_id, case, errors, summary, findings, meta)
    atomic_write_text(out, text)
    return out


def render_reports(
    results: str | Path = "results", reports: str | Path = "reports", cases: str | Path = "cases"
) -> list[Path]:
    """Write ``reports/index.html``, ``reports/frameworks.html`` and
    ``reports/<case>.html`` for every case in ``results/summary.parquet``; returns the
    paths."""
    summary = read_table(Path(results) / "summary.parquet")
    pages = [
        render_case(c, results, reports, cases, summary[summary.case == c])
        for c in sorted(summary.case.unique())
    ]
    return [*render_study_pages(results, reports, cases), *pages]


#: The study's own pages, by name: ``reports/<name>.html``.
STUDY_PAGES = {"index": render_index, "frameworks": render_frameworks}


def render_study_pages(
    results: str | Path = "results",
    reports: str | Path = "reports",
    cases: str | Path = "cases",
    pages: tuple[str, ...] = tuple(STUDY_PAGES),
) -> list[Path]:
    """Write the study's own pages ``pages`` (default both: ``reports/index.html`` and
    ``reports/frameworks.html``, the frameworks side by side); returns their paths. The
    study renders them as two jobs: the frameworks page reads no reproducer, so it runs
    beside the reproducers, the index after them."""
    return [STUDY_PAGES[name](results, reports, cases) for name in pages]
