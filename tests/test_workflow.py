"""The Snakemake study on a tiny configuration: its outputs, what a rerun reruns after
an edit, lint and Snakemake's own report. Real Snakemake, real frameworks, in a copy of
the repo."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from harness.results import read_metadata, read_table

from .snakemake_runs import BIN, copy_project, edited, planned_jobs, snakemake

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    where = copy_project(tmp_path_factory.mktemp("study"))
    proc = snakemake(where, "--cores", "2")
    return where, proc


def test_the_study_produces_every_table(study):
    where, proc = study
    for case in ("ratio", "softplus"):
        for table in ("reference", "errors", "findings"):
            assert (where / "results" / case / f"{table}.parquet").exists()
        for backend in ("tensorflow", "jax", "torch"):
            for table in ("evaluations", "edges"):
                assert (where / "results" / case / backend / "all" / f"{table}.parquet").exists()
        errors = read_table(where / "results" / case / "errors.parquet")
        assert set(errors.backend) == {"tensorflow", "jax", "torch"}
    summary = read_table(where / "results" / "summary.parquet")
    assert set(summary.case) == {"ratio", "softplus"}
    assert {"stable_domain", "median_bits", "max_bits", "worst", "ok", "nan"} <= set(
        summary.columns
    )
    for page in ("index", "ratio", "softplus"):
        assert (where / "reports" / f"{page}.html").stat().st_size > 1000
    # Plain CSVs (pandas reads them as they are), provenance in a JSON sidecar.
    csv = pd.read_csv(where / "results" / "summary.csv")
    assert len(csv) == len(summary)
    findings = read_table(where / "results" / "findings.parquet")
    assert set(findings.case) == {"ratio", "softplus"} and len(findings) > 0
    assert len(pd.read_csv(where / "results" / "findings.csv")) == len(findings)
    sidecar = json.loads((where / "results" / "summary.provenance.json").read_text())
    assert set(sidecar["cases"]) == {"ratio", "softplus"}
    meta = read_metadata(where / "results" / "summary.parquet")
    assert set(meta["cases"]) == {"ratio", "softplus"}
    # The tiny config reached every stage.
    ev = read_table(where / "results" / "softplus" / "tensorflow" / "all" / "evaluations.parquet")
    assert set(ev.dtype) == {"float32", "float64"} and set(ev.method) == {
        "reverse",
        "finite_difference",
    }
    # Each framework starts once per case: only evaluate_case jobs run one, one job per
    # case and back end.
    log = proc.stderr + proc.stdout
    assert log.count("rule evaluate_case:") == 2 * 3
    assert (
        "tensorflow"
        not in (where / "logs" / "softplus" / "compute_reference.log").read_text().lower()
    )


def test_every_statement_of_the_study_holds_against_its_evidence(study):
    """Issue 56's checker over the study's root causes in three frameworks (where the
    ``framework`` rule has other frameworks to read), as a user runs it: ``harness
    check-statements`` exits 0 and says it read them all, and the audit finds nothing."""
    from harness.causes.audit import audit

    where, _ = study
    roots = read_table(where / "results" / "root_causes.parquet")
    findings = read_table(where / "results" / "findings.parquet")
    assert len(roots) > 0 and set(findings.backend) == {"tensorflow", "jax", "torch"}
    assert audit(roots, findings) == []
    proc = subprocess.run(
        [str(BIN / "harness"), "check-statements", "--results", "results"],
        cwd=where,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{len(roots)} root causes read; 0 problems" in proc.stdout


def test_a_noop_rerun_runs_nothing(study):
    """Nothing runs, and reading the workflow imports no framework (what a bound of 15 s
    on this dry run stood for; it failed at 18 s with a census running on both cores)."""
    where, _ = study
    out = snakemake(where, "-n").stdout
    assert "Nothing to be done" in out
    code = (
        "import atexit, sys; atexit.register(lambda: print('FRAMEWORKS=' + ','.join("
        "m for m in ('tensorflow', 'jax', 'torch') if m in sys.modules))); "
        "from snakemake.cli import main; main()"
    )
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"}
    proc = subprocess.run(
        [sys.executable, "-c", code, "--configfile", "tiny.yaml", "-n"],
        cwd=where,
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
    )
    assert "Nothing to be done" in proc.stdout + proc.stderr
    assert "FRAMEWORKS=\n" in proc.stdout + "\n", proc.stdout[-500:]


def test_editing_a_case_reruns_only_that_case(study):
    where, _ = study
    path = where / "cases" / "ratio.yaml"
    with edited(path, lambda t: t.replace("notes: >-", "notes: >-\n  Edited.", 1)):
        assert planned_jobs(where) == {
            "compute_reference": 1,
            "evaluate_case": 3,  # one per back end
            "compare_case": 1,
            "collect_results": 1,
            "reproduce_root_causes": 3,  # the study's root causes, one job per back end
            "render_case_page": 1,
            "render_report": 1,
            "render_frameworks": 1,
            "all": 1,
        }
        assert "case=ratio" in snakemake(where, "-n").stdout
        assert "case=softplus" not in snakemake(where, "-n").stdout


def test_editing_tensorflow_code_reruns_evaluations_not_references(study):
    where, _ = study

    def append(text: str) -> str:
        return text + "\n# edited\n"

    with edited(where / "harness" / "backends" / "tensorflow" / "derivatives.py", append):
        plan = planned_jobs(where)
        # TensorFlow's evaluations of both cases: not JAX's or PyTorch's.
        assert plan["evaluate_case"] == 2 and plan["compare_case"] == 2
        assert "compute_reference" not in plan
    with edited(where / "harness" / "backends" / "jax" / "derivatives.py", append):
        out = snakemake(where, "-n").stdout
        evaluations = [b for b in out.split("\nrule ") if b.startswith("evaluate_case:")]
        assert planned_jobs(where)["evaluate_case"] == 2 and "backend=jax" in out
        assert len(evaluations) == 2
        assert not any("backend=tensorflow" in b for b in evaluations)
    with edited(where / "harness" / "reference" / "jets.py", append):
        assert planned_jobs(where)["compute_reference"] == 2
    # The report's HTML (a colour, a figure of an experiment's page) reruns only pages.
    for path in ("report/html.py", "experiments/matrix_partials_page.py"):
        with edited(where / "harness" / path, append):
            plan = planned_jobs(where)
            assert plan and set(plan) <= {
                "render_case_page",
                "render_report",
                "render_frameworks",
                "all",
            }, (path, plan)
    assert "Nothing to be done" in snakemake(where, "-n").stdout


def test_changing_a_tolerance_reruns_evaluations_and_comparisons_not_references(study):
    # The evaluation judges as it goes (to bisect the edges of each outcome), so a
    # tolerance is one of its settings; the mpmath references never rerun.
    where, _ = study
    (where / "tol.yaml").write_text(
        "tolerances:\n  float64: [4, 16, 64, 256, 1024]\n  float32: [8, 16, 64, 256, 1024]\n"
        "  float16: [1, 2, 4, 8, 16]\n  bfloat16: [1, 2, 4, 8, 16]\n"
    )
    assert planned_jobs(where, "--configfile", "tiny.yaml", "tol.yaml") == {
        "evaluate_case": 2 * 3,
        "compare_case": 2,
        "collect_results": 1,
        "reproduce_root_causes": 3,
        "render_case_page": 2,
        "render_report": 1,
        "render_frameworks": 1,
        "all": 1,
    }


def test_invalid_study_settings_fail_before_anything_runs(study):
    where, _ = study
    proc = snakemake(where, "-n", "--config", "precision=5", check=False)
    assert proc.returncode != 0
    assert "study settings: precision" in proc.stdout + proc.stderr


def test_lint_is_clean(study):
    where, _ = study
    out = snakemake(where, "--lint")
    assert "Congratulations" in out.stdout + out.stderr


def test_snakemakes_own_report_flags_our_pages(study):
    where, _ = study
    snakemake(where, "--report", "snakemake-report.html")
    text = (where / "snakemake-report.html").read_text(errors="replace")
    assert "index.html" in text and "summary.csv" in text
