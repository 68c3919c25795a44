"""The cluster path, for real where it can be here: the study through
snakemake-executor-plugin-cluster-generic with a local submit/status script (every job a
separate submitted process, its status polled), and the Slurm profile's dry run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness.results import read_table

from .snakemake_runs import copy_project, snakemake

pytestmark = pytest.mark.slow

TINY = """\
backends: [torch]  # every job is a process: the framework that starts fastest
dtypes: [float32, float64]
methods: [reverse, finite_difference]
modes: [eager, function]
max_points: 6
setting: full
"""


def _snakemake(where: Path, *args: str) -> subprocess.CompletedProcess:
    return snakemake(where, *args, check=False, timeout=900)


def test_the_study_runs_through_a_submitting_executor(tmp_path):
    pytest.importorskip("snakemake_executor_plugin_cluster_generic")
    where = copy_project(tmp_path, cases=("softplus",), settings=TINY)
    proc = _snakemake(where, "--profile", "profiles/local-cluster")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    jobs = sorted((where / "logs" / "cluster").iterdir())
    requested = [json.loads((j / "requested.json").read_text()) for j in jobs]
    rules = sorted(r["rule"] for r in requested)
    # Every job went through submit.py as a process of its own, and ended with status 0:
    # one reference, the evaluation's pieces (2 dtypes x 2 methods), one comparison, the
    # case page, the collection and the index.
    assert rules == sorted(
        [
            "compute_reference",
            "compare_case",
            "collect_results",
            "render_case_page",
            "render_report",
            "render_frameworks",
            "reproduce_root_causes",  # the study's one back end
        ]
        + ["evaluate_case"] * 4
    )
    assert all((j / "exit").read_text().strip() == "0" for j in jobs)
    assert len({(j / "pid").read_text() for j in jobs}) == len(jobs)
    # Each job asked for the resources its rule declares (an evaluation piece: its
    # method's memory, harness.workflow.PIECE_MEM_MB).
    pieces = {r["wildcards"]["piece"]: r for r in requested if r["rule"] == "evaluate_case"}
    assert set(pieces) == {
        f"{d}.{m}" for d in ("float32", "float64") for m in ("reverse", "finite_difference")
    }
    mem = {p.split(".")[1]: r["resources"]["mem_mb"] for p, r in pieces.items()}
    assert mem == {"reverse": 3000, "finite_difference": 2000}
    assert all(r["threads"] == 1 for r in requested)
    # The results are whole and the report is there.
    errors = read_table(where / "results" / "softplus" / "errors.parquet")
    assert set(errors.dtype) == {"float32", "float64"}
    assert (where / "reports" / "index.html").stat().st_size > 1000
    # Nothing left to do, through the same executor.
    again = _snakemake(where, "--profile", "profiles/local-cluster", "-n")
    assert "Nothing to be done" in again.stdout + again.stderr


def test_the_slurm_profile_asks_for_each_rules_resources(tmp_path):
    pytest.importorskip("snakemake_executor_plugin_slurm")
    where = copy_project(tmp_path, cases=("softplus",), settings=TINY)
    (where / "tiny.yaml").write_text(
        TINY.replace("methods: [reverse, finite_difference]", "methods: [reverse, forward]")
    )
    proc = _snakemake(
        where,
        "--profile",
        "profiles/slurm",
        "-n",
        "--default-resources",
        "slurm_account=study",
        "slurm_partition=cpu",
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    blocks = out.split("rule ")
    forward = [b for b in blocks if b.startswith("evaluate_case") and "piece=float32.forward" in b]
    reverse = [b for b in blocks if b.startswith("evaluate_case") and "piece=float32.reverse" in b]
    assert forward and reverse
    assert "mem_mb=6000" in forward[0] and "mem_mb=3000" in reverse[0]
    assert "runtime=30" in forward[0] and "slurm_partition=cpu" in forward[0]
