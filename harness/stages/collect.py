"""The collect stage: every case's summary and findings, as its compare stage wrote them
(:mod:`harness.judge.case_tables`), merged into the study's tables.

Provenance. Tables made by different versions of the harness's packages, Python or
platform, or with a different git commit, cannot be merged: collect refuses with a
message naming the files and the key that differs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from harness import provenance
from harness.judge.case_tables import case_findings, case_summary
from harness.results import read_metadata, read_table

__all__ = ["MUST_AGREE", "ProvenanceMismatch", "collect"]

#: Provenance keys that must agree across every merged table.
MUST_AGREE = ("packages", "python", "platform", "git")


class ProvenanceMismatch(ValueError):
    """Per-case tables that cannot be merged; the message says which and why."""


def _check_agreement(metas: dict[str, dict]) -> dict:
    first_path, first = next(iter(metas.items()))
    for path, meta in metas.items():
        for key in MUST_AGREE:
            a, b = (
                json.dumps(first.get(key), sort_keys=True),
                json.dumps(meta.get(key), sort_keys=True),
            )
            if a != b:
                raise ProvenanceMismatch(
                    f"cannot merge {path} with {first_path}: their provenance differs in "
                    f"{key!r} ({meta.get(key)!r} vs {first.get(key)!r}); rerun the older "
                    f"case so every table comes from the same software"
                )
    return {k: first.get(k) for k in MUST_AGREE}


def collect(
    error_files: Sequence[str | Path],
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """The summary and the findings of every case, and the shared provenance (raises
    :class:`ProvenanceMismatch`)."""
    metas = {str(p): read_metadata(p) for p in error_files}
    shared = _check_agreement(metas) if metas else {}
    parts, found = [], []
    cases = {}
    for path in error_files:
        meta = metas[str(path)]
        case = meta.get("case") or read_table(path)["case"].iloc[0]
        parts.append(case_summary(path))
        found.append(case_findings(path))
        cases[case] = {
            "case_hash": meta.get("case_hash"),
            "config_hash": meta.get("config_hash"),
            "file": str(path),
            "flush": meta.get("flush"),
        }
    summary = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    findings = pd.concat(found, ignore_index=True) if found else pd.DataFrame()
    meta = provenance.collect(
        stage="collect", created=provenance.now(), cases=cases, merged_from=shared
    )
    return summary, findings, meta
