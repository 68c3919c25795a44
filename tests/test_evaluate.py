"""TensorFlow evaluation through the harness: methods, modes, missing, errors, traps.

Each test writes a small case file and runs it in this process (TensorFlow starts once
for the module).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from harness.config import load_config
from harness.registered import catalogue as registry
from harness.registered import register
from harness.results import read_metadata
from harness.stages.prepared import Selection
from harness.stages.run import run_case

from .conftest import write_case

pytestmark = pytest.mark.slow


FULL = load_config(overrides={"setting": "full"})


def _run(path, tmp_path, setting=FULL, **selection):
    """Run a case in the ``full`` setting (these tests are about evaluation, not quick)."""
    return run_case(
        path,
        setting,
        Selection(**{"backends": ["tensorflow"], **selection}),
        results=tmp_path / "results",
    )


def test_every_method_and_mode_agrees_on_a_polynomial(tmp_path):
    path = write_case(
        tmp_path,
        "poly",
        """\
        title: a cubic
        source: test
        inputs:
          x: {values: [-1.5, 0.25, 3.0]}
        function: x**3 - 2*x
        derivatives: {wrt: x, orders: [1, 2, 3, 4]}
        implementations:
          plain: {expression: x**3 - 2*x}
          factored: {expression: x*(x*x - 2)}
        dtypes: [float64]
        """,
    )
    errors = _run(path, tmp_path)
    exact = errors[errors.method != "finite_difference"]
    assert len(exact) == 2 * 3 * 3 * 5 * 3  # impl x method x mode x orders 0-4 x points
    low = exact[exact.order <= 3]
    assert set(low.outcome) == {"ok"}, low[low.outcome != "ok"]
    # Order 4 of a cubic is 0. TF 2.21 gives it, or no gradient at all when the third
    # derivative is a constant disconnected from x (x*(x*x - 2) by reverse mode), or
    # raises: four nested ForwardAccumulators over x**3 fail inside TensorFlow. The
    # harness must record each as such, never as a number.
    fourth = exact[exact.order == 4]
    assert set(fourth.outcome) <= {"ok", "missing", "error"}
    assert set(
        fourth[(fourth.implementation == "plain") & (fourth.method == "reverse")].outcome
    ) == {"ok"}
    assert set(
        fourth[(fourth.implementation == "factored") & (fourth.method == "reverse")].outcome
    ) == {"missing"}
    crashed = fourth[(fourth.implementation == "plain") & (fourth.method == "forward")]
    assert set(crashed.outcome) == {"error"} and crashed.message.str.len().gt(0).all()
    # The message says where: the method and its nesting, the order, dtype and mode.
    assert crashed.message.str.startswith(
        "forward (4 nested ForwardAccumulators), order 4 (xxxx), float64, "
    ).all()
    # After plain's call of every partial raised, each partial is computed alone but the
    # fourth order, whose chain is that very call (seconds a call in the eager mode):
    # traced in the function mode, plain's failing call, its chains (), x, xx and xxx,
    # and factored's call; the xla mode compiles those graphs, tracing again only the
    # failing call, which left none.
    timings = tmp_path / "results" / "poly" / "tensorflow" / "float64.forward" / "timings.parquet"
    assert read_metadata(timings)["evaluation"]["python_traces"] == 1 + 4 + 1 + 1
    fd = errors[(errors.method == "finite_difference") & (errors.order <= 2)]
    assert (fd.rel_error < 1e-6).all()
    third = errors[(errors.partial == "xxx") & (errors.method == "reverse")]
    assert np.allclose(third.value, 6.0)


def test_a_custom_gradient_without_a_rule_is_missing_not_zero(tmp_path):
    path = write_case(
        tmp_path,
        "norule",
        """\
        title: no rule for b
        source: test
        inputs:
          a: {values: [1.0, 2.0]}
          b: {values: [3.0]}
        function: a*b
        derivatives: {partials: [a, b]}
        implementations:
          half_rule:
            expression: a*b
            gradient: {a: dy * b}
        dtypes: [float32]
        methods: [reverse]
        modes: [eager, function]
        """,
    )
    errors = _run(path, tmp_path)
    assert set(errors[errors.partial == "b"].outcome) == {"missing"}
    assert set(errors[errors.partial == "a"].outcome) == {"ok"}


def test_an_implementation_that_raises_is_isolated(tmp_path):
    name = "test_raises_on_order_two"
    if name not in registry.names():

        @register.implementation(name, inputs=("x",), description="raises in second order")
        def _factory(tf, dtype):
            @tf.custom_gradient
            def f(x):
                def grad(dy):
                    @tf.custom_gradient
                    def inner(x):
                        def second(ddy):
                            raise RuntimeError("deliberate failure in the second-order rule")

                        return 2 * x, second

                    return dy * inner(x)

                return x * x, grad

            return lambda x: f(x)

    path = write_case(
        tmp_path,
        "raises",
        f"""\
        title: isolation
        source: test
        inputs:
          x: {{values: [0.5, 2.0]}}
        function: x**2
        derivatives: {{wrt: x, orders: [1, 2]}}
        implementations:
          good: {{expression: x**2}}
          bad: {{registered: {name}}}
        dtypes: [float32]
        methods: [reverse]
        """,
    )
    errors = _run(path, tmp_path)
    bad = errors[errors.implementation == "bad"]
    assert set(bad[bad.order < 2].outcome) == {"ok"}
    second = bad[bad.order == 2]
    assert set(second.outcome) == {"error"}
    assert second.message.str.contains("deliberate failure").all()
    assert set(errors[errors.implementation == "good"].outcome) == {"ok"}


def test_an_operator_without_a_tensorflow_kernel_is_not_applicable_with_its_reason(tmp_path):
    """``mish`` has no kernel in TensorFlow (the operator table's ``NoKernel``): every
    row of an implementation calling it is ``not_applicable`` with the reason, in every
    method and mode, and its neighbour in the same case runs as usual."""
    path = write_case(
        tmp_path,
        "no_kernel",
        """\
        title: an operator TensorFlow lacks
        source: test
        inputs:
          x: {values: [-0.5, 0.75]}
        function: x * tanh(softplus(x))
        reference: {expression: mish(x)}
        derivatives: {wrt: x, orders: [1, 2]}
        implementations:
          kernel: {expression: mish(x)}
          formula: {expression: x * tanh(softplus(x))}
        dtypes: [float64]
        methods: [reverse, forward]
        """,
    )
    errors = _run(path, tmp_path)
    kernel = errors[errors.implementation == "kernel"]
    assert len(kernel) == 2 * 3 * 3 * 2  # 2 methods x (f, f', f'') x 3 modes x 2 points
    assert set(kernel.outcome) == {"not_applicable"}
    assert kernel.message.str.contains(
        "mish\\(\\) has no kernel here: TensorFlow has no mish"
    ).all()
    assert set(errors[errors.implementation == "formula"].outcome) == {"ok"}


def test_grappler_rewrites_the_naive_formula_under_tf_function(tmp_path):
    # log(1 + exp(-20)) in float32: 1 + 2e-9 rounds to 1, so the formula as written gives
    # 0; under tf.function Grappler rewrites log(1 + y) to log1p(y) and gets it right.
    path = write_case(
        tmp_path,
        "grappler",
        """\
        title: the log1p rewrite
        source: test
        inputs:
          x: {values: [-20.0]}
        function: log(1 + exp(x))
        reference: {expression: softplus(x)}
        derivatives: {wrt: x, orders: [1]}
        implementations:
          naive: {expression: log(1 + exp(x))}
        dtypes: [float32]
        methods: [reverse]
        """,
    )
    errors = _run(path, tmp_path)
    value = errors[errors.order == 0].set_index("mode")
    assert value.loc["eager", "outcome"] == "zero"
    assert value.loc["function", "outcome"] == "ok"
    assert value.loc["xla", "outcome"] == "zero"


def test_subnormal_inputs_are_marked(tmp_path):
    path = write_case(
        tmp_path,
        "tiny",
        """\
        title: subnormal inputs
        source: test
        inputs:
          x: {values: [1e-40, 1e-30]}
        function: 2*x
        derivatives: {wrt: x, orders: [1]}
        implementations:
          twice: {expression: 2*x}
        dtypes: [float32, float64]
        methods: [reverse]
        modes: [eager]
        """,
    )
    errors = _run(path, tmp_path)
    assert bool(errors[(errors.dtype == "float32") & (errors.x < 1e-35)].subnormal.all())
    assert not errors[(errors.dtype == "float32") & (errors.x > 1e-35)].subnormal.any()
    assert not errors[errors.dtype == "float64"].subnormal.any()


def test_each_function_is_traced_once_per_dtype_and_xla_reuses_the_graph(tmp_path):
    from harness.stages.evaluate import evaluate_stage
    from harness.stages.prepared import prepare
    from harness.stages.reference import reference_stage

    path = write_case(
        tmp_path,
        "traced",
        """\
        title: tracing count
        source: test
        inputs:
          x: {log: {from: 0.1, to: 10, count: 7}}
        function: exp(x)*x
        derivatives: {wrt: x, orders: [1, 2, 3]}
        implementations:
          one: {expression: exp(x)*x}
          two: {expression: x*exp(x)}
        dtypes: [float32, float64]
        methods: [reverse, finite_difference]
        modes: [function, xla]
        """,
    )
    prep = prepare(path)
    reference = reference_stage(prep, tmp_path / "results")
    evaluate_stage(prep, tmp_path / "results", reference=reference)
    stats = read_metadata(
        tmp_path / "results" / "traced" / "tensorflow" / "all" / "timings.parquet"
    )["evaluation"]
    # One trace of the Python per (implementation, method, dtype), all orders in it (an
    # implementation's graph holds no other: compilers rewrite a graph as a whole); the
    # xla mode compiles the graph the function mode traced.
    assert stats["python_traces"] == 2 * 2 * 2
    assert stats["calls"] == 2 * 2 * 2 * 2
    assert stats["fallbacks"] == 0


def test_nested_custom_gradient_expresses_a_second_order_rule(tmp_path):
    # Seed 004: first order 1 - 1/(1 + e), second order deliberately ddy * (1 - e).
    # Published (float32): x=1 -> 0.7310586, -1.7182817; x=100 -> 1.0, -inf.
    path = write_case(
        tmp_path,
        "nested",
        """\
        title: nested second-order rule
        source: seeds/004
        inputs:
          x: {values: [1.0, 100.0]}
        function: log(1 + exp(x))
        reference: {expression: softplus(x)}
        derivatives: {wrt: x, orders: [1, 2]}
        implementations:
          seed004:
            expression: log(1 + exp(x))
            gradient:
              x:
                expression: 1 - 1/(1 + exp(x))
                gradient:
                  x: dy * (1 - exp(x))
        dtypes: [float32]
        methods: [reverse]
        """,
    )
    errors = _run(path, tmp_path)
    for mode in ("eager", "function"):
        e = errors[errors["mode"] == mode].set_index(["x", "partial"])
        assert e.loc[(1.0, "x"), "value"] == np.float32(0.7310586)
        assert e.loc[(1.0, "xx"), "value"] == np.float32(-1.7182817)
        assert e.loc[(100.0, "x"), "value"] == 1.0
        assert e.loc[(100.0, "xx"), "value"] == -np.inf
        # The rule is not the derivative: the harness says so against 0.19661193.
        assert e.loc[(1.0, "xx"), "outcome"] == "wrong"
        assert e.loc[(1.0, "xx"), "reference"].startswith("0.196611933")


def test_mixed_partials_by_every_method_in_separate_chains(tmp_path):
    from harness.backends.tensorflow.derivatives import leaves

    assert leaves([(), ("b",), ("b", "b"), ("a", "b"), ("a",)]) == [("a", "b"), ("b", "b")]
    path = write_case(
        tmp_path,
        "mixed",
        """\
        title: mixed partials
        source: test
        inputs:
          a: {values: [1.5, -2.0]}
          b: {values: [0.5, 3.0]}
        function: a**2 * b**3
        derivatives: {partials: [b, bb, bbb, ab, abb, aab]}
        implementations:
          poly: {expression: a**2 * b**3}
        dtypes: [float64]
        methods: [reverse, forward, forward_over_reverse]
        modes: [eager, function]
        """,
    )
    errors = _run(path, tmp_path)
    a, b = errors.a, errors.b
    exact = {
        "b": 3 * a**2 * b**2,
        "bb": 6 * a**2 * b,
        "bbb": 6 * a**2,
        "ab": 6 * a * b**2,
        "abb": 12 * a * b,
        "aab": 6 * b**2,
    }
    for partial, want in exact.items():
        rows = errors.partial == partial
        assert np.allclose(errors.value[rows], want[rows], rtol=1e-14), partial
    assert set(errors.outcome) == {"ok"}


def test_quick_setting_caps_forward_orders_and_narrows_dtypes(tmp_path):
    # The built-in defaults run the quick setting: float32 and float64, forward methods
    # to order 3; the case's own quick block narrows further (float64, forward to 2).
    path = write_case(
        tmp_path,
        "quick",
        """\
        title: a cubic, quick
        source: test
        inputs:
          x: {values: [-1.5, 3.0]}
        function: x**3 - 2*x
        derivatives: {wrt: x, orders: [1, 2, 3, 4]}
        implementations:
          plain: {expression: x**3 - 2*x}
        modes: [eager]
        quick:
          dtypes: [float64, float16]
          max_order: {forward: 2}
        """,
    )
    errors = _run(path, tmp_path, setting=load_config())
    top = errors.groupby("method")["order"].max().to_dict()
    assert top == {
        "forward": 2,
        "forward_over_reverse": 3,
        "reverse": 4,
        "finite_difference": 4,
    }
    assert set(errors["dtype"]) == {"float64"}  # float16 is not in the study's quick list
    exact = errors[errors.method != "finite_difference"]
    assert (exact["outcome"] == "ok").all()
    # The full setting: every dtype, and every method to order 4 (TensorFlow's nested
    # forward mode at order 4 costs about 18 s a dtype even here, so it runs in one).
    full = _run(path, tmp_path, methods=["reverse", "finite_difference"])
    assert full.groupby("method")["order"].max().eq(4).all()
    assert set(full["dtype"]) == {"float16", "bfloat16", "float32", "float64"}
    forward = _run(path, tmp_path, methods=["forward"], dtypes=["float64"])
    assert forward.groupby("method")["order"].max().to_dict() == {"forward": 4}


def test_finite_differences_are_judged_by_their_error_model(tmp_path):
    from .conftest import CASES

    # Smooth: softplus's own kernel, float64, orders 1-2, |x| in [1e-3, 30]. Judged at
    # the autodiff budget these were `inaccurate` almost everywhere.
    errors = run_case(
        CASES / "softplus.yaml",
        FULL,
        Selection(
            backends=["tensorflow"],
            dtypes=["float64"],
            methods=["finite_difference"],
            modes=["eager"],
            orders=[1, 2],
        ),
        results=tmp_path / "results",
    )
    smooth = errors[
        (errors.implementation == "builtin") & (errors.order > 0) & errors.x.abs().between(1e-3, 30)
    ]
    assert len(smooth) > 500
    assert (smooth.outcome == "ok").mean() >= 0.9
    assert set(smooth.tolerance_unit) == {"absolute"}
    assert smooth.tolerance_reason.str.startswith("finite difference at h = ").all()
    ulps_budget = np.array([16.0, 64.0])[smooth.order.to_numpy() - 1]
    assert (smooth.ulps.to_numpy(np.float64) > ulps_budget).mean() > 0.5  # model, not ulps

    # A kink inside the stencil: |x - 1| at 1 + 1e-9 (the step is 6e-6): the true slope
    # is 1, the central difference straddles the kink and gets ~1.7e-4. Its error model
    # (smooth on both sides: no curvature) does not excuse it.
    path = write_case(
        tmp_path,
        "kink",
        """\
        title: a kink inside the stencil
        source: test
        inputs:
          x: {values: [1.000000001, 3.0]}
        function: abs(x - 1)
        derivatives: {wrt: x, orders: [1]}
        implementations:
          plain: {expression: abs(x - 1)}
        dtypes: [float64]
        methods: [finite_difference, reverse]
        modes: [eager]
        """,
    )
    kink = _run(path, tmp_path).set_index(["method", "x"])
    fd = kink.loc[("finite_difference", 1.000000001)]
    fd = fd[fd.order == 1].iloc[0]
    assert fd.outcome == "wrong" and 0 < fd.value < 1e-3
    assert kink.loc[("finite_difference", 3.0)].query("order == 1").outcome.iloc[0] == "ok"
    assert kink.loc[("reverse", 1.000000001)].query("order == 1").outcome.iloc[0] == "ok"


def test_a_constant_implementation_is_broadcast_over_the_batch(tmp_path):
    path = write_case(
        tmp_path,
        "constant",
        """\
        title: constants
        source: test
        inputs:
          x: {values: [-1.0, 0.5, 2.0]}
        function: "2 + 0*x"
        derivatives: {wrt: x, orders: [1, 2]}
        implementations:
          two: {expression: "2"}
          huge: {expression: 9**9**9**9}
        dtypes: [float32]
        modes: [eager, function]
        """,
    )
    errors = _run(path, tmp_path)
    assert "error" not in set(errors.outcome)
    two = errors[errors.implementation == "two"]
    assert set(two[two.order == 0].outcome) == {"ok"}
    # The framework's answer for the derivative of a constant is no gradient at all;
    # finite differences of a constant are exactly 0, the truth.
    autodiff = two[(two.order > 0) & (two.method != "finite_difference")]
    assert set(autodiff.outcome) == {"missing"}
    assert set(two[(two.order > 0) & (two.method == "finite_difference")].outcome) == {"ok"}
    huge = errors[(errors.implementation == "huge") & (errors.order == 0)]
    assert np.isinf(huge.value).all() and set(huge.outcome) == {"inf"}


def test_tensorflow_runs_on_one_thread_from_the_harness_import_and_a_late_start_says_why():
    """Whatever runs TensorFlow first after the harness imported it (a helper, a test
    using TensorFlow directly) starts it on the one thread the evaluation needs; where
    TensorFlow ran before the harness was imported, ``start`` names the problem."""
    prelude = "import os; os.environ['TF_CPP_MIN_LOG_LEVEL'] = '3'\n"
    first = (
        "from harness.backends.tensorflow.tfimport import start, tf\n"
        "tf.constant([1.0]) + 1.0\n"
        "start()\n"
        "print(tf.config.threading.get_intra_op_parallelism_threads(),"
        " tf.config.threading.get_inter_op_parallelism_threads())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", prelude + first], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["1", "1"]
    late = (
        "import tensorflow as tf\n"
        "tf.constant([1.0]) + 1.0\n"
        "from harness.backends.tensorflow.tfimport import start\n"
        "start()\n"
    )
    failed = subprocess.run([sys.executable, "-c", prelude + late], capture_output=True, text=True)
    assert failed.returncode == 1
    assert "TensorFlow started before the harness could set its threads to 1" in failed.stderr


def test_the_flush_probe_agrees_with_another_operation():
    from harness.backends.tensorflow.facts import probe_flush
    from harness.backends.tensorflow.tfimport import tf  # one thread, as the harness runs it
    from harness.numerics.floats import FORMATS

    found = probe_flush(["float16", "bfloat16", "float32", "float64"], ["eager", "function"])
    for dtype, modes in found.items():
        fmt = FORMATS[dtype]
        x = tf.constant([fmt.smallest_normal / 4], dtype=dtype)
        # An addition, not the probe's multiplication: a subnormal read as 0 adds to 0.
        doubled = float(tf.add(x, x).numpy()[0])
        assert modes["eager"]["inputs"] == (doubled == 0), dtype
        # A division into the subnormal range: written as 0 when results are flushed.
        y = tf.constant([fmt.smallest_normal], dtype=dtype)
        halved = float(tf.divide(y, tf.constant([4.0], dtype=dtype)).numpy()[0])
        assert modes["eager"]["results"] == (halved == 0), dtype


def test_every_function_maps_to_tensorflows_kernel_with_its_derivatives():
    """Each named function compiles to TensorFlow's own kernel; its value and first two
    derivatives (nested tapes, float64) match mpmath.diff of the textbook definition.
    ``gelu`` is looser: ``tf.nn.gelu`` rounds its constants through float32 (about 4e-9
    relative in float64, reproduced exactly in mpmath by the helper that found it)."""
    import mpmath

    from harness.backends.interface import NotApplicable
    from harness.backends.tensorflow.build import compile_expression
    from harness.backends.tensorflow.tfimport import tf
    from harness.cases import expressions as ex

    from .test_jets import FUNCTIONS as DEFINITIONS

    named = {t: f for t, f in DEFINITIONS.items() if "(" in t and t.split("(")[0] != "where"}
    covered = {t.split("(")[0] for t in named}
    assert covered >= set(ex.FUNCTIONS) - {"abs", "maximum", "minimum"} | set(ex.VARIADIC)
    points = np.array([0.3, 0.7, 1.9])
    for text, fn in sorted(named.items()):
        x = tf.constant(points, tf.float64)
        if text.startswith("mish("):  # the operator table's NoKernel for TensorFlow
            with pytest.raises(NotApplicable, match="TensorFlow has no mish"):
                compile_expression(ex.parse(text, {"x"}), {"x": x}, tf.float64)
            continue
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = compile_expression(ex.parse(text, {"x"}), {"x": x}, tf.float64)
            d1 = inner.gradient(y, x)
        orders = 3
        if text.startswith("softsign("):  # TensorFlow 2.21 registers no gradient of SoftsignGrad
            with pytest.raises(LookupError, match="SoftsignGrad"):
                outer.gradient(d1, x)
            d2, orders = None, 2
        else:
            d2 = outer.gradient(d1, x)
        got = [y.numpy(), d1.numpy(), np.zeros(3) if d2 is None else d2.numpy()]
        rel = 1e-6 if text.startswith("gelu") else 1e-12
        for i, p in enumerate(points):
            with mpmath.workdps(40):
                want = [float(mpmath.diff(fn, mpmath.mpf(p), k)) for k in range(3)]
            for k in range(orders):
                assert got[k][i] == pytest.approx(want[k], rel=rel, abs=1e-300), (text, p, k)


def test_a_forward_rule_alone_is_not_applicable_in_tensorflow(tmp_path):
    """TensorFlow has no custom forward rule: an implementation with only a ``tangent``
    rule is ``not_applicable`` with the reason; beside a gradient rule it is unused (the
    gradient gives 12 at x = 2 by every method, the tangent rule would give 24)."""
    path = write_case(
        tmp_path,
        "tangent_only",
        """\
        title: forward rules in TensorFlow
        source: test
        inputs:
          x: {values: [2.0]}
        function: x**3
        derivatives: {wrt: x, orders: [1]}
        implementations:
          ruled:
            expression: x**3
            tangent: {x: 2 * dx * 3 * x**2}
          both:
            expression: x**3
            gradient: {x: dy * 3 * x**2}
            tangent: {x: 2 * dx * 3 * x**2}
        dtypes: [float64]
        methods: [reverse, forward, forward_over_reverse]
        """,
    )
    errors = _run(path, tmp_path)
    ruled = errors[errors.implementation == "ruled"]
    assert set(ruled.outcome) == {"not_applicable"}
    assert ruled.message.str.contains("TensorFlow has no custom forward rule").all()
    both = errors[(errors.implementation == "both") & (errors.order == 1)]
    assert len(both) == 3 * 3 and set(both.value) == {12.0}


_CRASHING_KERNEL = """
import os, signal
if os.environ.get("HARNESS_CRASH_LEDGER"):  # the evaluating child process only
    import harness.backends.sweep as sweep
    original, original_at = sweep._Runner.run, sweep._Runner.evaluate_at
    def run(self, impl, fn, partials, inputs, stats):
        if (self.method, self.mode) == ("forward", "jit"):
            os.kill(os.getpid(), signal.SIGSEGV)  # a kernel that crashes its framework
        return original(self, impl, fn, partials, inputs, stats)
    def evaluate_at(self, inputs):
        if (self.method, self.mode) == ("forward", "eager"):
            os.kill(os.getpid(), signal.SIGSEGV)  # at a bisection's new inputs only
        return original_at(self, inputs)
    sweep._Runner.run, sweep._Runner.evaluate_at = run, evaluate_at
"""


def test_a_framework_that_kills_the_process_is_the_rows_of_what_it_computed(tmp_path):
    """PyTorch 2.13's torch.compile of three nested jvp of elu is a segmentation fault
    (in every dtype): it ended a job of the full census and every case in it. `harness evaluate` now
    works in a child process; when a framework call kills it, that combination's rows are
    `error` rows saying so, and a new process computes the rest, whose values are those
    of a run without the crash. Here a sitecustomize module makes JAX's jit-compiled
    forward mode send the child a real SIGSEGV, and the eager forward mode send one at
    the bisection's new inputs alone: that combination keeps its rows (the same values)
    and its edges stay at the sweep's points."""
    import os
    import shutil

    import pandas as pd

    from .conftest import ROOT

    shutil.copy(ROOT / "cases" / "softplus.yaml", tmp_path)
    sel = ["--backends", "jax", "--dtypes", "float64", "--methods", "forward"]
    sel += ["--modes", "eager,jit", "--points", "5"]
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(_CRASHING_KERNEL)

    def harness(args, results, crash):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path / "site")])}
        if not crash:
            env["PYTHONPATH"] = str(ROOT)
        argv = [sys.executable, "-m", "harness", *args, "--results", results]
        out = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr[-2000:]
        return out

    table = "softplus/jax/all/evaluations.parquet"
    harness(["reference", "softplus.yaml", *sel[2:]], "plain", False)
    shutil.copytree(tmp_path / "plain", tmp_path / "crashed")
    for results, crash in (("plain", False), ("crashed", True)):
        out = harness(["evaluate", "softplus.yaml", *sel], results, crash)
    said = "signal 11 (SIGSEGV) killed the process: jax forward, jit mode, float64"
    assert f"harness evaluate: softplus: {said}; its rows are errors" in out.stderr
    bisecting = "jax forward, eager mode, finding its edges, float64"
    assert f"killed the process: {bisecting}; its edges stay at the sweep's points" in out.stderr
    edges = {
        results: pd.read_parquet(tmp_path / results / table.replace("evaluations", "edges"))
        for results in ("plain", "crashed")
    }
    found = {results: set(zip(e["method"], e["mode"])) for results, e in edges.items()}
    assert ("forward", "eager") in found["plain"]
    assert ("forward", "eager") not in found["crashed"]
    assert found["crashed"] == found["plain"] - {("forward", "eager"), ("forward", "jit")}
    plain = pd.read_parquet(tmp_path / "plain" / table)
    crashed = pd.read_parquet(tmp_path / "crashed" / table)
    hit = (crashed["method"] == "forward") & (crashed["mode"] == "jit")
    assert hit.sum() > 0 and (crashed.loc[hit, "status"] == "error").all()
    assert (crashed.loc[hit, "message"] == f"ProcessDied: {said}").all()
    keys = ["implementation", "method", "mode", "partial", "point"]
    rest = crashed[~hit].sort_values(keys).reset_index(drop=True)
    again = plain[~((plain["method"] == "forward") & (plain["mode"] == "jit"))]
    again = again.sort_values(keys).reset_index(drop=True)
    assert (
        plain.loc[(plain["method"] == "forward") & (plain["mode"] == "jit"), "status"] == "value"
    ).any()
    pd.testing.assert_frame_equal(
        rest[[*keys, "value", "status"]], again[[*keys, "value", "status"]]
    )


