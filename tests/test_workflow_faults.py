"""The Snakemake study when things go wrong: a broken case fails its own jobs only, a
run killed in the middle of the full setting completes on rerun without stale files (and
the full setting's pieces). Real Snakemake, in a copy of the repo."""

from __future__ import annotations

import base64
import os
import signal
import subprocess
import time

import pytest

from harness.results import read_table

from .snakemake_runs import BIN, copy_project, planned_jobs, snakemake

pytestmark = pytest.mark.slow


def test_a_broken_case_fails_its_own_jobs_and_the_rest_completes(tmp_path):
    where = copy_project(tmp_path)
    bad = (
        (where / "cases" / "softplus.yaml")
        .read_text()
        .replace("function: log(1 + exp(x))", "function: erfcx(x)")
    )
    (where / "cases" / "broken.yaml").write_text(bad)
    (where / "cases" / "softplus.yaml").unlink()
    # In PyTorch alone (the framework that starts fastest): ratio's jobs run and complete
    # beside the broken case's failing ones.
    (where / "torch.yaml").write_text("backends: [torch]\n")
    proc = snakemake(
        where,
        "--configfile",
        "tiny.yaml",
        "torch.yaml",
        "--cores",
        "2",
        "--keep-going",
        check=False,
    )
    assert proc.returncode != 0
    log = (where / "logs" / "broken" / "compute_reference.log").read_text()
    assert "cases/broken.yaml:" in log and "function: unknown function 'erfcx'" in log
    assert (where / "results" / "ratio" / "errors.parquet").exists()
    summary = read_table(where / "results" / "summary.parquet")
    assert set(summary.case) == {"ratio"}
    assert not (where / "results" / "broken").exists()
    # The report is still rendered, and lists the broken case with its problem.
    index = (where / "reports" / "index.html").read_text()
    assert "broken.yaml:" in index and "unknown function" in index


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    """The full setting (one PyTorch job per case, dtype and method: the framework that
    starts fastest, as every piece is a process of its own), killed once one piece is
    done, then run again to the end: the tree, the jobs a dry run planned before the first
    run, and those it planned after the kill."""
    where = copy_project(tmp_path_factory.mktemp("full"))
    (where / "full.yaml").write_text("setting: full\nbackends: [torch]\n")
    before = planned_jobs(where, "--configfile", "tiny.yaml", "full.yaml")
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "TF_CPP_MIN_LOG_LEVEL": "2"}
    proc = subprocess.Popen(
        [str(BIN / "snakemake"), "--configfile", "tiny.yaml", "full.yaml", "--cores", "2"],
        cwd=where,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.time() + 180
    # Kill the whole run once Snakemake has recorded one piece of an evaluation as done,
    # the next in flight. Done is Snakemake's own record: every output of the job has its
    # metadata and none is still marked incomplete (both files named by the output's path
    # in URL-safe base64). Snakemake writes the outputs' metadata one by one and then
    # removes the incomplete marks: a kill between the two leaves the piece incomplete,
    # rerun (all 8 pieces planned again when the test watched the first output's
    # metadata alone); a fixed wait after the piece's file appeared missed the record on
    # a loaded machine.
    state = where / ".snakemake"

    def recorded() -> bool:
        for piece in (where / "results").glob("*/torch/*"):
            outputs = [piece / f"{n}.parquet" for n in ("evaluations", "edges", "timings")]
            keys = [
                base64.urlsafe_b64encode(str(o.relative_to(where)).encode()).decode()
                for o in outputs
            ]
            if all((state / "metadata" / k).exists() for k in keys) and not any(
                (state / "incomplete" / k).exists() for k in keys
            ):
                return True
        return False

    while time.time() < deadline and not recorded():
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    # The kill must have caught the study unfinished, or the test shows nothing.
    unfinished = not (where / "reports" / "index.html").exists()
    # kill -9 gives Snakemake no chance to clean up: only atomic writes keep every file
    # that exists whole. (Snakemake keeps its lock after a kill -9; --unlock clears it,
    # and the profile's rerun-incomplete reruns the interrupted jobs.)
    for p in (where / "results").rglob("*.parquet"):
        read_table(p)
    snakemake(where, "--unlock")
    done = len(list((where / "results").glob("*/torch/*/timings.parquet")))
    after = planned_jobs(where, "--configfile", "tiny.yaml", "full.yaml")
    snakemake(where, "--configfile", "tiny.yaml", "full.yaml", "--cores", "2")
    return where, unfinished, done, before, after


def test_an_interrupted_run_completes_on_rerun_without_stale_files(full):
    # The full setting: the kill lands in the middle of a split evaluation (pieces of one
    # case running while others are done).
    where, unfinished, done, _, planned = full
    assert unfinished
    # The rerun makes only what is missing: the pieces already made stay (a piece whose
    # job was cut after its last write is still rerun: Snakemake had not recorded it).
    assert done >= 1 and 2 * 2 * 2 - done <= planned["evaluate_case"] < 2 * 2 * 2
    assert (
        "Nothing to be done"
        in snakemake(where, "--configfile", "tiny.yaml", "full.yaml", "-n").stdout
    )
    for p in (where / "results").rglob("*.parquet"):
        read_table(p)
    assert not list((where / "results").rglob("*.tmp"))


def test_the_full_setting_runs_one_job_per_piece_and_a_new_back_end_reruns_none(full):
    # The full setting splits each evaluation by dtype and method (config `split`); adding
    # a back end adds its pieces and reruns no other back end's (each piece's settings are
    # its own: harness.workflow.piece_settings).
    where, _, _, planned, _ = full
    # Two cases x two dtypes x two methods.
    assert planned["evaluate_case"] == 2 * 2 * 2
    pieces = sorted(
        p.parent.name for p in (where / "results" / "ratio" / "torch").glob("*/evaluations.parquet")
    )
    assert pieces == [
        f"{d}.{m}" for d in ("float32", "float64") for m in ("finite_difference", "reverse")
    ]
    (where / "both.yaml").write_text("setting: full\nbackends: [torch, tensorflow]\n")
    planned = planned_jobs(where, "--configfile", "tiny.yaml", "both.yaml")
    assert planned["evaluate_case"] == 2 * 2 * 2  # TensorFlow's pieces only
    assert planned["compare_case"] == 2 and "compute_reference" not in planned
    out = snakemake(where, "-n", "--configfile", "tiny.yaml", "both.yaml").stdout
    evaluations = [b for b in out.split("\nrule ") if b.startswith("evaluate_case:")]
    assert all("backend=tensorflow" in b for b in evaluations) and len(evaluations) == 8
