"""Real Snakemake in a copy of the project: the tests of the workflow and of the cluster
path run it in a temporary folder holding the workflow, the package and a few cases."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .conftest import ROOT

#: The tiny study of the workflow's tests: every stage, a few points.
TINY = """\
dtypes: [float32, float64]
methods: [reverse, finite_difference]
modes: [eager, function]
max_points: 6
"""
BIN = Path(sys.executable).parent


def copy_project(dest: Path, cases=("ratio", "softplus"), settings: str = TINY) -> Path:
    """The workflow, the package and ``cases`` copied into ``dest``, with ``settings`` as
    ``tiny.yaml``."""
    for name in ("Snakefile", "rules", "profiles", "config", "harness", "environment.yml"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(
            src,
            dest / name,
            **({"ignore": shutil.ignore_patterns("__pycache__")} if src.is_dir() else {}),
        )
    (dest / "cases").mkdir()
    for case in cases:
        shutil.copy(ROOT / "cases" / f"{case}.yaml", dest / "cases")
    (dest / "tiny.yaml").write_text(settings)
    return dest


def snakemake_env() -> dict[str, str]:
    """This interpreter's scripts first on the PATH (the jobs' ``python -m harness``)."""
    return {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "TF_CPP_MIN_LOG_LEVEL": "2"}


def snakemake(
    where: Path, *args: str, check: bool = True, timeout: int = 1800, **kw
) -> subprocess.CompletedProcess:
    """``snakemake --configfile tiny.yaml ARGS`` in ``where``; with ``check``, it must pass.
    The timeout guards against a hang, not a speed test: the tiny study takes 2 to 3
    minutes alone, and ran past 600 s beside two busy processes on the two cores."""
    proc = subprocess.run(
        [str(BIN / "snakemake"), "--configfile", "tiny.yaml", *args],
        cwd=where,
        capture_output=True,
        text=True,
        env=snakemake_env(),
        timeout=timeout,
        **kw,
    )
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


@contextlib.contextmanager
def edited(path: Path, edit):
    """Apply ``edit(text) -> text`` to ``path``; restore its text and times afterwards."""
    original, stat = path.read_text(), path.stat()
    try:
        path.write_text(edit(original))
        yield
    finally:
        path.write_text(original)
        os.utime(path, (stat.st_atime, stat.st_mtime))


def planned_jobs(where: Path, *args: str) -> dict[str, int]:
    """Jobs a dry run would execute, by rule."""
    out = snakemake(where, "-n", *args).stdout
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