_STALLING_KERNEL = """
import os, pathlib, time
if os.environ.get("HARNESS_CRASH_LEDGER"):  # the evaluating child process only
    import harness.backends.sweep as sweep
    original = sweep._Runner.run
    def run(self, impl, fn, partials, inputs, stats):
        if (self.method, self.mode) == ("forward", "jit"):
            pathlib.Path(os.environ["STALLED"]).write_text(str(os.getpid()))
            time.sleep(900)  # a kernel that takes its time, till the job is cancelled
        return original(self, impl, fn, partials, inputs, stats)
    sweep._Runner.run = run
"""


def test_a_cancelled_evaluation_stops_its_child_and_leaves_no_folder(tmp_path):
    """A scheduler cancels a job with SIGTERM to the command's process (Snakemake when it
    is stopped, Slurm's scancel). `harness evaluate` evaluates in a child process: the
    signal goes on to the child, which stops, and the command exits as stopped (128 +
    15) with its crash ledger's temporary folder removed. Killed by the signal itself,
    the parent had left the child evaluating and the folder behind in the temporary
    directory. Here a sitecustomize module makes JAX's jit-compiled forward mode stall in
    the child, which writes its process id first."""
    import os
    import shutil
    import signal
    import time

    from .conftest import ROOT

    shutil.copy(ROOT / "cases" / "softplus.yaml", tmp_path)
    sel = ["--dtypes", "float64", "--methods", "forward", "--modes", "jit", "--points", "5"]
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(_STALLING_KERNEL)
    (tmp_path / "tmp").mkdir()
    stalled = tmp_path / "stalled.pid"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path / "site")])}
    env.update(TMPDIR=str(tmp_path / "tmp"), STALLED=str(stalled))
    argv = [sys.executable, "-m", "harness"]
    made = subprocess.run(
        [*argv, "reference", "softplus.yaml", *sel, "--results", "results"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert made.returncode == 0, made.stderr[-2000:]
    command = [*argv, "evaluate", "softplus.yaml", "--backends", "jax", *sel]
    log = tmp_path / "evaluate.log"
    with log.open("w") as out:
        parent = subprocess.Popen(
            [*command, "--results", "results"], cwd=tmp_path, env=env, stderr=out, stdout=out
        )
    child = None
    try:
        deadline = time.monotonic() + 600
        while not stalled.exists() and parent.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert stalled.exists(), log.read_text()[-2000:]
        child = int(stalled.read_text())
        assert [p.name for p in (tmp_path / "tmp").glob("harness-crashes-*")] != []
        parent.send_signal(signal.SIGTERM)
        assert parent.wait(timeout=120) == 128 + signal.SIGTERM
        with pytest.raises(ProcessLookupError):
            os.kill(child, 0)  # stopped, and reaped by the parent
        assert list((tmp_path / "tmp").glob("harness-crashes-*")) == []
    finally:
        for pid in (parent.pid, child):
            if pid is not None:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        parent.wait()


def test_a_framework_that_kills_the_process_in_a_run_is_its_rows(tmp_path):
    """`harness run` (one case end to end) works in a child process as `harness evaluate`
    does: JAX's jit-compiled forward mode sends the child a real SIGSEGV (the
    sitecustomize module above); the run ends with exit status 0, its judged table says
    that combination's rows are errors and how the process died, and the eager rows are
    judged as without the crash."""
    import os
    import shutil

    import pandas as pd

    from .conftest import ROOT

    shutil.copy(ROOT / "cases" / "softplus.yaml", tmp_path)
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(_CRASHING_KERNEL)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path / "site")])}
    argv = [sys.executable, "-m", "harness", "run", "softplus.yaml", "--backends", "jax"]
    argv += ["--dtypes", "float64", "--methods", "forward", "--modes", "eager,jit"]
    argv += ["--points", "5", "--no-bisect", "--results", "results"]
    out = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    said = "signal 11 (SIGSEGV) killed the process: jax forward, jit mode, float64"
    assert f"harness run: softplus: {said}; its rows are errors" in out.stderr
    errors = pd.read_parquet(tmp_path / "results" / "softplus" / "errors.parquet")
    jit = errors[errors["mode"] == "jit"]
    eager = errors[errors["mode"] == "eager"]
    assert len(jit) == len(eager) > 0
    assert (jit["outcome"] == "error").all()
    assert (jit["message"] == f"ProcessDied: {said}").all()
    assert (eager["outcome"] == "ok").sum() > len(eager) / 4
    assert not eager["message"].astype(str).str.startswith("ProcessDied").any()


