"""The study's root causes from its findings: each finding classified, the root causes
and the unsupported combinations as tables (:mod:`harness.causes.roots`), with the names
and refusals each back end declares (:mod:`harness.backends.catalogue`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from harness.backends.catalogue import SPECS
from harness.causes.roots import classify_findings, root_causes, unsupported_table

__all__ = ["UNREAD", "classify", "refusals", "study_root_causes", "title", "write_root_causes"]

#: The findings' columns that the root causes and their reproducers never read: each
#: finding's standalone script (about half of a findings table's bytes), its probe
#: command, its text and its intervals' detail. A study's findings are read without them
#: (a full census has more than a million).
UNREAD = ("snippet", "probe", "text", "variants", "lo_span", "hi_span", "expectation")


def title(backend: str) -> str:
    """The back end's name as a reader knows it (``TensorFlow``)."""
    return SPECS[backend].title if backend in SPECS else backend


def refusals(backend: str) -> tuple[str, ...]:
    """The exceptions the back end refuses a transformation with
    (:attr:`harness.backends.spec.BackendSpec.refusals`)."""
    return SPECS[backend].refusals if backend in SPECS else ("NotImplementedError",)


def _compilers(backend: str) -> dict[str, str]:
    return dict(SPECS[backend].compilers) if backend in SPECS else {}


def classify(findings: pd.DataFrame) -> pd.DataFrame:
    """Findings with ``kind``, ``subject``, ``impact`` and ``root_cause`` (the compare
    stage's, per case: a finding's root cause is decided by its own evidence)."""
    return classify_findings(findings, refusals, _compilers)


def study_root_causes(findings: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``(findings with kind, subject, impact and root_cause; root causes; unsupported)``:
    the findings as classified (classified here where they are not yet), grouped."""
    classified = findings if "root_cause" in findings else classify(findings)
    return classified, root_causes(classified, title), unsupported_table(classified, title)


def write_root_causes(findings: pd.DataFrame, folder: Path, meta: dict) -> tuple[pd.DataFrame, str]:
    """Write ``root_causes`` and ``unsupported`` (Parquet and CSV) into ``folder``;
    returns the findings classified (their ``root_cause`` column) and what was written."""
    from harness.results import write_csv, write_table

    classified, roots, unsupported = study_root_causes(findings)
    for name, table in (("root_causes", roots), ("unsupported", unsupported)):
        write_table(table, Path(folder) / f"{name}.parquet", meta)
        write_csv(table, Path(folder) / f"{name}.csv", meta)
    unexpected = int((roots["expected"] != "expected").sum()) if not roots.empty else 0
    said = (
        f"{len(roots)} root causes ({unexpected} not expected) -> "
        f"{Path(folder) / 'root_causes.parquet'}; {len(unsupported)} unsupported "
        f"combinations -> {Path(folder) / 'unsupported.parquet'}"
    )
    return classified, said
