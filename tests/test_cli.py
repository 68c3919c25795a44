"""The command line end to end: harness run / reference / evaluate / compare."""

from __future__ import annotations

import os
import pty
import shutil
import subprocess
import sys

import pytest

from harness.results import read_metadata, read_table

from .conftest import CASES

ERROR_COLUMNS = (
    "case implementation method mode dtype order partial x value reference "
    "reference_rounded ulps bits rel_error outcome expected message"
).split()


def _harness(args, cwd, tty=False):
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    argv = [sys.executable, "-m", "harness", *args]
    if not tty:
        return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env, timeout=300)
    # stderr on a pseudo-terminal, as in an interactive shell.
    main, secondary = pty.openpty()
    proc = subprocess.run(
        argv, cwd=cwd, stdout=subprocess.PIPE, stderr=secondary, text=True, env=env, timeout=300
    )
    os.close(secondary)
    chunks = []
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(main)
    proc.stderr = b"".join(chunks).decode(errors="replace")
    return proc


@pytest.fixture
def workdir(tmp_path):
    shutil.copy(CASES / "softplus.yaml", tmp_path / "softplus.yaml")
    return tmp_path


@pytest.mark.slow
def test_run_writes_three_tables_with_provenance_and_prints_a_summary(workdir):
    args = [
        "run",
        "softplus.yaml",
        "--dtypes",
        "float32",
        "--methods",
        "reverse",
        "--modes",
        "eager,function",
        "--orders",
        "0,1,2",
        "--points",
        "6",
    ]
    proc = _harness(args, workdir, tty=True)
    assert proc.returncode == 0, proc.stderr
    assert "evaluate: 2/2 combinations" in proc.stderr  # progress on a terminal
    out = proc.stdout.splitlines()
    assert out[0].split()[:5] == ["implementation", "method", "mode", "dtype", "d"]
    # One row per implementation x mode x derivative, then the totals line.
    assert sum(1 for line in out if line.startswith("naive ")) == 2 * 3
    assert "naive" in proc.stdout and "x=100 => nan != 1" in proc.stdout
    assert out[-1].startswith("softplus: ") and "nan" in out[-1]

    folder = workdir / "results" / "softplus"
    errors = read_table(folder / "errors.parquet")
    assert set(ERROR_COLUMNS) <= set(errors.columns)
    assert set(errors.order) == {0, 1, 2} and set(errors.dtype) == {"float32"}
    for name in ("reference", "evaluations", "errors"):
        meta = read_metadata(folder / f"{name}.parquet")
        assert {
            "packages",
            "python",
            "platform",
            "cpu",
            "git",
            "case_hash",
            "config_hash",
            "seed",
        } <= set(meta), name
        assert meta["git"]["commit"] and "mpmath" in meta["packages"]
    tf = read_metadata(folder / "evaluations.parquet")["tensorflow"]
    assert tf["tensorflow"].startswith("2.") and "grappler_options" in tf

    # Piped, the same command prints no progress.
    quiet = _harness(args, workdir)
    assert quiet.returncode == 0 and "combinations" not in quiet.stderr
    assert quiet.stdout.splitlines()[0] == out[0]


def test_invalid_case_or_selection_writes_nothing(workdir):
    bad = workdir / "broken.yaml"
    bad.write_text(
        (CASES / "softplus.yaml").read_text().replace("function: ", "function: erfcx(x) + ")
    )
    proc = _harness(["run", "broken.yaml"], workdir)
    assert proc.returncode == 2
    assert "broken.yaml:" in proc.stderr and "function: unknown function 'erfcx'" in proc.stderr
    for args in (
        ["run", "softplus.yaml", "--dtypes", "float8"],
        ["run", "softplus.yaml", "--orders", "5"],
        ["reference", "softplus.yaml", "--points", "0"],
    ):
        proc = _harness(args, workdir)
        assert proc.returncode == 2 and proc.stderr.strip(), args
    assert not (workdir / "results").exists()


@pytest.mark.slow
def test_stages_run_separately_and_compare_refuses_mismatched_inputs(workdir):
    sel = [
        "--dtypes",
        "float64",
        "--methods",
        "finite_difference",
        "--modes",
        "eager",
        "--points",
        "4",
    ]
    code = (
        "import sys; from harness.cli import main; rc = main(sys.argv[1:]); "
        "print('tensorflow imported:', 'tensorflow' in sys.modules); raise SystemExit(rc)"
    )
    ref = subprocess.run(
        [sys.executable, "-c", code, "reference", "softplus.yaml", *sel],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ref.returncode == 0 and "tensorflow imported: False" in ref.stdout
    assert _harness(["evaluate", "softplus.yaml", *sel], workdir).returncode == 0
    ok = _harness(["compare", "softplus.yaml", *sel], workdir)
    assert ok.returncode == 0 and "finite_difference" in ok.stdout
    # A reference made for other points is refused, not silently joined.
    again = subprocess.run(
        [sys.executable, "-c", code, "reference", "softplus.yaml", *sel[:-1], "5"],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 0
    refused = _harness(["compare", "softplus.yaml", *sel], workdir)
    assert refused.returncode == 1 and "different selection" in refused.stderr
