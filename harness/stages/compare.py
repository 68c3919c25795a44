"""The comparison stage: the reference and every back end's evaluations ->
``results/<case>/errors.parquet`` (one row per value, with a ``backend`` column), the
case's findings and summary. It refuses inputs whose case or settings differ.

It judges a case one dtype at a time, every back end's rows of that dtype together (a
finding compares the back ends at the same points), so that it holds one dtype's rows,
not the case's: a full census's grid case is 13.6 million rows. It writes each dtype's
judged rows as it goes, then reads them back a dtype at a time to find the findings and
summary rows; both are ranked and ordered as one whole table's would be."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from harness import provenance
from harness.results import read_table, write_table, write_tables
from harness.stages.inputs import (
    case_dir,
    check_input,
    evaluation_provenance,
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
    keep: bool = True,
) -> pd.DataFrame | None:
    """Judge every back end's evaluations against the reference: ``errors.parquet`` (one
    table, a ``backend`` column), the case's findings and summary rows. Returns the
    errors table (``keep=False``: ``None``; the table is on disk only)."""
    from harness.judge.axes import Axes

    where = case_dir(results, prep.case)
    if reference is None:
        reference = read_stage_input(prep, results, "reference")
    else:
        check_input(prep, "reference", reference[1], where / "reference.parquet")
    if not prep.backends:
        raise ValueError(f"{prep.case.id}: none of the study's back ends is installed here")
    given = dict(evaluations or {})
    metas = {
        b: given[b][1] if b in given else evaluation_provenance(prep, results, b)
        for b in prep.backends
    }
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
    meta = {
        **mine,
        # The inputs' provenance as their files hold it (without the run's timings).
        "inputs": {
            "reference": provenance.split_run_facts(reference[1])[0],
            "evaluations": {b: provenance.split_run_facts(metas[b])[0] for b in prep.backends},
        },
        "frameworks": {b: metas[b].get("framework") for b in prep.backends},
        # The platform's subnormal flush as each back end probed it.
        "flush": {b: (metas[b].get("platform") or {}).get("flush") for b in prep.backends},
    }
    path = where / "errors.parquet"
    axes = Axes(prep.case.input_names)
    judged = _judged(prep, results, reference[0], given, metas, axes)
    write_tables(judged, path, meta)
    _state(prep, results, path, meta, axes)
    return read_table(path) if keep else None


def _dtypes(prep: Prepared) -> list[str]:
    """The parts the comparison judges one at a time: the case's dtypes."""
    return list(prep.settings.dtypes)


def _judged(prep, results, reference: pd.DataFrame, given: dict, metas: dict, axes):
    """Each dtype's rows of every back end, judged (as they are made: one at a time)."""
    judge = kind_of(prep.case).step("judge")
    for dtype in _dtypes(prep):
        ref = reference[reference["dtype"] == dtype]
        parts = []
        for backend in prep.backends:
            if backend in given:
                table = given[backend][0]
                table = table[table["dtype"] == dtype]
            else:
                table = read_evaluations(prep, results, backend, dtype)[0]
            if table.empty:  # the back end offers none of the case's modes or methods
                continue
            flush = (metas[backend].get("platform") or {}).get("flush")
            part = judge(prep, table, ref, flush)
            parts.append(with_backend(part.drop(columns=["case"], errors="ignore"), backend))
        if parts:
            errors = pd.concat(parts, ignore_index=True)
            errors.insert(0, "case", prep.case.id)
            axes.add(errors)
            yield errors


def _state(prep: Prepared, results, path: Path, meta: dict, axes) -> None:
    """The case's findings and summary from its errors table at ``path``, read a dtype at
    a time (``axes``: its inputs as the whole table has them)."""
    from harness.causes.evidence import attach
    from harness.causes.study import classify
    from harness.judge.case_tables import file_digest, summarise_case, write_summary
    from harness.judge.findings import found
    from harness.judge.findings_text import numbered
    from harness.judge.summary import KEYS, compact

    edges = [read_edges(prep, results, backend) for backend in prep.backends]
    edges = pd.concat(edges, ignore_index=True) if edges else None
    localised = [read_localised(prep, results, backend) for backend in prep.backends]
    localised = pd.concat(localised, ignore_index=True) if localised else None
    names = list(prep.case.input_names)
    case = prep.case if prep.case.kind == "expression" else None  # rules to check exactly
    segments = meta.get("segments")
    parts, summaries = [], []
    for dtype in _dtypes(prep):
        errors = read_table(path, filters=[("dtype", "==", dtype)])
        if errors.empty:
            continue
        errors = compact(errors)  # the same values; faster to group
        memo: dict = {}  # each combination's runs, found once for the findings and summary
        part = found(errors, edges, names, prep.segments, prep.case, memo, axes)
        parts.append(attach(part, errors, localised, case, names))
        summaries.append(summarise_case(errors, names, True, segments, edges, memo, axes))
    nonempty = [p for p in parts if not p.empty] or parts[:1]
    findings = numbered(pd.concat(nonempty, ignore_index=True))
    findings = classify(findings)  # each finding's kind and root cause (its id)
    digest = {"errors_sha256": file_digest(path)}
    write_table(findings, path.with_name("findings.parquet"), {**meta, **digest})
    summary = pd.concat(summaries, ignore_index=True)
    summary = summary.sort_values(KEYS, kind="stable").reset_index(drop=True)
    write_summary(summary, path, meta)
