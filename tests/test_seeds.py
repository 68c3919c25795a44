"""The seeds' published facts, reproduced through the harness (TensorFlow, float32)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from harness.numerics.floats import FORMATS
from harness.stages.prepared import Selection
from harness.stages.run import run_case

from .conftest import CASES

pytestmark = pytest.mark.slow

F32 = FORMATS["float32"]


def _findings(errors) -> pd.DataFrame:
    """The findings the compare stage wrote beside a fixture's errors table."""
    from harness.results import read_table

    return read_table(errors.attrs["results"] / errors["case"].iloc[0] / "findings.parquet")


def _run(case: str, out, **selection):
    errors = run_case(
        CASES / f"{case}.yaml",
        selection=Selection(**{"backends": ["tensorflow"], **selection}),
        results=out,
    )
    errors.attrs["results"] = out
    return errors


@pytest.fixture(scope="module")
def ratio(tmp_path_factory):
    out = tmp_path_factory.mktemp("ratio")
    return _run("ratio", out, dtypes=["float32"], methods=["reverse"], modes=["eager"], orders=[1])


def test_explicit_square_is_ok_only_between_1e_19_and_2e19(ratio):
    # Seeds 000/001: b**2 underflows below ~1e-19 (gradient inf), overflows above ~1.8e19
    # (gradient 0); the figure's blue, orange and green regions.
    g = ratio[(ratio.implementation == "explicit_square") & (ratio.partial == "b")]
    ok = g[g.outcome == "ok"].a
    assert 1e-19 <= ok.min() < 3e-19 and 9e18 < ok.max() <= 2e19
    normal = g[g.a >= F32.smallest_normal]
    assert set(normal[normal.a < ok.min()].outcome) == {"inf"}
    # Above it b**2 overflows and a/b**2 is 0: `zero` where the truth 1/t is a normal
    # float32, and what the platform's flush of a subnormal 1/t gives (`flushed`) beyond.
    above = normal[normal.a > ok.max()]
    truth_normal = above.reference_rounded >= F32.smallest_normal
    assert set(above[truth_normal].outcome) == {"zero"}
    assert set(above[~truth_normal].outcome) == {"flushed"} and (above.value == 0).all()
    assert set(g[g.a.between(ok.min(), ok.max())].outcome) == {"ok"}
    assert (g[g.outcome != "ref_unreliable"].expected != "broken").all()


def test_stable_division_is_ok_over_the_whole_normal_range(ratio):
    g = ratio[(ratio.implementation == "stable_division") & (ratio.partial == "b")]
    # Where both the input t and the answer 1/t are normal float32 numbers.
    normal = g[(g.a >= F32.smallest_normal) & (1 / g.a >= F32.smallest_normal)]
    assert len(normal) > 200
    assert set(normal.outcome) == {"ok"}
    assert np.allclose(normal.value, 1 / normal.a, rtol=1e-6)
    # The seed's own custom division (Defun newDiv ported) agrees everywhere.
    newdiv = ratio[(ratio.implementation == "seed_newdiv") & (ratio.partial == "b")]
    assert list(newdiv.outcome) == list(g.outcome)


def test_subnormal_inputs_are_flushed_to_nan_and_flagged(ratio):
    g = ratio[(ratio.implementation == "autodiff") & (ratio.partial == "b")]
    tiny = g[g.a < F32.smallest_normal]
    assert len(tiny) > 0 and tiny.subnormal.all()
    # TF reads a subnormal as 0 here: 0/0 = NaN, which is what -a/b is at a = b = 0 (not
    # defined): the platform's flush, not the implementation's failure.
    assert tiny.value.isna().all() and set(tiny.outcome) == {"flushed"}


@pytest.fixture(scope="module")
def softplus(tmp_path_factory):
    out = tmp_path_factory.mktemp("softplus")
    return _run(
        "softplus", out, dtypes=["float32"], methods=["reverse"], modes=["eager"], orders=[1, 2]
    )


