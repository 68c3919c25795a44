"""The collect stage: every case's summary and findings, as its compare stage wrote them
(:mod:`harness.judge.case_tables`), merged into the study's tables, and the study's root
causes (:mod:`harness.causes.study`).

Memory. The study's findings are written a case at a time (a full census has more than
a million, each with its standalone script); the root causes are made from every
finding without its script (:data:`harness.causes.study.UNREAD`), which they never read.

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
from harness.results import (
    read_metadata,
    read_table,
    write_csv,
    write_csv_of,
    write_table,
    write_tables,
)

__all__ = ["MUST_AGREE", "ProvenanceMismatch", "collect", "collect_stage"]

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
    error_files: Sequence[str | Path], leave_out: Sequence[str] = ()
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """The summary and the findings of every case (their columns ``leave_out`` aside),
    and the shared provenance (raises :class:`ProvenanceMismatch`)."""
    metas = {str(p): read_metadata(p) for p in error_files}
    shared = _check_agreement(metas) if metas else {}
    parts, found = [], []
    cases = {}
    for path in error_files:
        meta = metas[str(path)]
        case = meta.get("case") or read_table(path)["case"].iloc[0]
        parts.append(case_summary(path))
        found.append(case_findings(path, leave_out))
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


def collect_stage(error_files: Sequence[str | Path], out: str | Path) -> str:
    """Write the study's tables from its cases' (``error_files``): the summary at ``out``
    (Parquet, and CSV beside it), the root causes and unsupported combinations beside it
    (:func:`harness.causes.study.write_root_causes`), then the findings
    (``findings.parquet``, and its CSV without the scripts), a case at a time. Returns
    what was written, as a line (raises :class:`ProvenanceMismatch`)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from harness.causes.study import UNREAD, write_root_causes

    out = Path(out)
    summary, findings, meta = collect(error_files, leave_out=UNREAD)
    # Each case's findings as its compare stage classified them; one schema for them all
    # (a case without findings has columns of no type). Checked before anything is written.
    beside = [Path(p).with_name("findings.parquet") for p in error_files]
    schemas = [pq.read_schema(p) for p in beside]
    for path, schema in zip(beside, schemas):
        if "root_cause" not in schema.names:
            raise ProvenanceMismatch(
                f"{path}: no root causes (an older compare stage wrote it); rerun the case's "
                "compare stage"
            )
    schema = pa.unify_schemas(schemas, promote_options="permissive")
    write_table(summary, out, meta)
    write_csv(summary.drop(columns=["stable_domain_json"]), out.with_suffix(".csv"), meta)
    classified, said = write_root_causes(findings, out.parent, meta)
    count = len(classified)
    del findings, classified
    found = out.with_name("findings.parquet")
    write_tables((case_findings(p) for p in error_files), found, meta, schema=schema)
    # The scripts stay in the Parquet file (and on the pages): one line per finding here.
    write_csv_of(found, found.with_suffix(".csv"), meta, leave_out=["snippet"])
    return (
        f"{len(error_files)} case(s): {len(summary)} summary rows -> {out}, "
        f"{out.with_suffix('.csv')}; {count} findings -> {found}, {found.with_suffix('.csv')}; "
        f"{said}"
    )
