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
    proc = _harness([*args, "--table"], workdir, tty=True)
    assert proc.returncode == 0, proc.stderr
    # Progress on a terminal: a bar redrawn in place; none of TensorFlow's start-up noise.
    assert "2/2 combinations" in proc.stderr and "[####" in proc.stderr
    assert "absl" not in proc.stderr and "oneDNN" not in proc.stderr
    out = proc.stdout.splitlines()
    assert out[0].split()[:6] == ["backend", "implementation", "method", "mode", "dtype", "d"]
    # With --table: one row per implementation x mode x derivative; then the findings
    # (the seed's NaN from 88.72284 among them) and the totals line.
    assert sum(1 for line in out if line.startswith("tensorflow  naive ")) == 2 * 3
    assert "naive" in proc.stdout and "x=100.0 => nan != 1" in proc.stdout
    # One statement for the frameworks that share it (TensorFlow among them).
    assert any(
        "· naive · d/dx · float32: nan for x ≥ 88.72284" in line
        and line.split(" · ")[1].startswith("TensorFlow")
        for line in out
    ), out
    assert out[-1].startswith("softplus: ") and "nan" in out[-1]

    folder = workdir / "results" / "softplus"
    errors = read_table(folder / "errors.parquet")
    assert set(ERROR_COLUMNS) <= set(errors.columns)
    assert set(errors.order) == {0, 1, 2} and set(errors.dtype) == {"float32"}
    for name in ("reference", "tensorflow/all/evaluations", "errors"):
        meta = read_metadata(folder / f"{name}.parquet")
        assert {
            "packages",
            "python",
            "platform",
            "cpu",
            "cpu_features",
            "git",
            "case_hash",
            "config_hash",
            "seed",
        } <= set(meta), name
        assert meta["git"]["commit"] and "mpmath" in meta["packages"]
    tf = read_metadata(folder / "tensorflow" / "all" / "evaluations.parquet")["framework"]
    assert tf["tensorflow"].startswith("2.") and "grappler_options" in tf

    # Piped (a log file), progress comes as plain lines; the output leads with the
    # findings, the table stays behind --table.
    piped = _harness(args, workdir)
    assert piped.returncode == 0 and "\r" not in piped.stderr
    assert "evaluate tensorflow: 2/2 combinations" in piped.stderr.splitlines()
    assert "absl" not in piped.stderr and "oneDNN" not in piped.stderr
    first = piped.stdout.splitlines()[0]
    assert first.startswith("softplus: ") and "unexpected" in first and "expected findings" in first
    assert "implementation  method" not in piped.stdout


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


@pytest.mark.slow
def test_collect_writes_where_results_are_and_csvs_are_plain(tmp_path):
    import pandas as pd

    here = tmp_path / "here"
    study = tmp_path / "study"
    here.mkdir()
    shutil.copy(CASES / "ratio.yaml", tmp_path / "ratio.yaml")
    sel = ["--dtypes", "float32", "--methods", "finite_difference", "--points", "4"]
    assert (
        _harness(
            ["reference", str(tmp_path / "ratio.yaml"), "--results", str(study), *sel], here
        ).returncode
        == 0
    )
    assert (
        _harness(
            ["evaluate", str(tmp_path / "ratio.yaml"), "--results", str(study), *sel], here
        ).returncode
        == 0
    )
    assert (
        _harness(
            ["compare", str(tmp_path / "ratio.yaml"), "--results", str(study), *sel], here
        ).returncode
        == 0
    )
    proc = _harness(["collect", "--results", str(study)], here)
    assert proc.returncode == 0, proc.stderr
    assert not (here / "results").exists()  # never the working folder's study
    for name in ("summary", "findings"):
        assert (study / f"{name}.parquet").exists()
        frame = pd.read_csv(study / f"{name}.csv")  # plain: no comment lines to skip
        assert len(frame) == len(read_table(study / f"{name}.parquet"))
        assert (study / f"{name}.provenance.json").exists()
    report = _harness(
        [
            "report",
            "--results",
            str(study),
            "--reports",
            str(tmp_path / "r"),
            "--cases",
            str(tmp_path),
        ],
        here,
    )
    assert report.returncode == 0, report.stderr
    # The study renders its two pages as two jobs: each flag writes its page alone.
    for flag, page in (("--frameworks-only", "frameworks"), ("--index-only", "index")):
        out = tmp_path / f"only-{page}"
        proc = _harness(
            [
                "report",
                flag,
                "--results",
                str(study),
                "--reports",
                str(out),
                "--cases",
                str(tmp_path),
            ],
            here,
        )
        assert proc.returncode == 0, proc.stderr
        assert sorted(p.name for p in out.iterdir()) == [f"{page}.html"]