def _at(errors, implementation, partial, x):
    row = errors[
        (errors.implementation == implementation) & (errors.partial == partial) & (errors.x == x)
    ]
    assert len(row) == 1
    return row.iloc[0]


def test_naive_softplus_gradient_is_nan_at_100(softplus):
    # Seed 002: "the gradient this function evaluated at x=100 is NaN".
    row = _at(softplus, "naive", "x", 100.0)
    assert np.isnan(row.value) and row.outcome == "nan"
    assert row.expected == "held"


@pytest.mark.parametrize("implementation", ["doc_custom_gradient", "stable_custom_gradient"])
def test_custom_gradients_give_one_at_100(softplus, implementation):
    # "With this definition, the gradient at x=100 will be correctly evaluated as 1.0."
    row = _at(softplus, implementation, "x", 100.0)
    assert row.value == 1.0 and row.outcome == "ok"


def test_documented_custom_gradient_fixes_order_one_only(softplus):
    # Its rule dy * (1 - 1/(1 + exp(x))) is differentiated naively: exp(100) overflows.
    row = _at(softplus, "doc_custom_gradient", "xx", 100.0)
    assert np.isnan(row.value) and row.outcome == "nan"
    # The stable rule's second order is sigmoid's own gradient: finite, not NaN. Its true
    # value 3.7e-44 is a float32 subnormal, which TensorFlow flushes here: `flushed`.
    stable = _at(softplus, "stable_custom_gradient", "xx", 100.0)
    assert stable.value == 0.0 and stable.outcome == "flushed"
    assert 0 < stable.reference_rounded < F32.smallest_normal
    assert _at(softplus, "stable_custom_gradient", "xx", 1.0).outcome == "ok"


def test_an_intermediate_flushed_into_a_wrong_zero_is_not_the_platforms_note(softplus):
    # 1/(1 + exp(x)) is subnormal for x in [87.34, 88.72] in float32 and flushed, so the
    # naive gradient is 0 where the truth (and the input) are normal: a real `zero`.
    row = _at(softplus, "naive", "x", float(softplus[softplus.x.between(87.34, 88.72)].x.iloc[0]))
    assert row.value == 0.0 and row.outcome == "zero"
    assert abs(row.reference_rounded - 1.0) < 1e-6 and not row.subnormal


def _one(findings, **where):
    rows = findings
    for k, v in where.items():
        rows = rows[rows[k] == v]
    assert len(rows) == 1, rows[["implementation", "partial", "outcome", "text"]]
    return rows.iloc[0]


def _exp_overflows_from() -> float:
    """The first float32 x whose exp rounds to inf: e**x >= FLT_MAX + half an ulp, the
    float32 just above ln(2**128 - 2**103), exactly (mpmath at 50 digits)."""
    import mpmath

    with mpmath.workdps(50):
        t = mpmath.log(mpmath.mpf(2) ** 128 - mpmath.mpf(2) ** 103)
        x = np.float32(float(t))
        while mpmath.mpf(float(x)) < t:
            x = np.nextafter(x, np.float32(np.inf))
        while mpmath.mpf(float(np.nextafter(x, np.float32(0)))) >= t:
            x = np.nextafter(x, np.float32(0))
    return float(x)


def _below(x: float) -> float:
    return float(np.nextafter(np.float32(x), np.float32(-np.inf)))


def _plain_gradient(x: float, order: int, fn) -> float:
    """d^order fn/dx^order at x in float32, eager, by plain nested tapes (no harness)."""
    from harness.backends.tensorflow.tfimport import tf  # one thread, as the harness runs it

    v = tf.constant([x], dtype=tf.float32)
    tapes = [tf.GradientTape() for _ in range(order)]
    for t in tapes:
        t.__enter__()
        t.watch(v)
    y = fn(v)
    for t in reversed(tapes):
        t.__exit__(None, None, None)
        y = t.gradient(y, v)
    return float(y.numpy()[0])


