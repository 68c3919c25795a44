"""The Snakemake study on a tiny configuration: outputs, incremental reruns, fault
isolation, interrupted runs. Real Snakemake, real TensorFlow, in a copy of the repo."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from harness.results import read_metadata, read_table

from .conftest import ROOT

pytestmark = pytest.mark.slow

TINY = """\
dtypes: [float32, float64]
methods: [reverse, finite_difference]
modes: [eager, function]
max_points: 6
"""
BIN = Path(sys.executable).parent


def _copy(dest: Path) -> Path:
    for name in ("Snakefile", "rules", "profiles", "config", "harness", "environment.yml"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(
            src,
            dest / name,
            **({"ignore": shutil.ignore_patterns("__pycache__")} if src.is_dir() else {}),
        )
    (dest / "cases").mkdir()
    for case in ("ratio", "softplus"):
        shutil.copy(ROOT / "cases" / f"{case}.yaml", dest / "cases")
    (dest / "tiny.yaml").write_text(TINY)
    return dest


def _snakemake(where: Path, *args: str, check: bool = True, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "TF_CPP_MIN_LOG_LEVEL": "2"}
    proc = subprocess.run(
        [str(BIN / "snakemake"), "--configfile", "tiny.yaml", *args],
        cwd=where,
        capture_output=True,
        text=True,
        env=env,
        # A guard against a hang, not a speed test: the tiny study takes 2 to 3 minutes
        # alone, and ran past 600 s beside two busy processes on the two cores.
        timeout=1800,
        **kw,
    )
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


@contextlib.contextmanager
def _edited(path: Path, edit):
    """Apply ``edit(text) -> text`` to ``path``; restore its text and times afterwards."""
    original, stat = path.read_text(), path.stat()
    try:
        path.write_text(edit(original))
        yield
    finally:
        path.write_text(original)
        os.utime(path, (stat.st_atime, stat.st_mtime))


def _planned(where: Path, *args: str) -> dict[str, int]:
    """Jobs a dry run would execute, by rule."""
    out = _snakemake(where, "-n", *args).stdout
    jobs: dict[str, int] = {}
    lines = out.splitlines()
    if "Job stats:" not in lines:
        return jobs
    for line in lines[lines.index("Job stats:") + 1 :]:
        parts = line.split()
        if parts and parts[0] == "total":
            break
        if len(parts) == 2 and parts[1].isdigit():
            jobs[parts[0]] = int(parts[1])
    return jobs


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    where = _copy(tmp_path_factory.mktemp("study"))
    proc = _snakemake(where, "--cores", "2")
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


def test_a_noop_rerun_runs_nothing(study):
    """Nothing runs, and reading the workflow imports no framework (what a bound of 15 s
    on this dry run stood for; it failed at 18 s with a census running on both cores)."""
    where, _ = study
    out = _snakemake(where, "-n").stdout
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
    with _edited(path, lambda t: t.replace("notes: >-", "notes: >-\n  Edited.", 1)):
        assert _planned(where) == {
            "compute_reference": 1,
            "evaluate_case": 3,  # one per back end
            "compare_case": 1,
            "collect_results": 1,
            "reproduce_root_causes": 3,  # the study's root causes, one job per back end
            "render_case_page": 1,
            "render_report": 1,
            "all": 1,
        }
        assert "case=ratio" in _snakemake(where, "-n").stdout
        assert "case=softplus" not in _snakemake(where, "-n").stdout


def test_editing_tensorflow_code_reruns_evaluations_not_references(study):
    where, _ = study

    def append(text: str) -> str:
        return text + "\n# edited\n"

    with _edited(where / "harness" / "backends" / "tensorflow" / "derivatives.py", append):
        plan = _planned(where)
        # TensorFlow's evaluations of both cases: not JAX's or PyTorch's.
        assert plan["evaluate_case"] == 2 and plan["compare_case"] == 2
        assert "compute_reference" not in plan
    with _edited(where / "harness" / "backends" / "jax" / "derivatives.py", append):
        out = _snakemake(where, "-n").stdout
        evaluations = [b for b in out.split("\nrule ") if b.startswith("evaluate_case:")]
        assert _planned(where)["evaluate_case"] == 2 and "backend=jax" in out
        assert len(evaluations) == 2
        assert not any("backend=tensorflow" in b for b in evaluations)
    with _edited(where / "harness" / "reference" / "jets.py", append):
        assert _planned(where)["compute_reference"] == 2
    # The report's HTML (a colour, a figure of an experiment's page) reruns only pages.
    for path in ("report/html.py", "experiments/matrix_partials_page.py"):
        with _edited(where / "harness" / path, append):
            plan = _planned(where)
            assert plan and set(plan) <= {"render_case_page", "render_report", "all"}, (path, plan)
    assert "Nothing to be done" in _snakemake(where, "-n").stdout


def test_changing_a_tolerance_reruns_evaluations_and_comparisons_not_references(study):
    # The evaluation judges as it goes (to bisect the edges of each outcome), so a
    # tolerance is one of its settings; the mpmath references never rerun.
    where, _ = study
    (where / "tol.yaml").write_text(
        "tolerances:\n  float64: [4, 16, 64, 256, 1024]\n  float32: [8, 16, 64, 256, 1024]\n"
        "  float16: [1, 2, 4, 8, 16]\n  bfloat16: [1, 2, 4, 8, 16]\n"
    )
    assert _planned(where, "--configfile", "tiny.yaml", "tol.yaml") == {
        "evaluate_case": 2 * 3,
        "compare_case": 2,
        "collect_results": 1,
        "reproduce_root_causes": 3,
        "render_case_page": 2,
        "render_report": 1,
        "all": 1,
    }


def test_invalid_study_settings_fail_before_anything_runs(study):
    where, _ = study
    proc = _snakemake(where, "-n", "--config", "precision=5", check=False)
    assert proc.returncode != 0
    assert "study settings: precision" in proc.stdout + proc.stderr


def test_lint_is_clean(study):
    where, _ = study
    out = _snakemake(where, "--lint")
    assert "Congratulations" in out.stdout + out.stderr


def test_a_broken_case_fails_its_own_jobs_and_the_rest_completes(tmp_path):
    where = _copy(tmp_path)
    bad = (
        (where / "cases" / "softplus.yaml")
        .read_text()
        .replace("function: log(1 + exp(x))", "function: erfcx(x)")
    )
    (where / "cases" / "broken.yaml").write_text(bad)
    (where / "cases" / "softplus.yaml").unlink()
    proc = _snakemake(where, "--cores", "2", "--keep-going", check=False)
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
    """The full setting (one TensorFlow job per case, dtype and method), killed once one
    piece is done, then run again to the end: the tree, the jobs a dry run planned before
    the first run, and those it planned after the kill."""
    where = _copy(tmp_path_factory.mktemp("full"))
    (where / "full.yaml").write_text("setting: full\nbackends: [tensorflow]\n")
    before = _planned(where, "--configfile", "tiny.yaml", "full.yaml")
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
        for piece in (where / "results").glob("*/tensorflow/*"):
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
    _snakemake(where, "--unlock")
    done = len(list((where / "results").glob("*/tensorflow/*/timings.parquet")))
    after = _planned(where, "--configfile", "tiny.yaml", "full.yaml")
    _snakemake(where, "--configfile", "tiny.yaml", "full.yaml", "--cores", "2")
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
        in _snakemake(where, "--configfile", "tiny.yaml", "full.yaml", "-n").stdout
    )
    for p in (where / "results").rglob("*.parquet"):
        read_table(p)
    assert not list((where / "results").rglob("*.tmp"))


def test_each_stage_imports_only_its_declared_sources(tmp_path):
    from harness.workflow import stage_sources

    shutil.copy(ROOT / "cases" / "softplus.yaml", tmp_path)
    sel = ["--dtypes", "float64", "--methods", "reverse", "--modes", "eager", "--points", "3"]
    code = (
        "import sys, json; from harness.cli import main; rc = main(sys.argv[1:]); "
        "import pathlib, harness; top = pathlib.Path(harness.__file__).parent; "
        "mods = sorted(str(pathlib.Path(sys.modules[m].__file__).relative_to(top)) "
        "for m in sys.modules if m.startswith('harness.')); print('MODULES=' + json.dumps(mods))"
    )
    for stage, backend, args in (
        ("reference", None, ["reference", "softplus.yaml", *sel]),
        *(
            ("evaluate", b, ["evaluate", "softplus.yaml", "--backends", b, *sel])
            for b in ("tensorflow", "jax", "torch")
        ),
        ("compare", None, ["compare", "softplus.yaml", *sel]),
        ("collect", None, ["collect", "--out", "results/summary.parquet"]),
        *(
            ("reproduce", b, ["repro", "--backend", b, "--results", "results", "--cases", "."])
            for b in ("tensorflow", "jax", "torch")
        ),
        ("report", None, ["report", "--case", "softplus", "--reports", "reports", "--cases", "."]),
    ):
        # As the evaluating child process of `harness evaluate` runs (the stage's work in
        # this process: harness.backends.crashes).
        ledger = tmp_path / "ledger"
        ledger.mkdir(exist_ok=True)
        out = subprocess.run(
            [sys.executable, "-c", code, *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "HARNESS_CRASH_LEDGER": str(ledger)},
        )
        assert out.returncode == 0, out.stderr
        line = next(x for x in out.stdout.splitlines() if x.startswith("MODULES="))
        used = set(__import__("json").loads(line.removeprefix("MODULES=")))
        declared = {str(Path(p).relative_to("harness")) for p in stage_sources(stage, ".", backend)}
        assert used <= declared, (stage, used - declared)
        if backend:  # no other back end's files (nor its framework) in an evaluate job,
            # but its registry entry (spec.py: data, as every job reads the catalogue)
            others = {b for b in ("tensorflow", "jax", "torch") if b != backend}
            registry = {f"backends/{o}/{f}" for o in others for f in ("__init__.py", "spec.py")}
            assert {f"backends/{o}/spec.py" for o in others} <= used
            assert not any(u.startswith(f"backends/{o}/") for u in used - registry for o in others)


def test_snakemakes_own_report_flags_our_pages(study):
    where, _ = study
    _snakemake(where, "--report", "snakemake-report.html")
    text = (where / "snakemake-report.html").read_text(errors="replace")
    assert "index.html" in text and "summary.csv" in text


def test_costliest_case_is_scheduled_first():
    """The logistic case's evaluation is the study's longest job; with 2 cores, starting
    it last left one core idle for a minute (202 s instead of ~160 s)."""
    from types import SimpleNamespace

    from harness.config import load_config
    from harness.workflow import evaluation_cost, job_priority

    config = dict(load_config(ROOT / "config" / "study.yaml").data)
    costs = {p.stem: evaluation_cost(p, config) for p in sorted((ROOT / "cases").glob("*.yaml"))}
    assert max(costs, key=costs.get) == "logistic", costs
    priority = job_priority(config, ROOT / "cases")
    assert callable(priority)  # this Snakemake takes a function of the wildcards
    assert priority(SimpleNamespace(case="logistic")) == costs["logistic"]
    assert evaluation_cost(ROOT / "cases" / "missing.yaml", config) == 1000


def test_a_case_is_prepared_again_when_its_text_or_the_study_changes(tmp_path):
    """The workflow prepares each case once while it is parsed, and again for another text
    of the file (same size, same second) or other settings: never a stale answer."""
    from harness.workflow import case_pieces

    text = (
        "title: a square\nsource: test\ninputs:\n  x: {values: [0.5, 2.0]}\n"
        "function: x*x\nderivatives: {wrt: x, orders: [1]}\n"
        "implementations:\n  plain: {expression: x*x}\ndtypes: [float32]\n"
    )
    case = tmp_path / "edited.yaml"
    case.write_text(text)
    study = {"setting": "full", "backends": ["tensorflow"], "methods": ["reverse"]}
    assert case_pieces(case, study) == [("tensorflow", "float32.reverse")]
    assert case_pieces(case, {**study, "methods": ["forward"]}) == [
        ("tensorflow", "float32.forward")
    ]
    case.write_text(text.replace("float32", "float64"))  # the same length
    assert case_pieces(case, study) == [("tensorflow", "float64.reverse")]
    # A file that no longer validates: one piece per back end (its job shows the error).
    case.write_text("title: [\n")
    assert case_pieces(case, study) == [("tensorflow", "all")]


def test_the_full_setting_runs_one_job_per_piece_and_a_new_back_end_reruns_none(full):
    # The full setting splits each evaluation by dtype and method (config `split`); adding
    # a back end adds its pieces and reruns no other back end's (each piece's settings are
    # its own: harness.workflow.piece_settings).
    where, _, _, planned, _ = full
    # Two cases x two dtypes x two methods.
    assert planned["evaluate_case"] == 2 * 2 * 2
    pieces = sorted(
        p.parent.name
        for p in (where / "results" / "ratio" / "tensorflow").glob("*/evaluations.parquet")
    )
    assert pieces == [
        f"{d}.{m}" for d in ("float32", "float64") for m in ("finite_difference", "reverse")
    ]
    (where / "both.yaml").write_text("setting: full\nbackends: [tensorflow, torch]\n")
    planned = _planned(where, "--configfile", "tiny.yaml", "both.yaml")
    assert planned["evaluate_case"] == 2 * 2 * 2  # PyTorch's pieces only
    assert planned["compare_case"] == 2 and "compute_reference" not in planned
    out = _snakemake(where, "-n", "--configfile", "tiny.yaml", "both.yaml").stdout
    evaluations = [b for b in out.split("\nrule ") if b.startswith("evaluate_case:")]
    assert all("backend=torch" in b for b in evaluations) and len(evaluations) == 8


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_a_back_end_s_files_are_derived_from_its_imports(backend):
    """A back end's evaluate and reproduce jobs depend on the files its module and its
    snippet writer import (found in their source, lazy imports too): what a fresh process
    loads from ``harness.backends`` on importing them lies inside, and no other back end's
    folder does."""
    from harness.backends.catalogue import SPECS
    from harness.workflow_sources import backend_sources, stage_sources

    spec = SPECS[backend]
    for stage, module in (("evaluate", spec.module), ("reproduce", spec.snippet)):
        code = (
            f"import importlib, json, sys, pathlib, harness; importlib.import_module({module!r}); "
            "top = pathlib.Path(harness.__file__).parent; "
            "print(json.dumps(sorted(str(pathlib.Path(sys.modules[m].__file__).relative_to(top)) "
            "for m in sys.modules if m.startswith('harness.backends'))))"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT
        )
        assert out.returncode == 0, out.stderr
        loaded = set(__import__("json").loads(out.stdout.splitlines()[-1]))
        derived = set(backend_sources(backend, stage))
        # The registry (every back end's spec.py, read through the case schema) is the
        # stage's common input, declared for every job of the stage, not the back end's.
        common = {str(Path(p).relative_to("harness")) for p in stage_sources(stage, ".")}
        registry = {m for m in loaded - derived if m.endswith(("spec.py", "catalogue.py"))}
        assert registry <= common, registry - common
        assert loaded - registry - {f"backends/{b}/__init__.py" for b in SPECS} <= derived, (
            stage,
            loaded - derived,
        )
        assert f"backends/{backend}/__init__.py" in derived
        others = {b for b in SPECS if b != backend}
        registry = {f"backends/{o}/{f}" for o in others for f in ("__init__.py", "spec.py")}
        assert not any(d.startswith(f"backends/{o}/") for d in derived - registry for o in others)


def test_the_census_is_its_own_target_with_one_job_per_stage_batch_and_back_end(tmp_path):
    """``snakemake census`` writes the census's case files from the operator table and
    plans the study's three stages for each batch of them (the evaluation once per back
    end and dtype, the quick census block's `split`), then the atlas; the default target
    plans none of it."""
    from .test_census import _expected_cases

    where = _copy(tmp_path)
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
    assert _planned(where, "census") == expected
    assert {p.stem for p in (where / "census" / "cases").glob("*.yaml")} == _expected_cases()
    assert not [rule for rule in _planned(where) if rule.startswith("census")]


def test_a_census_of_chosen_kernels_plans_their_cases_alone(tmp_path):
    """``--config census_kernels=[...]`` runs the census of those operators: their case
    files (every layout), their batches and one collect, reproduce and atlas over them.
    An operator the census does not check stops the workflow naming the key."""
    from .test_census import _expected_cases

    where = _copy(tmp_path)
    planned = _planned(where, "census", "--config", "census_kernels=[sinc,hypot]")
    cases = {p.stem for p in (where / "census" / "cases").glob("*.yaml")}
    assert cases == {"census_sinc", "census_hypot_grid", "census_hypot_diagonal"}
    assert cases < _expected_cases()
    # One batch holds them (the quick block's), cut by dtype as the whole census is.
    assert planned["census_evaluate_b1_tensorflow_float64"] == 1
    assert planned["census_collect"] == planned["census_atlas"] == 1
    out = _snakemake(where, "-n", "census", "--config", "census_kernels=softpls", check=False)
    assert out.returncode != 0
    assert "census_kernels: unknown kernel 'softpls'" in out.stdout + out.stderr


def test_editing_a_stage_s_code_reruns_the_census_jobs_that_run_it(tmp_path):
    """The census's rules take their package files as input functions (listed when a job
    enters the graph, not for each of its 900 rules when the workflow is read): editing
    TensorFlow's derivatives reruns TensorFlow's evaluations of the census and what reads
    them, not its references or the other frameworks' evaluations; editing the reference's
    jets reruns its references. Every output is made up to date by hand (the summary's
    files, an hour newer than their inputs), so no census runs."""
    where = _copy(tmp_path)
    kernels = ("--config", "census_kernels=[softplus]", "--rerun-triggers", "mtime")
    summary = _snakemake(where, "--summary", "census", *kernels).stdout.splitlines()
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
    assert _planned(where, "census", *kernels) == {}

    def append(text: str) -> str:
        return text + "\n# edited\n"

    with _edited(where / "harness" / "backends" / "tensorflow" / "derivatives.py", append):
        plan = _planned(where, "census", *kernels)
        assert plan["census_evaluate_b1_tensorflow_float64"] == 1
        assert plan["census_evaluate_b1_tensorflow_float32"] == 1
        assert not [r for r in plan if r.startswith(("census_reference", "census_evaluate_b1_j"))]
        assert not [r for r in plan if r.startswith("census_evaluate_b1_torch")]
        assert plan["census_compare_b1_1"] == plan["census_atlas"] == 1
    with _edited(where / "harness" / "reference" / "jets.py", append):
        plan = _planned(where, "census", *kernels)
        assert plan["census_reference_b1_1"] == 1
