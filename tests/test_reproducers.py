"""Root causes end to end in the three frameworks: each carries a standalone script per
framework it affects, which, run as its own process, prints the value the table states,
bit for bit; ``harness repro --check`` runs them all; ``harness bug-report`` prints one;
``harness probe --backend`` computes a value in any framework and refuses, in one line, a
method or mode that framework does not have."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

from harness.causes.audit import audit
from harness.causes.reproduce import reproducers
from harness.causes.study import write_root_causes
from harness.config import load_config
from harness.results import read_table, write_table
from harness.stages.collect import collect
from harness.stages.prepared import Selection
from harness.stages.run import run_case

from .conftest import CASES, write_case

pytestmark = pytest.mark.slow

BACKENDS = ("tensorflow", "jax", "torch")


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    where = tmp_path_factory.mktemp("causes")
    sel = Selection(
        backends=list(BACKENDS),
        dtypes=["float32"],
        methods=["reverse", "forward"],
        modes=["eager"],
        max_points=40,
    )
    for case in ("softplus", "composition"):
        run_case(CASES / f"{case}.yaml", selection=sel, results=where / "results")
    results = where / "results"
    summary, findings, meta = collect(sorted(results.glob("*/errors.parquet")))
    write_table(summary, results / "summary.parquet", meta)
    findings, _ = write_root_causes(findings, results, meta)
    write_table(findings, results / "findings.parquet", meta)
    roots = read_table(results / "root_causes.parquet")
    tables = {}
    for b in BACKENDS:
        tables[b] = reproducers(roots, findings, b, CASES, load_config().tolerances)
        write_table(tables[b], results / "reproducers" / f"{b}.parquet", meta)
    return where, roots, findings, tables


def test_each_finding_has_one_root_cause_and_the_kernel_of_softplus_is_one(study):
    _, roots, findings, _ = study
    members = [m for f in roots["findings"] for m in json.loads(f)]
    assert len(members) == len(set(members))
    open_findings = findings[findings["kind"] != "unsupported"]
    assert sorted(members) == sorted(
        f"{c}:{i}" for c, i in zip(open_findings.case, open_findings.id)
    )
    softplus = roots[roots["id"] == "kernel:softplus:wrong"]
    assert len(softplus) == 1
    # Every statement of the three frameworks' root causes holds against its evidence.
    assert audit(roots, findings) == []
    # One mechanism in the three frameworks: the rule s(1 - s) of sigmoid' from the output.
    assert softplus.iloc[0]["frameworks"] == "tensorflow, jax, torch"


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_sample_of_scripts_prints_the_stated_values_bit_for_bit(study, backend):
    _, _, _, tables = study
    table = tables[backend]
    scripts = table[table["script"] != ""]
    assert len(scripts) >= 3
    # The kernel scripts first (the smallest reproducers), then others, three in all.
    sample = scripts.sort_values("target", key=lambda t: ~t.str.startswith("primitive")).head(3)
    for r in sample.itertuples(index=False):
        out = subprocess.run(
            [sys.executable, "-c", r.script], capture_output=True, text=True, timeout=600
        )
        assert out.returncode == 0, out.stderr[-2000:]
        line = next(x for x in out.stdout.splitlines() if x.startswith("got"))
        assert line.split()[2] == r.got_hex, (r.root_cause, line, r.got_hex)
        assert "harness" not in r.script.replace("harness probe", "")


def test_repro_check_and_the_bug_report(study, harness_cmd):
    where, roots, _, _ = study
    results = str(where / "results")
    out = subprocess.run(
        [*harness_cmd, "repro", "--check", "--backend", "torch", "--results", results],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 disagree" in out.stdout
    report = subprocess.run(
        [*harness_cmd, "bug-report", "kernel:softplus:wrong", "--results", results],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert report.returncode == 0, report.stderr
    text = report.stdout
    for needle in ("## ", "softplus", "float32", "```python", "certified", "harness probe"):
        assert needle in text, needle
    for title in ("TensorFlow", "JAX", "PyTorch"):
        assert f"### Reproducer ({title}" in text
    unknown = subprocess.run(
        [*harness_cmd, "bug-report", "kernel:nothing", "--results", results],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert unknown.returncode == 2 and unknown.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("backend", "option", "value"),
    [
        ("tensorflow", "--method", "taylor"),
        ("tensorflow", "--mode", "jit"),
        ("torch", "--mode", "xla"),
    ],
)
def test_probe_refuses_what_a_backend_does_not_have_in_one_line(
    harness_cmd, backend, option, value
):
    argv = ["probe", str(CASES / "softplus.yaml"), "builtin", "--at", "x=20", option, value]
    out = subprocess.run(
        [*harness_cmd, *argv, "--backend", backend], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.count("\n") == 1 and f"no {option[2:]} {value!r}" in out.stderr


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_probe_computes_in_any_backend(harness_cmd, backend):
    argv = ["probe", str(CASES / "softplus.yaml"), "builtin", "--at", "x=20", "--partial", "xx"]
    out = subprocess.run(
        [*harness_cmd, *argv, "--dtype", "float32", "--backend", backend],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    # softplus''(20) in float32: s(1 - s) with s = sigmoid(20) rounded to 1.
    assert "got      0.0" in out.stdout and "outcome  zero" in out.stdout


@pytest.mark.parametrize("backend", ["jax", "torch"])
@pytest.mark.parametrize(
    ("x", "partial", "published"), [(1.0, "x", 0.7310586), (1.0, "xx", -1.7182817)]
)
def test_a_nested_rule_has_a_script_in_jax_and_pytorch_with_the_seeds_values(
    backend, x, partial, published
):
    # Seed 004 prints, for its nested rule (first order 1 - 1/(1 + e^x), second order
    # ddy * (1 - e^x)) at x = 1 in float32: 0.7310586 and -1.7182817 (= 1 - e).
    import importlib

    from harness.backends.snippet import script
    from harness.cases.load import load_case

    case = load_case(CASES / "nested_softplus.yaml")
    module = importlib.import_module(f"harness.backends.{backend}.snippet")
    written = module.write(case, "seed004_rule", ["x"])
    assert written is not None
    text = script(
        module.STYLE,
        written[0],
        ["x"],
        {"x": x},
        tuple(partial),
        "reverse",
        "eager",
        "float32",
        "seed 004",
        "0",
    )
    out = subprocess.run([sys.executable, "-c", text], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-500:]
    got = float(next(line for line in out.stdout.splitlines() if line.startswith("got")).split()[1])
    assert f"{got:.8g}" == f"{published:.8g}"
    # TensorFlow's decorated gradient function (issue #34503) has no place in either.
    assert module.write(case, "decorated_grad_fn", ["x"]) is None


def _script_value(backend, case_name, implementation, point, partial, dtype, method="reverse"):
    import importlib

    from harness.backends.snippet import script
    from harness.cases.load import load_case

    case = load_case(CASES / f"{case_name}.yaml")
    module = importlib.import_module(f"harness.backends.{backend}.snippet")
    names = list(case.input_names)
    written = module.write(case, implementation, names)
    if written is None:
        return None
    text = script(module.STYLE, written[0], names, point, partial, method, "eager", dtype, "t", "0")
    out = subprocess.run([sys.executable, "-c", text], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-500:]
    return float(
        next(line for line in out.stdout.splitlines() if line.startswith("got")).split()[1]
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_registered_implementation_has_a_script_where_it_has_a_port(backend):
    import mpmath

    # Seed 000's newDiv, TensorFlow only: d/db of -a/b by its rule (a/b)/b, 0.5 at a = b = 2.
    newdiv = _script_value(backend, "ratio", "seed_newdiv", {"a": 2.0, "b": 2.0}, ("b",), "float32")
    assert newdiv == (0.5 if backend == "tensorflow" else None)
    # The RK4 logistic solution (ported to all three): d/dt at t = 5, r = 1, y0 = 0.001 is
    # y (1 - y) of the exact solution y = 1 / (1 + 999 e^-5) to RK4's accuracy.
    point = {"t": 5.0, "r": 1.0, "y0": 0.001}
    got = _script_value(backend, "logistic_rk4", "rk4", point, ("t",), "float64")
    y = 1 / (1 + 999 * mpmath.exp(-5))
    assert abs(got / float(y * (1 - y)) - 1) < 1e-6


def _forward_script_value(backend, implementation, x, order):
    point, partial = {"x": x}, ("x",) * order
    return _script_value(
        backend, "log1pexp_jvp", implementation, point, partial, "float32", "forward"
    )


def test_a_forward_rule_has_a_script_in_jax_and_pytorch_and_none_in_tensorflow():
    """The scripts write the rule as the framework's own forward rule (``jax.custom_jvp``,
    ``autograd.Function.jvp``). JAX's tutorial: with the custom_jvp rule, log1pexp's
    derivative at x = 100 is 1.0 in float32. The second derivative at x = 1 is
    s(1 - s), s = sigmoid(1), in JAX; PyTorch 2.13's nested jvp gives 0 through the
    Function (pytorch/pytorch#197867)."""
    import importlib

    import mpmath

    from harness.cases.load import load_case

    assert _forward_script_value("jax", "doc_custom_jvp", 100.0, 1) == 1.0
    assert _forward_script_value("torch", "doc_custom_jvp", 100.0, 1) == 1.0
    s = 1 / (1 + mpmath.exp(-1))
    second = _forward_script_value("jax", "stable_custom_jvp", 1.0, 2)
    assert abs(second - float(s * (1 - s))) < 1e-6
    assert _forward_script_value("torch", "stable_custom_jvp", 1.0, 2) == 0.0
    tf_snippet = importlib.import_module("harness.backends.tensorflow.snippet")
    case = load_case(CASES / "log1pexp_jvp.yaml")
    assert tf_snippet.write(case, "doc_custom_jvp", ["x"]) is None


def test_a_kernels_script_runs_in_the_dtype_its_culprit_was_judged_in():
    # kernel:pow:wrong in the quick census: PyTorch's culprit, pow(u, v) d/duu at
    # u = 2**-149, v = -0 in float32 (NaN: 0 * u**-2, which overflows, where the truth is
    # exactly 0), came from a float32 member; the worst member was float64, where the
    # same input is a normal number and the value 0 is right.
    culprit = {
        "primitive": "pow(u, v)",
        "partial": "uu",
        "outcome": "nan",
        "inputs": {"u": 2.0**-149, "v": -0.0},
        "got": float("nan"),
        "truth": "0.0",
        "method": "reverse",
        "mode": "eager",
        "case": "census_pow_grid",
        "implementation": "kernel",
        "dtype": "float32",
    }
    roots = pd.DataFrame(
        [
            {
                "id": "kernel:pow:wrong",
                "kind": "kernel",
                "frameworks": "torch",
                "culprit": json.dumps({"torch": culprit}),
            }
        ]
    )
    member = {
        "root_cause": "kernel:pow:wrong",
        "backend": "torch",
        "case": "census_pow_grid",
        "implementation": "kernel",
        "partial": "xx",
        "order": 2,
        "dtype": "float64",
        "methods": "reverse",
        "worst_method": "reverse",
        "worst_mode": "eager",
        "worst_inputs": json.dumps({"x": 1.0, "y": 2.0}),
        "worst_truth": "2.0",
        "impact": 3,
        "severity": 4,
        "hits": 1,
    }
    table = reproducers(
        roots, pd.DataFrame([member]), "torch", "census/cases", load_config().tolerances
    )
    row = table.iloc[0]
    assert (row["dtype"], row["derivative"], row["method"]) == ("float32", "uu", "reverse")
    assert row["got_hex"] == "nan" and bool(row["reproduces"])


def test_a_tensorflow_script_takes_the_kernels_vectorised_path_as_a_batch_does():
    """Eigen evaluates whole packets (8 float32s with AVX2) by another code path than one
    element: asinh's derivative at -8.06e34 under tf.function is 1.2404404e-35 in a batch
    (what the quick census judged) and 1.2405325e-35 alone, here. The script repeats its
    input and prints the first element, as the batch computed it."""
    import importlib

    import tensorflow as tf

    from harness.backends.snippet import script
    from harness.cases import expressions as ex

    x = float.fromhex("-0x1.f0ccd4p+115")
    module = importlib.import_module("harness.backends.tensorflow.snippet")
    blocks, _ = module.write(None, None, ["x"], ex.parse("asinh(x)", {"x"}))
    text = script(
        module.STYLE, blocks, ["x"], {"x": x}, ("x",), "forward", "function", "float32", "t", "0"
    )
    out = subprocess.run([sys.executable, "-c", text], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-500:]
    got = next(line for line in out.stdout.splitlines() if line.startswith("got")).split()[2]

    def derivative(v):
        with tf.autodiff.ForwardAccumulator(v, tf.ones_like(v)) as acc:
            y = tf.math.asinh(v)
        return acc.jvp(y)

    batch = tf.function(derivative, autograph=False)(tf.fill([256], tf.constant(x, tf.float32)))
    assert got == float(batch[0]).hex()


def test_a_script_batch_is_mixed_as_the_harness_batch_is(tmp_path):
    """TensorFlow's XLA gives another value when every element of the batch is the same:
    d2/du2 of u ** 2.5 at the float32 subnormal u = 5.9e-42 by nested forward mode is
    0.0 for 64 copies of the point and 9.93e-23 beside any other value (the truth is
    9.1e-21). The harness's batch holds the case's other points; the script's holds the
    point and ones, and prints the harness's value bit for bit. So do the finding's
    ``harness probe`` command and its script, with the run's batch and index (the point
    at its index, ones elsewhere)."""
    import importlib

    from harness.backends.snippet import script
    from harness.cases.load import load_case

    u = 5.914880817915053e-42
    (tmp_path / "cases").mkdir()
    path = write_case(
        tmp_path / "cases",
        "pow25",
        f"""\
        title: a real power at a subnormal
        source: test
        inputs:
          u: {{values: [{u!r}, 1.5, 2.0]}}
        function: u ** 2.5
        derivatives: {{partials: [u, uu]}}
        implementations:
          kernel: {{expression: "u ** 2.5"}}
        dtypes: [float32]
        modes: [xla]
        """,
    )
    # The harness in a process of its own: it starts TensorFlow itself (one thread), and
    # another test of this process may have started it already.
    run = f"""
import numpy as np
from harness.stages.prepared import Selection
from harness.stages.run import run_case
sel = Selection(backends=["tensorflow"], dtypes=["float32"], methods=["forward"], modes=["xla"])
errors = run_case({str(path)!r}, selection=sel, results={str(tmp_path / "results")!r})
row = errors[(errors.u == float(np.float32({u!r}))) & (errors.partial == "uu")]
assert len(row) == 1
import json
from harness.results import read_table
findings = read_table({str(tmp_path / "results" / "pow25" / "findings.parquet")!r})
found = findings[(findings.partial == "uu") & (findings.outcome == "wrong")]
assert len(found) == 1, len(found)
print(json.dumps({{"probe": found.probe.iloc[0], "snippet": found.snippet.iloc[0]}}))
print(float(row.value.iloc[0]).hex())
"""
    done = subprocess.run([sys.executable, "-c", run], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-1000:]
    harness_value = float.fromhex(done.stdout.split()[-1])
    assert harness_value != 0.0  # what 64 copies of the point give
    finding = json.loads(done.stdout.splitlines()[-2])
    # The finding's probe command (the run's batch of 3 and index), run as a user would.
    command = finding["probe"].split()
    assert command[:2] == ["harness", "probe"] and "--batch" in command
    probed = subprocess.run([sys.executable, "-m", "harness", *command[1:]], cwd=tmp_path,
                            capture_output=True, text=True)  # fmt: skip
    assert probed.returncode == 0, probed.stderr[-1000:]
    got = next(line for line in probed.stdout.splitlines() if line.strip().startswith("got"))
    assert float(got.split()[1]).hex() == harness_value.hex()
    # The finding's own script (plain TensorFlow, the same batch and index).
    out = subprocess.run([sys.executable, "-c", finding["snippet"]], capture_output=True,
                         text=True)  # fmt: skip
    assert out.returncode == 0, out.stderr[-500:]
    assert float(out.stdout.split()[-1]).hex() == harness_value.hex()
    module = importlib.import_module("harness.backends.tensorflow.snippet")
    blocks, _ = module.write(load_case(path), "kernel", ["u"])
    text = script(module.STYLE, blocks, ["u"], {"u": u}, ("u", "u"), "forward", "xla",
                  "float32", "t", "0")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", text], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-500:]
    got = next(line for line in out.stdout.splitlines() if line.startswith("got")).split()[2]
    assert got == harness_value.hex()


def test_a_tensorflow_script_watches_every_input_as_the_harness_does(tmp_path):
    """An op's gradient function in TensorFlow computes the gradient of every watched
    input: tf.pow's, for the exponent, compares the base with 0, and under tf.function
    inside two nested ForwardAccumulators that comparison's record raised IndexError
    (TensorFlow 2.21). The harness's tapes watch every input; so do the scripts', and
    the script does what the harness did: the same exception, or the same value."""
    import importlib

    from harness.backends.snippet import script
    from harness.cases.load import load_case

    path = write_case(
        tmp_path,
        "powxy",
        """\
        title: a real power, base and exponent both variables
        source: test
        inputs:
          x: {values: [1.5, 2.0]}
          y: {values: [1.25]}
        function: pow(x, y)
        derivatives: {partials: [x, xx, xxx]}
        implementations:
          kernel: {expression: "pow(x, y)"}
        dtypes: [float64]
        modes: [function]
        """,
    )
    run = f"""
from harness.stages.prepared import Selection
from harness.stages.run import run_case
sel = Selection(backends=["tensorflow"], dtypes=["float64"], methods=["forward_over_reverse"],
                modes=["function"])
errors = run_case({str(path)!r}, selection=sel, results={str(tmp_path / "results")!r})
row = errors[(errors.x == 1.5) & (errors.partial == "xxx")]
assert len(row) == 1
print(row.outcome.iloc[0], repr(str(row.message.iloc[0]).splitlines()[0] if row.outcome.iloc[0] == "error" else float(row.value.iloc[0]).hex()))
"""
    done = subprocess.run([sys.executable, "-c", run], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-1000:]
    outcome, said = done.stdout.splitlines()[-1].split(" ", 1)
    module = importlib.import_module("harness.backends.tensorflow.snippet")
    blocks, _ = module.write(load_case(path), "kernel", ["x", "y"])
    text = script(module.STYLE, blocks, ["x", "y"], {"x": 1.5, "y": 1.25}, ("x", "x", "x"),
                  "forward_over_reverse", "function", "float64", "t", "0")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", text], capture_output=True, text=True)
    if outcome == "error":
        # The harness's words end with the framework's: "...: IndexError: list index ...".
        assert out.returncode != 0, out.stdout[-500:]
        assert said.strip("'").endswith(out.stderr.strip().splitlines()[-1])
    else:
        assert out.returncode == 0, out.stderr[-500:]
        got = next(line for line in out.stdout.splitlines() if line.startswith("got")).split()[2]
        assert got == said.strip("'")


def test_a_jax_taylor_script_computes_the_series_the_harness_computes(tmp_path):
    """XLA compiles a jet's whole series as one program, and a term can round differently
    with the series' length: d³/dx³ of jax.scipy.special.logsumexp(x, x) at -6.2e280 under
    jax.jit is -7.4e-32 with the series to order 4 (as the case asks and the harness
    computes) and 0.0 to order 3 alone. The script computes the case's series."""
    import importlib

    from harness.backends.snippet import script
    from harness.cases.load import load_case

    x = -6.245175554611726e280
    path = write_case(
        tmp_path,
        "lse",
        f"""\
        title: logsumexp on its diagonal
        source: test
        inputs:
          x: {{values: [{x!r}, -1.5, 2.0]}}
          y: {{tie: x}}
        function: logsumexp(x, y)
        derivatives: {{partials: [x, xx, xxx, xxxx]}}
        implementations:
          kernel: {{expression: "logsumexp(x, y)"}}
        dtypes: [float64]
        modes: [jit]
        """,
    )
    sel = Selection(backends=["jax"], dtypes=["float64"], methods=["taylor"], modes=["jit"])
    errors = run_case(path, selection=sel, results=tmp_path / "results")
    row = errors[(errors.x == x) & (errors.partial == "xxx")]
    assert len(row) == 1
    harness_value = float(row.value.iloc[0])
    case = load_case(path)
    module = importlib.import_module("harness.backends.jax.snippet")
    blocks, _ = module.write(case, "kernel", ["x", "y"])
    text = script(
        module.STYLE, blocks, ["x", "y"], {"x": x, "y": x}, ("x",) * 3, "taylor", "jit",
        "float64", "t", "0", 4,
    )  # fmt: skip
    out = subprocess.run([sys.executable, "-c", text], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-500:]
    got = next(line for line in out.stdout.splitlines() if line.startswith("got")).split()[2]
    assert got == harness_value.hex()
    # `harness probe --snippet` writes the same series: the partials the run computes
    # beside the probed one (here to order 4) set its length, not the probed order.
    probe = [sys.executable, "-m", "harness", "probe", str(path), "kernel", "--backend", "jax",
             "--at", f"x={x!r}", f"y={x!r}", "--partial", "xxx", "--method", "taylor",
             "--mode", "jit", "--dtype", "float64", "--snippet"]  # fmt: skip
    text = subprocess.run(probe, capture_output=True, text=True, timeout=300)
    assert text.returncode == 0, text.stderr[-500:]
    assert "taylor(f, 0, 4)" in text.stdout
    out = subprocess.run([sys.executable, "-c", text.stdout], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-500:]
    got = next(line for line in out.stdout.splitlines() if line.startswith("got")).split()[2]
    assert got == harness_value.hex()


def test_a_script_that_kills_its_process_is_its_own_result_not_the_stage_s_end():
    """PyTorch 2.13's torch.compile of a third-order jvp of softplus in float16 is a
    segmentation fault: run in the stage's own process, it ended `harness repro --backend
    torch` with nothing written. The scripts now run in a child process: a script that
    raises or dies is that script's result, and the next runs in a new process."""
    import os
    import signal

    from harness.causes.script_worker import ScriptFailed, ScriptWorker

    worker = ScriptWorker()
    try:
        assert (
            worker.run('print("got  ", 1.5, (1.5).hex())', "a") == "got   1.5 0x1.8000000000000p+0"
        )
        first = worker.proc.pid
        with pytest.raises(ScriptFailed, match=r"^ValueError: bad$"):
            worker.run('raise ValueError("bad\\nsecond line")', "b")
        assert worker.proc.pid == first  # an exception leaves the process as it is
        kill = "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)"
        with pytest.raises(ScriptFailed, match=r"process died: signal 11 \(SIGSEGV\)"):
            worker.run(kill, "c")
        assert worker.proc is None
        # A signal with no name of its own (SIGRTMIN + 6) is told by its number.
        rt = "import os, signal\nos.kill(os.getpid(), signal.SIGRTMIN + 6)"
        number = signal.SIGRTMIN + 6
        with pytest.raises(ScriptFailed, match=rf"process died: signal {number} \(unnamed\)$"):
            worker.run(rt, "e")
        # What the framework writes to stdout does not mix with the answers.
        text = "import os\nos.write(1, b'noise\\n')\nprint('got  ', 2.0, '0x1p+1')"
        assert worker.run(text, "d") == "got   2.0 0x1p+1"
        assert worker.proc.pid not in (first, os.getpid())
    finally:
        worker.close()
