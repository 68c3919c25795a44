"""What each job of the workflow depends on: the package files each stage and back end
imports, a case prepared again when it changes, the costliest case first."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT

pytestmark = pytest.mark.slow


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
        # JAX's without the exact edges: its eager rounds keep the sweep's 3-wide batch
        # and took 188-223 s here (399 calls of 0.5 s); the edges' modules are the same
        # in every back end, and TensorFlow's and PyTorch's evaluations import them.
        *(
            ("evaluate", b, ["evaluate", "softplus.yaml", "--backends", b, *sel, *extra])
            for b, extra in (("tensorflow", []), ("jax", ["--no-bisect"]), ("torch", []))
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


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_a_back_end_s_files_are_derived_from_its_imports(backend):
    """A back end's evaluate and reproduce jobs depend on the files its module and its
    snippet writer import (found in their source, lazy imports too): what a fresh process
    loads from ``harness.backends`` on importing them lies inside, and no other back end's
    folder does."""
    from harness.backends.catalogue import SPECS
    from harness.workflow.sources import backend_sources, stage_sources

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
