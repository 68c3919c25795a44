"""``harness.check`` of the seeds' code as users write it (``examples/``): at the seeds'
points the same values, bit for bit, and the same verdicts as the corresponding case of
``cases/`` run by the study, and the seeds' published numbers; ``assert_derivatives``'
failure message; a check's page and its case file."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

import harness
from harness.cases.load import load_case
from tests.check_helpers import case_rows, compare_rows, example, same_bits

jax = pytest.importorskip("jax")
torch = pytest.importorskip("torch")

SEED_X = {"x": [1.0, 100.0]}  # seeds 002 (x = 100) and 004 (x = 1)
#: Seed 000: a = b from 1e-20, where b**2 underflows in float32.
SEED_AB = {"a": harness.sweep.log(1e-20, 1e-19, count=2), "b": harness.sweep.tie("a")}
RATIO_PARTIALS = ["b", "bb", "bbb", "bbbb", "ab"]  # ratio.yaml's

CASES = [
    ("jax", "jax_functions", "naive_log1pexp", SEED_X, {}, "softplus", "naive", None),
    ("jax", "jax_functions", "log1pexp", SEED_X, {}, "log1pexp_jvp", "doc_custom_jvp", None),
    (
        "jax",
        "jax_functions",
        "ratio",
        SEED_AB,
        {"partials": RATIO_PARTIALS},
        "ratio",
        "stable_division",
        None,
    ),
    ("torch", "torch_functions", "naive_log1pexp", SEED_X, {}, "softplus", "naive", None),
    (
        "torch",
        "torch_functions",
        "log1pexp",
        SEED_X,
        {},
        "log1pexp_jvp",
        "doc_custom_jvp",
        # The example's autograd.Function has the documentation's rule as its backward too.
        {"gradient": {"x": "dy * (1 - 1 / (1 + exp(x)))"}},
    ),
    (
        "torch",
        "torch_functions",
        "ratio",
        SEED_AB,
        {"partials": RATIO_PARTIALS},
        "ratio",
        "stable_division",
        None,
    ),
]
#: TensorFlow to order 2 (its forward mode to order 4 of -a/b costs a minute and 3 GB),
#: eagerly and under tf.function.
TF = {"orders": (1, 2), "modes": ("eager", "function")}
CASES += [
    ("tensorflow", "tensorflow_functions", "naive_log1pexp", SEED_X, TF, "softplus", "naive", None),
    (
        "tensorflow", "tensorflow_functions", "log1pexp", SEED_X, TF, "softplus",
        "doc_custom_gradient", None,
    ),
    (
        "tensorflow", "tensorflow_functions", "ratio", SEED_AB,
        {"partials": ["b", "bb"], "modes": TF["modes"]}, "ratio", "seed_newdiv", None,
    ),
    (
        "tensorflow", "tensorflow_functions", "composition", {"x": [2.0]}, TF, "composition",
        "custom", None,
    ),
    (
        "tensorflow", "tensorflow_functions", "log1pexp2", SEED_X,
        {**TF, "methods": ("reverse", "forward_over_reverse", "forward")}, "nested_softplus",
        "seed004_rule", None,
    ),
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize(
    "framework, module, name, inputs, extra, case, implementation, rules",
    CASES,
    ids=[f"{c[0]}-{c[2]}" for c in CASES],
)
def test_a_seeds_function_as_written_is_judged_as_its_case(
    tmp_path, framework, module, name, inputs, extra, case, implementation, rules
):
    fn = getattr(example(module), name)
    result = harness.check(fn, framework, inputs, results=tmp_path / "check", **extra)
    side = compare_rows(result.rows, case_rows(case, implementation, result, tmp_path, rules))
    assert (side["outcome"] == side["outcome_case"]).all()
    # Bit for bit, PyTorch's custom rules too: the case's ``1 / t`` is computed as the
    # user's PyTorch code computes it (t.reciprocal() * 1, harness.backends.walker).
    assert same_bits(side["value"], side["value_case"]).all()
    assert set(result.rows["backend"]) == {framework}
    assert set(result.rows["dtype"]) == {"float32", "float64"}
    if framework == "tensorflow":
        _published(name, result)


def _published(name, result):
    """The seeds' own numbers, from TensorFlow's reverse mode (tf.GradientTape)."""
    tape = result.rows[(result.rows["method"] == "reverse") & (result.rows["mode"] == "eager")]

    def value(order, dtype="float32", **point):
        (got,) = _at(tape, dtype, order, **point)["value"]
        return got

    if name == "naive_log1pexp":  # seed 002: "the gradient ... at x=100 is NaN"
        assert math.isnan(value(1, x=100.0))
    if name == "log1pexp":  # seed 002: "the gradient at x=100 will be correctly ... 1.0"
        assert value(1, x=100.0) == 1.0
    if name == "composition":  # seed 003: "final dy/dx=1024.0"
        assert value(1, x=2.0) == 1024.0
    if name == "log1pexp2":  # seed 004: the second order is the rule's ddy * (1 - e)
        assert math.isclose(value(2, "float64", x=1.0), 1 - math.exp(1.0), rel_tol=2**-50)


def _at(result, dtype, order, **point):
    rows = getattr(result, "rows", result)
    mask = (rows["dtype"] == dtype) & (rows["order"] == order)
    for name, value in point.items():
        mask &= rows[name] == value
    return rows[mask]


@pytest.mark.slow
def test_the_naive_log1pexp_is_nan_at_100_in_float32_and_the_check_says_why(tmp_path):
    fn = example("jax_functions").naive_log1pexp
    with pytest.raises(harness.DerivativeError) as caught:
        harness.assert_derivatives(fn, "jax", inputs=SEED_X, orders=(1,), dtypes=("float32",))
    result = caught.value.result
    at = _at(result, "float32", 1, x=100.0)
    # Seed 002: "the gradient this function evaluated at x=100 is NaN" (every method).
    assert len(at) == 10 and at["value"].isna().all() and (at["outcome"] == "nan").all()
    # The truth, sigmoid(100) = 1 - 3.7e-44, rounds to 1 in float32.
    assert (at["reference_rounded"] == 1.0).all()
    message = str(caught.value)
    assert "naive_log1pexp (jax, traced as log((1.0 + exp(x))))" in message
    line = next(s for s in message.splitlines() if "reverse eager float32 d^1/dx: nan" in s)
    assert "worst at x = 100.0: got nan, the truth (Arb-certified) 1.0" in line
    cause = line.rsplit("; root cause ", 1)[1]
    assert f"  {cause}: JAX: " in message  # its statement, once, after the checks
    # Every failing row of the check is in the message's counts.
    checks = [s for s in message.splitlines()[1:] if s.startswith("  jax ")]
    counted = sum(int(s.split(" at ")[1].split(" of")[0]) for s in checks)
    # x = 1 is right; at x = 100 the value overflows too (log(inf), the truth 100.0): 10
    # methods' values inf and their derivatives NaN.
    assert counted == len(result.failures) == 10 + 10
    value = _at(result, "float32", 0, x=100.0)
    assert np.isposinf(value["value"]).all() and (value["reference_rounded"] == 100.0).all()


@pytest.mark.slow
def test_a_right_function_passes_and_an_expectation_holds_a_known_failure(tmp_path):
    def cube(x):
        return x * x * x

    result = harness.assert_derivatives(
        cube, "torch", inputs={"x": [0.5, 2.0, 3.0]}, orders=(1, 2, 3)
    )
    assert result.ok and result.failures.empty
    # Exact values: 3x**2, 6x, 6 at x = 2 (every method but finite differences). (Order 4
    # would fail: PyTorch's reverse mode returns no gradient of the constant 6, missing.)
    exact = {1: 12.0, 2: 12.0, 3: 6.0}
    for order, want in exact.items():
        at = _at(result, "float64", order, x=2.0)
        at = at[at["method"] != "finite_difference"]
        assert len(at) and (at["value"] == want).all()
    fn = example("torch_functions").naive_log1pexp
    expect = [
        {
            "dtype": "float32",
            "order": 1,
            "where": {"x": [89, 1000]},
            "outcome": "nan",
            "reason": "exp(x) overflows to inf and the chain rule forms inf/inf",
        },
        {
            "dtype": "float32",
            "order": 0,
            "where": {"x": [89, 1000]},
            "outcome": "inf",
            "reason": "exp(x) overflows to inf, and log(inf) is inf",
        },
    ]
    held = harness.assert_derivatives(
        fn, "torch", inputs=SEED_X, orders=(1,), dtypes=("float32",), expect=expect
    )
    assert (held.rows.loc[held.rows["x"] == 100.0, "expected"] == "held").all()


@pytest.mark.slow
def test_a_tie_the_reference_cannot_decide_is_neither_a_pass_nor_a_fail(tmp_path):
    import jax.numpy as jnp

    def tie(x):
        # log(exp(x)) is x: in exact arithmetic the comparison is a tie at every x, which
        # no ball and no precision decides.
        return jnp.where(jnp.log(jnp.exp(x)) > x, x, 2.0 * x)

    arguments = {"inputs": {"x": [0.5, 3.0]}, "orders": (1,), "dtypes": ("float64",)}
    with pytest.raises(harness.ReferenceUndecided) as raised:
        harness.assert_derivatives(tie, "jax", methods=["reverse"], **arguments)
    assert not isinstance(raised.value, AssertionError)
    rows = raised.value.result.rows
    # The value is decided (2x, the tie's branch in exact arithmetic), the derivative not.
    values = rows[rows["order"] == 0]
    assert set(values["outcome"]) == {"ok"}
    assert sorted(set(values["value"])) == [1.0, 6.0]
    first = rows[rows["order"] == 1]
    assert len(first) and set(first["outcome"]) == {"ref_unreliable"}
    text = str(raised.value)
    assert "the reference could not decide 4 values (neither a pass nor a fail)" in text
    assert "got 2.0, no reference: " in text and "Arb-certified" not in text


def test_a_sweep_is_the_case_files_input_spec():
    assert harness.sweep.log(1e-30, 1e30, signs="both") == {
        "log": {"from": 1e-30, "to": 1e30, "count": 200, "signs": "both"}
    }
    assert harness.sweep.spec([1, 2.5]) == {"values": [1.0, 2.5]}
    assert harness.sweep.spec(np.array([3.0])) == {"values": [3.0]}
    assert harness.sweep.linear(0, 1, count=3, include=[0.25]) == {
        "linear": {"from": 0.0, "to": 1.0, "count": 3, "include": [0.25]}
    }
    with pytest.raises(TypeError, match="a sweep"):
        harness.sweep.spec("1e-3..1")


@pytest.mark.slow
def test_a_checks_case_file_and_page(tmp_path):
    fn = example("jax_functions").naive_log1pexp
    result = harness.check(fn, "jax", {"x": [2.0, 30.0]}, orders=(1, 2), dtypes=("float64",))
    written = tmp_path / "cases" / "naive_log1pexp.yaml"
    written.parent.mkdir()
    written.write_text(result.to_case())
    case = load_case(written)  # a case file any process can run: no Python named
    assert case.implementation("naive_log1pexp").registered is None
    assert case.function_text == result.traced.text == "log((1.0 + exp(x)))"
    assert case.partials == ((), ("x",), ("x", "x"))
    page = result.page(tmp_path / "page.html")
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and "naive_log1pexp, as written in JAX" in text
    # 2 points, 3 orders, 5 methods, 2 modes; the truth at x = 2 is sigmoid(2).
    assert len(result.rows) == 2 * 3 * 5 * 2
    first = _at(result, "float64", 1, x=2.0)
    with mpmath.workdps(40):
        truth = float(1 / (1 + mpmath.exp(-2)))
    assert len(first) == 10 and (first["reference_rounded"] == truth).all()
