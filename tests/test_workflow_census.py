"""The census as its own Snakemake target: its batch jobs, a census of chosen kernels,
and what an edit of a stage's code reruns (dry runs, in a copy of the repo)."""

from __future__ import annotations

import os
import time

import pytest
import yaml

from .snakemake_runs import copy_project, edited, planned_jobs, snakemake

pytestmark = pytest.mark.slow


def test_the_census_is_its_own_target_with_one_job_per_stage_batch_and_back_end(tmp_path):
    """``snakemake census`` writes the census's case files from the operator table and
    plans the study's three stages for each batch of them (the evaluation once per back
    end and dtype, the quick census block's `split`), then the atlas; the default target
    plans none of it."""
    from .test_census import _expected_cases

    where = copy_project(tmp_path)
    config = yaml.safe_load((where / "config" / "study.yaml").read_text())
    quick = config["census"]["quick"]
    assert quick["split"] == ["dtype"]
    batches = [f"b{i}" for i in range(1, quick["batches"] + 1)]
    backends = ("tensorflow", "jax", "torch")
    expected = {f"census_reference_{b}_{part}": 1 for b in batches for part in (1, 2)}
    expected |= {
        f"census_evaluate_{b}_{k}_{d}": 1
        for b in batches
        for k in backends
        for d in quick["dtypes"]
    }
    expected |= {f"census_compare_{b}_{part}": 1 for b in batches for part in (1, 2)}
    expected |= {"census_collect": 1, "census_reproduce": 3, "census_atlas": 1, "census": 1}
    assert planned_jobs(where, "census") == expected
    assert {p.stem for p in (where / "census" / "cases").glob("*.yaml")} == _expected_cases()
    assert not [rule for rule in planned_jobs(where) if rule.startswith("census")]


def test_a_census_of_chosen_kernels_plans_their_cases_alone(tmp_path):
    """``--config census_kernels=[...]`` runs the census of those operators: their case
    files (every layout), their batches and one collect, reproduce and atlas over them.
    An operator the census does not check stops the workflow naming the key."""
    from .test_census import _expected_cases

    where = copy_project(tmp_path)
    planned = planned_jobs(where, "census", "--config", "census_kernels=[sinc,hypot]")
    cases = {p.stem for p in (where / "census" / "cases").glob("*.yaml")}
    assert cases == {"census_sinc", "census_hypot_grid", "census_hypot_diagonal"}
    assert cases < _expected_cases()
    # One batch holds them (the quick block's), cut by dtype as the whole census is.
    assert planned["census_evaluate_b1_tensorflow_float64"] == 1
    assert planned["census_collect"] == planned["census_atlas"] == 1
    out = snakemake(where, "-n", "census", "--config", "census_kernels=softpls", check=False)
    assert out.returncode != 0
    assert "census_kernels: unknown kernel 'softpls'" in out.stdout + out.stderr


def test_editing_a_stage_s_code_reruns_the_census_jobs_that_run_it(tmp_path):
    """The census's rules take their package files as input functions (listed when a job
    enters the graph, not for each of its 900 rules when the workflow is read): editing
    TensorFlow's derivatives reruns TensorFlow's evaluations of the census and what reads
    them, not its references or the other frameworks' evaluations; editing the reference's
    jets reruns its references. Every output is made up to date by hand (the summary's
    files, an hour newer than their inputs), so no census runs."""
    where = copy_project(tmp_path)
    kernels = ("--config", "census_kernels=[softplus]", "--rerun-triggers", "mtime")
    summary = snakemake(where, "--summary", "census", *kernels).stdout.splitlines()
    outputs = [line.split("\t")[0] for line in summary[1:] if "\t" in line]
    assert any("/tensorflow/float64/evaluations.parquet" in o for o in outputs)
    hour_ago = time.time() - 3600
    for path in where.rglob("*"):  # the inputs: case files, code, configuration
        if path.is_file():
            os.utime(path, (hour_ago - 3600, hour_ago - 3600))
    for name in outputs:
        path = where / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
        os.utime(path, (hour_ago, hour_ago))
    assert planned_jobs(where, "census", *kernels) == {}

    def append(text: str) -> str:
        return text + "\n# edited\n"

    with edited(where / "harness" / "backends" / "tensorflow" / "derivatives.py", append):
        plan = planned_jobs(where, "census", *kernels)
        assert plan["census_evaluate_b1_tensorflow_float64"] == 1
        assert plan["census_evaluate_b1_tensorflow_float32"] == 1
        assert not [r for r in plan if r.startswith(("census_reference", "census_evaluate_b1_j"))]
        assert not [r for r in plan if r.startswith("census_evaluate_b1_torch")]
        assert plan["census_compare_b1_1"] == plan["census_atlas"] == 1
    with edited(where / "harness" / "reference" / "jets.py", append):
        plan = planned_jobs(where, "census", *kernels)
        assert plan["census_reference_b1_1"] == 1
