"""The page step of each kind of case (:mod:`harness.stages.kinds`): only the report
stage imports it."""

from __future__ import annotations

import pandas as pd

from harness.experiments.page import experiment_page as _experiment_page
from harness.report.case_page import case_notes, case_page
from harness.report.findings_list import stale_note

__all__ = ["experiment_page", "expression_page"]


def expression_page(case_id: str, case, errors: pd.DataFrame, summary, findings, meta: dict) -> str:
    notes = case_notes(case_id, None, meta, summary)
    stale = stale_note(case_id, meta.get("case_hash"), case.content_hash if case else None)
    return case_page(case_id, errors, summary, case, findings, notes, stale)


def experiment_page(case_id: str, case, errors: pd.DataFrame, summary, findings, meta: dict) -> str:
    notes = case_notes(case_id, case, meta, summary)
    reference = (meta.get("inputs") or {}).get("reference") or {}
    errors.attrs["parameters"] = (meta.get("selection") or {}).get("parameters")
    return _experiment_page(case, errors, summary, reference.get("facts"), findings, notes)