def test_seed_facts_are_findings_with_exact_edges(softplus):
    from harness.backends.tensorflow.tfimport import tf  # one thread, as the harness runs it

    found = _findings(softplus)
    overflow = _exp_overflows_from()
    assert format(overflow, ".7g") == "88.72284"
    # Seed 002: the naive gradient is NaN from the first x where exp(x) overflows...
    nan = _one(found, implementation="naive", partial="x", outcome="nan")
    assert nan.lo == overflow and nan.lo_exact and nan.lo_outside == _below(overflow)
    assert nan.hi_open and nan.expected == "expected"
    assert "nan for x ≥ 88.72284" in nan.text
    # ... and 0 just before, where 1/(1 + exp(x)) is subnormal and flushed: an amplified
    # flush, a real failure, ending exactly where the NaN starts.
    zero = _one(found, implementation="naive", partial="x", outcome="zero")
    assert zero.hi == _below(overflow) and zero.hi_exact and zero.expected == "unexpected"
    assert format(zero.lo, ".7g") == "87.33655" and zero.lo_exact

    def naive(v):
        return tf.math.log(1 + tf.exp(v))

    assert _plain_gradient(zero.lo, 1, naive) == 0.0
    assert _plain_gradient(zero.lo_outside, 1, naive) != 0.0
    assert np.isnan(_plain_gradient(nan.lo, 1, naive))
    # The documentation's custom gradient fixes order 1 only: NaN at order 2 from the
    # same input.
    doc = _one(found, implementation="doc_custom_gradient", partial="xx", outcome="nan")
    assert doc.lo == overflow and doc.lo_exact


def test_ratio_explicit_square_edges_are_exact(ratio):
    found = _findings(ratio)
    # b*b is flushed below the smallest normal 2**-126: inf up to the float32 just below
    # 2**-63 ...
    inf = _one(found, implementation="explicit_square", partial="b", outcome="inf")
    assert inf.hi == _below(2.0**-63) and inf.hi_outside == 2.0**-63 and inf.hi_exact
    # ... and b*b overflows from the first float32 t with t*t >= FLT_MAX + half an ulp.
    t = np.float32(np.sqrt(2.0**128 - 2.0**103))
    with np.errstate(over="ignore"):
        while not np.isinf(t * t):
            t = np.nextafter(t, np.float32(np.inf))
        while np.isinf(np.nextafter(t, np.float32(0)) ** 2):
            t = np.nextafter(t, np.float32(0))
    zero = _one(found, implementation="explicit_square", partial="b", outcome="zero")
    assert zero.lo == float(t) and zero.lo_exact
    assert "inf for a ≤ 1.0842021e-19" in inf.text and "zero for a ≥ 1.8446744e+19" in zero.text


# -- seed 003: upstream gradients through foo(foo(foo(x))) -------------------------------


@pytest.fixture(scope="module")
def composition(tmp_path_factory):
    out = tmp_path_factory.mktemp("composition")
    sel = Selection(
        backends=["tensorflow"],
        dtypes=["float32"],
        methods=["reverse"],
        modes=["eager", "function"],
    )
    return run_case(CASES / "composition.yaml", selection=sel, results=out)


def test_foo_gradients_receive_upstream_1_32_256():
    from harness.backends.tensorflow.gradient_trace import trace_gradients

    trace = trace_gradients(CASES / "composition.yaml", "custom", {"x": 2.0})
    assert [c.function for c in trace.calls] == ["foo", "foo", "foo"]
    assert [float(c.inputs["u"][0]) for c in trace.calls] == [16.0, 4.0, 2.0]
    assert [float(c.upstream[0]) for c in trace.calls] == [1.0, 32.0, 256.0]
    assert [float(c.downstream["u"][0]) for c in trace.calls] == [32.0, 256.0, 1024.0]
    assert trace.gradient == {"x": 1024.0}
    # Forgetting dy keeps only the innermost local derivative, 2x: not a stopped gradient.
    forgot = trace_gradients(CASES / "composition.yaml", "forgot_upstream", {"x": 2.0})
    assert [float(c.upstream[0]) for c in forgot.calls] == [1.0, 32.0, 8.0]
    assert forgot.gradient == {"x": 4.0}