def test_harness_run_tells_each_method_s_verdicts_as_soon_as_they_are_judged(tmp_path):
    """``harness run`` prints a line per method, mode and dtype as soon as they are judged
    (its first verdicts, before the bisection, localisation and comparison are done), and
    their counts are the ones the comparison's table then holds."""
    import re
    import shutil

    import pandas as pd

    from .conftest import ROOT

    shutil.copy(ROOT / "cases" / "softplus.yaml", tmp_path)
    argv = [sys.executable, "-m", "harness", "run", "softplus.yaml", "--backends", "torch"]
    argv += ["--dtypes", "float32", "--methods", "reverse,forward", "--modes", "eager"]
    argv += ["--points", "12", "--results", "results"]
    out = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    said = re.findall(r"^judged torch (\w+) (\w+) float32: (.*)$", out.stderr, flags=re.M)
    assert sorted((m, mode) for m, mode, _ in said) == [
        ("forward", "eager"),
        ("reverse", "eager"),
    ]
    # Told before the last of the evaluation's progress: as each method is judged.
    first = out.stderr.index("judged torch reverse")
    assert first < out.stderr.index("evaluate torch: 2/2 combinations")
    errors = pd.read_parquet(tmp_path / "results" / "softplus" / "errors.parquet")
    for method, mode, counts in said:
        rows = errors[(errors["method"] == method) & (errors["mode"] == mode)]
        told = {o: int(n) for n, o in (c.split(" ") for c in counts.split(", "))}
        assert told == rows["outcome"].astype(str).value_counts().to_dict()