def test_results_that_cannot_be_read_end_in_one_line(tmp_path):
    import pandas as pd

    results = tmp_path / "results"
    (results / "ratio").mkdir(parents=True)
    (results / "ratio" / "errors.parquet").write_bytes(b"PAR1 not really parquet")
    proc = _harness(["report", "--case", "ratio", "--results", str(results)], tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().count("\n") == 0
    assert "errors.parquet is not a readable Parquet table" in proc.stderr
    # A Parquet file the harness did not write (no provenance): refused by name.
    pd.DataFrame({"a": [1]}).to_parquet(results / "summary.parquet")
    proc = _harness(["report", "--results", str(results)], tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "summary.parquet was not written by the harness" in proc.stderr


#: The capabilities that let root ignore a file's mode (write, read and search, chmod).
_DAC = "-dac_override,-dac_read_search,-fowner"


def _bound_by_modes(argv: list[str]) -> list[str]:
    """Run bound by file modes where we are root (root ignores a folder's mode): the same
    user without the capabilities that override them. Not another user: the clone, its
    virtual environment and the interpreter may lie in folders only this user can read
    (a clone inside ``mktemp -d``, Python under ``/root``)."""
    if os.geteuid() != 0:
        return argv
    setpriv = shutil.which("setpriv")
    assert setpriv, "setpriv (util-linux) is needed to drop root's override of file modes"
    return [setpriv, f"--bounding-set={_DAC}", f"--inh-caps={_DAC}", *argv]


def test_a_read_only_results_folder_ends_in_one_line(tmp_path):
    where = tmp_path
    shutil.copy(CASES / "ratio.yaml", where / "ratio.yaml")
    results = where / "results"
    results.mkdir()
    os.chmod(results, 0o555)
    try:
        argv = [
            sys.executable,
            "-m",
            "harness",
            "reference",
            str(where / "ratio.yaml"),
            "--results",
            str(results),
            "--dtypes",
            "float32",
            "--points",
            "3",
        ]
        proc = subprocess.run(
            _bound_by_modes(argv), cwd=where, capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert "cannot write" in proc.stderr and "ermission denied" in proc.stderr
        assert list(results.rglob("*")) == []  # nothing half-written
    finally:
        os.chmod(results, 0o755)


def _small_disk(path):
    """A 64 KiB tmpfs at ``path`` where this machine lets us mount one; else None."""
    path.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(path)], capture_output=True
    )
    return path if proc.returncode == 0 else None


def test_a_full_disk_ends_in_one_line_and_keeps_what_was_written(tmp_path):
    shutil.copy(CASES / "ratio.yaml", tmp_path / "ratio.yaml")
    disk = _small_disk(tmp_path / "disk")
    argv = [
        sys.executable,
        "-m",
        "harness",
        "reference",
        str(tmp_path / "ratio.yaml"),
        "--results",
        str(tmp_path / "disk" / "results"),
        "--dtypes",
        "float32",
        "--points",
        "40",
        "--no-cache",
    ]
    try:
        earlier = tmp_path / "disk" / "results" / "ratio" / "reference.parquet"
        earlier.parent.mkdir(parents=True)
        earlier.write_bytes(b"an earlier table")
        if disk is not None:  # leave 4 KiB: far less than the new table needs
            free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
            (disk / "filler").write_bytes(b"\0" * max(0, free - 4096))
        if disk is None:
            # No mount here: the file-size limit stands in for the full disk (EFBIG).
            import resource

            def limit():
                resource.setrlimit(resource.RLIMIT_FSIZE, (16384, 16384))

            proc = subprocess.run(
                argv, cwd=tmp_path, capture_output=True, text=True, timeout=300, preexec_fn=limit
            )
        else:
            proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert "cannot write" in proc.stderr
        assert earlier.read_bytes() == b"an earlier table"  # untouched, not half-replaced
        assert [p.name for p in earlier.parent.iterdir()] == ["reference.parquet"]
        assert not list((tmp_path / "disk" / "results").rglob("*.tmp"))
    finally:
        if disk is not None:
            subprocess.run(["umount", str(disk)], capture_output=True)


def test_implementations_lists_what_a_case_may_name(tmp_path):
    proc = _harness(["implementations"], tmp_path)
    assert proc.returncode == 0
    for name in ("seed000_newdiv", "logistic_rk4", "hessian_norm", "matrix_mixed_partials"):
        assert name in proc.stdout


@pytest.mark.parametrize(
    "args, says",
    [
        (["softplus.yaml", "nope", "--at", "x=1"], "has no implementation 'nope'"),
        (["softplus.yaml", "naive", "--at", "y=1"], "has no input 'y'"),
        (["softplus.yaml", "naive", "--at", "x=one"], "expected NAME=NUMBER"),
        (["softplus.yaml", "naive", "--at", "x=1", "--partial", "xy"], "--partial 'xy'"),
        (["softplus.yaml", "naive", "--at", "x=1", "--index", "3"], "--index must lie"),
        (["hessian_norm.yaml", "rosenbrock", "--at", "x=1"], "is an experiment case"),
        (["softplus.yaml", "naive", "--at", "x=1", "--max-order", "5"], "invalid choice: 5"),
    ],
)
def test_the_probe_refuses_bad_input_in_one_line(args, says):
    out = _harness(["probe", *args], CASES)
    assert out.returncode == 2, out.stdout
    assert says in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_provenance_names_the_cpu_s_model_and_vector_flags():
    """Two virtual machines both called "Intel(R) Xeon(R) Processor" can round a kernel
    differently; the provenance tells them apart by model and vector flags (the first
    processor's block of /proc/cpuinfo; an Arm machine's list is "Features")."""
    from harness.provenance import cpu_features

    block = (
        "processor\t: {n}\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: {m}\n"
        "model name\t: Intel(R) Xeon(R) Processor\nstepping\t: 2\n"
        "flags\t\t: fpu sse sse2 sse4_1 avx fma avx2 avx512f {extra}\n\n"
    )
    text = block.format(n=0, m=207, extra="avx512_fp16 amx_tile") + block.format(
        n=1, m=85, extra=""
    )
    assert cpu_features(text) == (
        "family 6, model 207, stepping 2; sse4_1 avx avx2 fma avx512f avx512_fp16 amx_tile"
    )
    arm = "processor\t: 0\nFeatures\t: fp asimd evtstrm sve\nCPU part\t: 0xd0c\n\n"
    assert cpu_features(arm) == "asimd sve"
    assert cpu_features("") == ""


def test_the_cpu_signature_names_every_flag():
    """A compiled program may use any instruction the compiling CPU has: the signature
    the compilation cache is keyed by lists every flag of the first processor, sorted."""
    from harness.provenance import cpu_signature

    block = (
        "processor\t: {n}\ncpu family\t: 6\nmodel\t\t: 207\n"
        "model name\t: Intel(R) Xeon(R) Processor\nstepping\t: 2\n"
        "flags\t\t: sse2 fpu {extra} avx2\n\n"
    )
    text = block.format(n=0, extra="rdrand amx_tile") + block.format(n=1, extra="")
    assert cpu_signature(text) == (
        "model name Intel(R) Xeon(R) Processor; cpu family 6; model 207; stepping 2; "
        "flags amx_tile avx2 fpu rdrand sse2"
    )
    arm = "processor\t: 0\nFeatures\t: fp asimd sve\n\n"
    assert cpu_signature(arm) == "; flags asimd fp sve"
    assert cpu_signature("") == ""


def test_the_compilation_cache_folder_is_keyed_by_every_fact():
    """The folder is the SHA-256 of the facts as sorted JSON, so a results folder copied
    to another CPU or JAX version is never served the programs compiled here."""
    import hashlib
    from pathlib import Path

    from harness.backends.jax.cache import cache_folder

    facts = {"jax": "0.10.2", "jaxlib": "0.10.2", "cpu": "flags avx2 fma", "x64": "True"}
    digest = hashlib.sha256(
        b'{"cpu":"flags avx2 fma","jax":"0.10.2","jaxlib":"0.10.2","x64":"True"}'
    ).hexdigest()
    assert cache_folder("r/.cache/compiled", facts) == Path("r/.cache/compiled/jax") / digest[:16]
    other = {**facts, "cpu": "flags avx2"}
    assert cache_folder("r", other).name != cache_folder("r", facts).name
    assert cache_folder("r", dict(reversed(list(facts.items())))) == cache_folder("r", facts)
