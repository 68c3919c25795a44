"""The comparison stage: the reference and every back end's evaluations ->
``results/<case>/errors.parquet`` (one row per value, with a ``backend`` column), the
case's findings and summary. It refuses inputs whose case or settings differ."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from harness import provenance
from harness.results import write_table
from harness.stages.inputs import (
    case_dir,
    check_input,
    read_edges,
    read_evaluations,
    read_localised,
    read_stage_input,
    with_backend,
)
from harness.stages.kinds import kind_of
from harness.stages.prepared import Prepared

__all__ = ["compare_stage"]


def compare_stage(
    prep: Prepared,
    results: str | Path,
    reference: tuple[pd.DataFrame, dict] | None = None,
    evaluations: dict[str, tuple[pd.DataFrame, dict]] | None = None,
) -> pd.DataFrame:
    """Judge every back end's evaluations against the reference: ``errors.parquet`` (one
    table, a ``backend`` column), the case's findings and summary rows."""
    judge = kind_of(prep.case).step("judge")
    where = case_dir(results, prep.case)
    if reference is None:
        reference = read_stage_input(prep, results, "reference")
    else:
        check_input(prep, "reference", reference[1], where / "reference.parquet")
    evaluations = dict(evaluations or {})
    for backend in prep.backends:
        if backend not in evaluations:
            evaluations[backend] = read_evaluations(prep, results, backend)
    if not prep.backends:
        raise ValueError(f"{prep.case.id}: none of the study's back ends is installed here")
    s = prep.settings
    mine = prep.provenance(
        "compare",
        # The study's settings as this stage was given them (the index shows them; the
        # case's own narrowing is its ``selection``).
        study=prep.config.data,
        reference={
            "precision": s.precision,
            "verify_digits": s.verify_digits,
            "max_precision": s.max_precision,
        },
    )
    parts = []
    for backend in prep.backends:
        table, emeta = evaluations[backend]
        if table.empty:  # the back end offers none of the case's modes or methods
            continue
        flush = (emeta.get("platform") or {}).get("flush")
        part = judge(prep, table, reference[0], flush)
        parts.append(with_backend(part.drop(columns=["case"], errors="ignore"), backend))
    errors = pd.concat(parts, ignore_index=True)
    errors.insert(0, "case", prep.case.id)
    meta = {
        **mine,
        # The inputs' provenance as their files hold it (without the run's timings).
        "inputs": {
            "reference": provenance.split_run_facts(reference[1])[0],
            "evaluations": {
                b: provenance.split_run_facts(evaluations[b][1])[0] for b in prep.backends
            },
        },
        "frameworks": {b: evaluations[b][1].get("framework") for b in prep.backends},
        # The platform's subnormal flush as each back end probed it.
        "flush": {b: (evaluations[b][1].get("platform") or {}).get("flush") for b in prep.backends},
    }
    write_table(errors, where / "errors.parquet", meta)
    from harness.judge.case_tables import file_digest, write_case_summary
    from harness.judge.findings import find
    from harness.judge.summary import compact

    errors = compact(errors)  # the same values; faster to group (written above as they were)
    edges = [read_edges(prep, results, backend) for backend in prep.backends]
    edges = pd.concat(edges, ignore_index=True) if edges else None
    names = list(prep.case.input_names)
    memo: dict = {}  # each combination's runs, found once for the findings and the summary
    findings = find(errors, edges, names, prep.segments, prep.case, memo)
    from harness.causes.evidence import attach

    localised = [read_localised(prep, results, backend) for backend in prep.backends]
    localised = pd.concat(localised, ignore_index=True) if localised else None
    case = prep.case if prep.case.kind == "expression" else None  # rules to check exactly
    findings = attach(findings, errors, localised, case, names)
    from harness.causes.study import classify

    findings = classify(findings)  # each finding's kind and root cause (its id)
    digest = {"errors_sha256": file_digest(where / "errors.parquet")}
    write_table(findings, where / "findings.parquet", {**meta, **digest})
    write_case_summary(errors, where / "errors.parquet", names, meta, edges, memo)
    return errors
