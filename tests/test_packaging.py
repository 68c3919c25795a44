"""pyproject.toml and environment.yml declare the same dependencies; the README's
commands are the ones CI and the Makefile run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pandas as pd
import pytest
import yaml

from .conftest import ROOT


def _name(spec: str) -> str:
    return re.split(r"[<>=!~ \[]", spec.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _pyproject() -> dict[str, str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    extras = data["project"]["optional-dependencies"]
    specs = data["project"]["dependencies"] + extras["test"] + extras["all"]
    # `all` is the union of the back ends' extras.
    assert sorted(extras["all"]) == sorted(extras["jax"] + extras["torch"])
    return {_name(s): s.replace(" ", "") for s in specs}


def _environment() -> dict[str, str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    out = {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            for spec in dep["pip"]:
                if not spec.startswith("-e"):
                    out[_name(spec)] = spec.replace(" ", "")
        elif _name(dep) not in ("python", "pip"):
            out[_name(dep)] = dep.replace(" ", "")
    return out


def test_environment_yml_lists_what_pyproject_declares():
    py, env = _pyproject(), _environment()
    assert sorted(py) == sorted(env)
    for name in py:
        # Same lower bounds (conda spells PyYAML as pyyaml; names are compared lowercased).
        assert py[name].lower().split(name)[-1] == env[name].lower().split(name)[-1], name


def test_readme_quick_start_is_what_ci_runs():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    makefile = (ROOT / "Makefile").read_text()
    assert "make study" in readme and "make test" in readme
    assert re.search(r"^make test$", ci, re.M)
    assert "snakemake --cores" in makefile and "pytest" in makefile


def test_readme_tutorial_case_validates(tmp_path):
    from harness.cases.load import load_case

    readme = (ROOT / "README.md").read_text()
    start = readme.index("Write `cases/swish.yaml`:")
    block = readme[start:].split("```yaml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "swish.yaml"
    path.write_text(block)
    case = load_case(path)
    assert [i.name for i in case.implementations] == ["kernel", "with_exp"]


def _build_source(tmp_path: Path) -> Path:
    """A copy of what the build reads, so that no build leaves a build/ in the checkout
    (and none left there by hand is packed whole, whatever the configuration says)."""
    import shutil

    source = tmp_path / "source"
    junk = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "harness", source / "harness", ignore=junk)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    return source


def test_building_the_project_is_quiet(tmp_path):
    # setuptools deprecates `license = { text = ... }` (it prints a BuildBackendWarning
    # and stops accepting it in 2027); the SPDX string form builds without a word.
    source = _build_source(tmp_path)
    out = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(tmp_path), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    text = (out.stdout + out.stderr).lower()
    assert "warning" not in text.replace("warning: location", "") and "deprecat" not in text


@pytest.mark.slow
def test_the_built_wheel_carries_every_module_and_runs_a_case_outside_the_checkout(tmp_path):
    """``pip install .`` (not ``-e``) must carry every subpackage and the data files the
    code reads: build the wheel, install it with no dependencies into a fresh virtual
    environment outside the checkout (the dependencies come from this environment's
    site-packages as a plain path, so its editable finder for the checkout is never
    loaded), and validate and run a case there."""
    import zipfile

    source = _build_source(tmp_path)
    wheels = tmp_path / "wheels"
    pip = [sys.executable, "-m", "pip"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels), str(source)],
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    (wheel,) = wheels.glob("harness-*.whl")
    packed = set(zipfile.ZipFile(wheel).namelist())
    # Every file of the package in the checkout, from the file system (not from the
    # packaging configuration under test): modules and the data they read.
    wanted = {
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "harness").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }
    assert len(wanted) > 100 and not wanted - packed, sorted(wanted - packed)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    deps = next(p for p in map(str, sys.path) if p.endswith("site-packages"))
    (Path(site) / "dependencies.pth").write_text(deps + "\n")
    subprocess.run(
        [*pip, "--python", str(python), "install", "--no-deps", "-q", str(wheel)],
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    work = tmp_path / "elsewhere"
    work.mkdir()
    case = work / "cube.yaml"
    case.write_text(
        "title: a cube\nsource: test\ninputs:\n  x: {values: [0.5, 2.0]}\n"
        "function: x**3\nderivatives: {wrt: x, orders: [1, 2]}\n"
        "implementations:\n  plain: {expression: x**3}\ndtypes: [float64]\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    where = subprocess.run(
        [str(python), "-c", "import harness, harness.judge; print(harness.__file__)"],
        check=True,
        capture_output=True,
        text=True,
        cwd=work,
        env=env,
    ).stdout.strip()
    assert where.startswith(site) and not where.startswith(str(ROOT))
    harness = str(venv / "bin" / "harness")
    done = subprocess.run(
        [harness, "validate", str(case)], capture_output=True, text=True, cwd=work, env=env
    )
    assert done.returncode == 0, done.stdout + done.stderr
    run = [harness, "run", str(case), "--backends", "torch", "--methods", "reverse"]
    done = subprocess.run(
        [*run, "--modes", "eager", "--results", str(work / "results")],
        capture_output=True,
        text=True,
        cwd=work,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    errors = pd.read_parquet(work / "results" / "cube" / "errors.parquet")
    # d/dx x**3 = 3x**2, d2 = 6x: exact in float64 at 0.5 and 2.
    first = errors[(errors.order == 1) & (errors.method == "reverse")].sort_values("x")
    assert first["value"].tolist() == [0.75, 12.0]
