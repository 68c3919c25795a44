"""Every finding's reproduction: its standalone TensorFlow script (no harness import) and
its ``harness probe`` command give the value the study found, bit for bit."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from harness.results import read_table
from harness.stages.prepared import Selection
from harness.stages.run import run_case

from .conftest import CASES, ROOT

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def findings(tmp_path_factory):
    out = tmp_path_factory.mktemp("repro")
    sel = Selection(
        backends=["tensorflow"],
        dtypes=["float32"],
        methods=["reverse", "forward", "finite_difference"],
        modes=["eager", "function", "xla"],
        orders=[1, 2],
        max_points=24,
    )
    run_case(CASES / "softplus.yaml", selection=sel, results=out)
    return read_table(out / "softplus" / "findings.parquet")


def _picked(findings):
    """A few findings, one per (method, mode) of their worst point, with a number."""
    seen, out = set(), []
    for f in findings.itertuples(index=False):
        key = (f.worst_method, f.worst_mode)
        if key in seen or not f.snippet or not math.isfinite(f.worst_got):
            continue
        seen.add(key)
        out.append(f)
    return out[:4]


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def test_snippets_are_plain_tensorflow_and_give_the_same_value(findings, tmp_path):
    picked = _picked(findings)
    assert len(picked) >= 3, findings[["worst_method", "worst_mode"]]
    for i, f in enumerate(picked):
        code = [ln for ln in f.snippet.splitlines() if not ln.lstrip().startswith("#")]
        assert not any("harness" in ln for ln in code)
        assert "import tensorflow as tf" in f.snippet
        path = tmp_path / f"snippet{i}.py"
        path.write_text(f.snippet)
        out = subprocess.run(
            [sys.executable, str(path)], capture_output=True, text=True, cwd=tmp_path, timeout=300
        )
        assert out.returncode == 0, out.stderr[-2000:]
        got = float(out.stdout.strip().splitlines()[-1])
        assert _same(got, f.worst_got), (f.text, got, f.worst_got)


def test_the_probe_command_gives_the_same_value_and_outcome(findings):
    f = next(x for x in findings.itertuples(index=False) if x.outcome == "nan" and x.worst_method)
    args = f.probe.split()[2:]  # after "harness probe"
    out = subprocess.run(
        [sys.executable, "-m", "harness", "probe", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    lines = dict(
        line.strip().split(None, 1) for line in out.stdout.splitlines()[1:] if line.strip()
    )
    assert _same(float(lines["got"].split()[0]), f.worst_got)
    assert lines["outcome"].split()[0] == "nan"


def test_a_compiled_snippet_computes_every_partial_of_the_run_as_the_harness_does(tmp_path):
    # In xla mode the compiler rewrites a graph as a whole: the same chain, traced alone
    # or beside the run's other partials (and returning them), rounds differently here
    # (logistic's exponential form: 1.05e-4 alone, 4.28e-4 in the run; truth -2.2e-7).
    import numpy as np

    from harness.backends.tensorflow.build import build_implementation
    from harness.backends.tensorflow.evaluate import EvaluationStats, Runner
    from harness.backends.tensorflow.repro import snippet
    from harness.backends.tensorflow.tfimport import start, tf
    from harness.cases.load import load_case

    case = load_case(CASES / "logistic.yaml")
    point = {"t": 2453.751220703125, "r": 0.009999999776482582, "y0": 0.5}
    run = [("r",), ("t",), ("y0",), ("r", "r"), ("r", "y0"), ("t", "t"), ("y0", "y0")]
    run += [("t", "t", "t"), ("t", "t", "t", "t")]
    batch, index = 244, 216
    start()
    names = list(case.input_names)
    fn = build_implementation(
        case.implementation("exponential_form"), names, tf.float32, case.functions
    )
    xs = {n: tf.constant([point[n]] * batch, dtype=tf.float32) for n in names}
    runner = Runner("reverse", "xla", "float32", xs, EvaluationStats(), case.label)
    harness_value = float(np.asarray(runner.run({"x": fn}, run)["x"][("r", "y0")])[index])
    text = snippet(
        case,
        "exponential_form",
        point,
        ("r", "y0"),
        "reverse",
        "xla",
        "float32",
        batch,
        index,
        run,
    )
    path = tmp_path / "snippet.py"
    path.write_text(text)
    out = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, cwd=tmp_path, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert _same(float(out.stdout.strip().splitlines()[-1]), harness_value)


def test_a_registered_implementation_is_written_out_with_what_it_uses():
    import ast

    from harness.registered.catalogue import source as registered_source

    source, factory = registered_source("logistic_rk4")
    tree = ast.parse(source)  # standalone code: it parses
    defined = {n.name if isinstance(n, ast.FunctionDef) else n.targets[0].id for n in tree.body}
    # What builtin_implementations.py's RK4 factory reaches, read by hand: not the march,
    # Newton's method or the other factories.
    assert defined == {"RK4_STEPS", "_logistic_rhs", "_rk4_step", "_rk4_solution", "_logistic_rk4"}
    assert factory == "_logistic_rk4"
    assert "@implementation" not in source and "harness" not in source


def test_a_registered_implementations_snippet_gives_the_exact_value(tmp_path):
    # Seed 000's hand-written division at a = b = 2**-10: d(-a/b)/db = a/b**2, every
    # step exact in float32, so the value is 1024 (Fraction arithmetic, not the harness).
    from fractions import Fraction

    a = b = Fraction(1, 1024)
    want = float(-(-a / b**2))  # the case's function is -a/b
    point = ["--at", f"a={float(a)!r}", f"b={float(b)!r}", "--partial", "b"]
    common = [*point, "--method", "reverse", "--mode", "function", "--dtype", "float32"]
    common += ["--batch", "8", "--index", "7", "--max-order", "1"]
    cmd = [sys.executable, "-m", "harness", "probe", str(CASES / "ratio.yaml"), "seed_newdiv"]
    text = subprocess.run(
        [*cmd, *common, "--snippet"], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert text.returncode == 0, text.stderr[-2000:]
    code = [ln for ln in text.stdout.splitlines() if not ln.lstrip().startswith("#")]
    assert not any("harness" in ln for ln in code)
    path = tmp_path / "snippet.py"
    path.write_text(text.stdout)
    out = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, cwd=tmp_path, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert float(out.stdout.strip().splitlines()[-1]) == want == 1024.0
    probed = subprocess.run([*cmd, *common], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert probed.returncode == 0, probed.stderr[-2000:]
    got = next(ln for ln in probed.stdout.splitlines() if ln.strip().startswith("got"))
    assert float(got.split()[1]) == want