def test_composition_gives_1024_at_2_and_higher_orders(composition):
    for impl in ("power", "squares", "custom"):
        for mode in ("eager", "function"):
            e = composition[(composition.implementation == impl) & (composition["mode"] == mode)]
            at2 = e[e.x == 2.0].set_index("partial")
            assert at2.loc["x", "value"] == 1024.0 and at2.loc["x", "outcome"] == "ok"
            # 8*7*x**6, 8*7*6*x**5, 8*7*6*5*x**4 at x = 2
            assert at2.loc["xx", "value"] == 3584.0
            assert at2.loc["xxx", "value"] == 10752.0
            assert at2.loc["xxxx", "value"] == 26880.0
    wrong = _at(composition[composition["mode"] == "eager"], "forgot_upstream", "x", 2.0)
    assert wrong.value == 4.0 and wrong.outcome == "wrong" and wrong.expected == "held"


def test_trace_command_prints_the_seed_trace(harness_cmd):
    import subprocess

    proc = subprocess.run(
        [*harness_cmd, "trace", str(CASES / "composition.yaml"), "custom", "--at", "x=2"],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = proc.stdout.splitlines()
    assert lines[:3] == [
        "foo: u=16  upstream=1  downstream: du=32",
        "foo: u=4  upstream=32  downstream: du=256",
        "foo: u=2  upstream=256  downstream: du=1024",
    ]
    assert lines[3] == "gradient: d/dx=1024.0"


# -- seed 004 and TensorFlow issue #34503: nested second-order rules -----------------------


@pytest.fixture(scope="module")
def nested(tmp_path_factory):
    out = tmp_path_factory.mktemp("nested")
    sel = Selection(
        backends=["tensorflow"],
        dtypes=["float32"],
        methods=["reverse", "forward_over_reverse"],
        modes=["eager", "function"],
        orders=[1, 2, 3, 4],
    )
    return run_case(CASES / "nested_softplus.yaml", selection=sel, results=out)


def _pick(errors, impl, method, mode, partial, x):
    e = errors[(errors.method == method) & (errors["mode"] == mode)]
    return _at(e, impl, partial, x)


@pytest.mark.parametrize("mode", ["eager", "function"])
def test_seed_004_published_values_and_verdict(nested, mode):
    at = lambda p, x: _pick(nested, "seed004_rule", "reverse", mode, p, x)  # noqa: E731
    assert at("x", 1.0).value == np.float32(0.7310586)
    assert at("xx", 1.0).value == np.float32(-1.7182817)
    assert at("x", 100.0).value == 1.0
    assert at("xx", 100.0).value == -np.inf
    assert at("xx", 1.0).outcome == "wrong" and at("xx", 1.0).expected == "held"
    assert at("xx", 1.0).reference.startswith("0.196611933")
    assert at("xx", 100.0).outcome == "inf" and at("xx", 100.0).expected == "held"


def test_correct_nested_rule_passes_orders_2_to_4_in_reverse_mode(nested):
    e = nested[
        (nested.implementation == "correct_rule")
        & (nested.method == "reverse")
        & (nested.x.abs() <= 20)
        & (nested.order >= 2)
    ]
    assert len(e) > 200
    # Order 3 is autodiff of the rule: s(x)s(-x)(s(-x) - s(x)), whose difference of two
    # values near 1/2 cancels for |x| < ~0.005 (hundreds of ulps there).
    near_zero = (e.order == 3) & (e.x.abs() < 0.01)
    assert (e[~near_zero].outcome == "ok").all()
    assert set(e[near_zero].outcome) <= {"ok", "inaccurate"}


def test_forward_over_reverse_ignores_the_second_order_rule(nested):
    # The JVP of the gradient differentiates the first-order rule's expression instead of
    # calling the nested rule: the seed's wrong rule gives the true 0.19661193 at x = 1.
    for mode in ("eager", "function"):
        row = _pick(nested, "seed004_rule", "forward_over_reverse", mode, "xx", 1.0)
        assert abs(row.value - 0.19661193) < 1e-7 and row.outcome == "ok"
        # and the correct rule, ignored the same way, loses what it was written for: the
        # JVP of sigmoid cancels in its tail (s - s**2), zero from x ~ 17 in float32
        tail = nested[
            (nested.implementation == "correct_rule")
            & (nested.method == "forward_over_reverse")
            & (nested["mode"] == mode)
            & (nested.partial == "xx")
            & (nested.x >= 20)
            & (nested.x <= 80)
        ]
        assert len(tail) and (tail.outcome == "zero").all()
        for x in tail.x:
            assert _pick(nested, "correct_rule", "reverse", mode, "xx", x).outcome == "ok"


def test_decorated_grad_fn_is_right_eagerly_and_missing_in_tf_function(nested):
    eager = _pick(nested, "decorated_grad_fn", "reverse", "eager", "xx", 1.0)
    assert eager.outcome == "ok" and abs(eager.value - 0.19661193) < 1e-7
    traced = nested[
        (nested.implementation == "decorated_grad_fn")
        & (nested.method == "reverse")
        & (nested["mode"] == "function")
        & (nested.order >= 2)
    ]
    assert len(traced) and (traced.outcome == "missing").all() and (traced.expected == "held").all()


def test_decorated_grad_fn_never_calls_its_second_order_rule():
    from harness.backends.tensorflow.build import build_implementation, record_gradients
    from harness.backends.tensorflow.tfimport import tf  # one thread, as the harness runs it
    from harness.cases.load import load_case

    case = load_case(CASES / "nested_softplus.yaml")
    impls = {i.name: i for i in case.implementations}
    x = tf.constant([1.0])
    seen = {}
    for name in ("correct_rule", "decorated_grad_fn"):
        fn = build_implementation(impls[name], ("x",), tf.float32)
        with record_gradients() as calls, tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = fn(x=x)
            g = inner.gradient(y, x)
            second = outer.gradient(g, x)
        seen[name] = [c.function for c in calls]
        assert abs(float(second[0]) - 0.19661193) < 1e-7
    # the documented pattern calls its second-order rule; #34503's never does
    assert seen["correct_rule"] == ["correct_rule", "correct_rule'"]
    assert seen["decorated_grad_fn"] == ["decorated_grad_fn"]


# -- seed 001: the logistic ODE through its closed forms --------------------------------


def test_logistic_reference_agrees_with_mpmath_odefun(tmp_path):
    # The closed form is the reference; an independent ODE solve (mpmath's Taylor-series
    # odefun) must give the same y and dy/dt = r*y*(1 - y) at a few points.
    import mpmath

    from harness.config import load_config
    from harness.stages.prepared import prepare
    from harness.stages.reference import reference_stage

    prep = prepare(
        CASES / "logistic.yaml",
        load_config(overrides={"setting": "full", "max_points": 4, "dtypes": ["float64"]}),
    )
    table, _ = reference_stage(prep, tmp_path, cache=False)
    table = table[table.r * table.t <= 20]  # odefun integrates step by step: keep it short
    assert len(table[table.partial == ""]) >= 4
    solutions = {}
    with mpmath.workdps(50):  # 1 - y reaches 2e-9 here; r*y*(1 - y) must not cancel
        for (t, r, y0), rows in table.groupby(["t", "r", "y0"]):
            key = (r, y0)
            if key not in solutions:
                rr, yy = mpmath.mpf(r), mpmath.mpf(y0)
                solutions[key] = mpmath.odefun(lambda _t, y, rr=rr: rr * y * (1 - y), 0, yy)
            y = solutions[key](mpmath.mpf(t))
            by_partial = rows.set_index("partial")["reference"]
            value = mpmath.mpf(by_partial[""])
            slope = mpmath.mpf(by_partial["t"])
            assert abs(value - y) <= mpmath.mpf("1e-20") * abs(y)
            assert abs(slope - r * y * (1 - y)) <= mpmath.mpf("1e-20") * abs(slope)


@pytest.fixture(scope="module")
def logistic(tmp_path_factory):
    out = tmp_path_factory.mktemp("logistic")
    sel = Selection(backends=["tensorflow"], methods=["reverse"], modes=["eager"])
    return run_case(CASES / "logistic.yaml", selection=sel, results=out)


def test_seed_hitting_time_point_is_in_the_sweep(logistic):
    e = logistic[(logistic.dtype == "float64") & (logistic.partial == "")]
    at = e[(np.isclose(e.t, 100 * np.log(4))) & (e.r == 0.01) & (e.y0 == 0.5)]
    assert len(at) == 3 and np.allclose(at.value, 0.8, rtol=1e-14)


def test_exponential_form_is_nan_once_exp_rt_overflows(logistic):
    f32 = logistic[(logistic.implementation == "exponential_form") & (logistic.dtype == "float32")]
    f32 = f32[(f32.r == 1.0) & (f32.order == 0)]
    assert (f32[f32.t >= 89].outcome == "nan").all()
    assert (f32[f32.t <= 80].outcome == "ok").all()


def test_sigmoid_form_loses_every_derivative_in_its_tail(logistic):
    # rt + logit(y0) > ~17: sigmoid rounds to 1 in float32 and its gradient s*(1 - s) is 0;
    # the reciprocal form keeps the same derivatives (true values ~1e-8 .. 1e-35).
    f32 = logistic[(logistic.dtype == "float32") & (logistic.r == 1.0) & (logistic.order == 1)]
    band = f32[(f32.t >= 30) & (f32.t <= 80)]
    sig = band[band.implementation == "sigmoid_form"]
    rec = band[band.implementation == "reciprocal_form"]
    assert len(sig) > 10 and (sig.outcome == "zero").all()
    assert (rec.outcome == "ok").all()


def test_hitting_time_138_629_and_the_implicit_function_gradient(tmp_path):
    sel = Selection(
        backends=["tensorflow"],
        dtypes=["float64"],
        methods=["reverse"],
        modes=["eager", "function"],
    )
    e = run_case(CASES / "hitting_time.yaml", selection=sel, results=tmp_path)
    seed = e[(e.r == 0.01) & (e.y0 == 0.5)]
    for impl in ("logit_difference", "log_of_ratio", "implicit_function"):
        at = seed[(seed.implementation == impl) & (seed["mode"] == "eager")].set_index("partial")
        assert at.loc["", "value"] == pytest.approx(100 * np.log(4), rel=1e-15)
        assert at.loc["r", "value"] == pytest.approx(-100 * 100 * np.log(4), rel=1e-14)
        assert at.loc["y0", "value"] == pytest.approx(-400.0, rel=1e-14)
        assert (at.loc[["", "r", "y0", "r,r", "r,y0"], "outcome"] == "ok").all()
        # d2t*/dy0^2 = (1 - 2 y0)/(...) is exactly 0 at y0 = 1/2: no precision can verify
        # a true zero, an Arb ball proves it, and the autodiff values are judged against it.
        assert at.loc["y0,y0", "reference_rounded"] == 0.0
        assert at.loc["y0,y0", "outcome"] == "ok"
    ift = e[(e.implementation == "implicit_function") & (e.order >= 1) & (e.partial != "y0,y0")]
    assert (ift.outcome.isin(["ok", "inaccurate"])).all()
    assert (ift.outcome == "ok").mean() > 0.99
