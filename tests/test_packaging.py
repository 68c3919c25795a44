"""pyproject.toml and environment.yml declare the same dependencies; the README's
commands are the ones CI and the Makefile run."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib

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


def test_building_the_project_is_quiet(tmp_path):
    # setuptools deprecates `license = { text = ... }` (it prints a BuildBackendWarning
    # and stops accepting it in 2027); the SPDX string form builds without a word.
    out = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    text = (out.stdout + out.stderr).lower()
    assert "warning" not in text.replace("warning: location", "") and "deprecat" not in text
