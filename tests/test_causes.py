"""Root causes: sites of an expression, exact checks of hand-written rules, the kinds
decided from evidence, and the grouping (both directions: one mechanism in many cases and
frameworks is one root cause; two mechanisms never share one). Expected values come from
the expressions' own mathematics (mpmath at high precision), never from the code under
test. No framework here (:mod:`tests.test_localise` runs the frameworks)."""

from __future__ import annotations

import hashlib
import json

import mpmath
import numpy as np
import pandas as pd
import pytest

from harness.cases import expressions as ex
from harness.cases.load import load_case
from harness.causes.audit import audit
from harness.causes.classify import decide, outcome_class, severity
from harness.causes.regions import CASES_LISTED, LISTED, regions_text
from harness.causes.roots import classify_findings, root_causes, unsupported_table, worst_first
from harness.causes.rules import check_rules
from harness.causes.sampling import RUNS, SAMPLE, one_axis, sample_failures
from harness.causes.sites import effective, sites

from .conftest import CASES, write_case


def _texts(text: str, names=("x",)) -> list[str]:
    return [s.text for s in sites(ex.parse(text, set(names)))]


def test_sites_are_the_primitives_innermost_first_with_constants_kept():
    assert _texts("log(1 + exp(x))") == ["exp(u)", "(1 + u)", "log(u)"]
    assert _texts("x**8") == ["(u ** 8)"]
    assert _texts("-a / b**2", ("a", "b")) == ["(-u)", "(u ** 2)", "(u / v)"]
    # A constant subexpression is an argument as written, not a variable.
    assert _texts("softplus(2 * x) * log(4)") == ["(2 * u)", "softplus(u)", "(u * log(4))"]
    # The same subtree twice is one site.
    assert _texts("exp(x) / (1 + exp(x))") == ["exp(u)", "(1 + u)", "(u / v)"]


def test_the_effective_expression_of_a_custom_gradient_is_its_rule():
    case = load_case(CASES / "softplus.yaml")
    doc = case.implementation("doc_custom_gradient")
    eff = effective(case, doc, ("x", "x"))
    # d²/dx² through the rule is d/dx of the rule with dy = 1.
    assert eff.partial == ("x",) and eff.through_rule
    assert "dy" not in ex.unparse(eff.expression)
    assert ex.unparse(eff.expression).startswith("(1 *")
    naive = effective(case, case.implementation("naive"), ("x", "x"))
    assert naive.partial == ("x", "x") and not naive.through_rule
    nested = load_case(CASES / "nested_softplus.yaml")
    assert effective(nested, nested.implementation("seed004_rule"), ("x", "x")) is None


def test_a_wrong_rule_is_told_from_a_right_one_exactly():
    nested = load_case(CASES / "nested_softplus.yaml")
    checks = check_rules(nested, nested.implementation("seed004_rule"), {"x": 1.0})
    first, second = checks
    with mpmath.workdps(40):
        s = 1 / (1 + mpmath.exp(-1))
        assert first["right"] and abs(mpmath.mpf(first["truth"]) - s) < 1e-15
        # The seed's second-order rule 1 - exp(x) against sigmoid'(x) = s(1 - s).
        assert not second["right"]
        assert abs(mpmath.mpf(second["got"]) - (1 - mpmath.e)) < 1e-15
        assert abs(mpmath.mpf(second["truth"]) - s * (1 - s)) < 1e-15
    correct = check_rules(nested, nested.implementation("correct_rule"), {"x": 1.0})
    assert all(c["right"] for c in correct)
    composition = load_case(CASES / "composition.yaml")
    # foo's rule 2*u*dy is right at every call; forgetting dy is right at dy = 1 only.
    assert all(
        c["right"]
        for c in check_rules(composition, composition.implementation("custom"), {"x": 2.0})
    )
    forgot = check_rules(composition, composition.implementation("forgot_upstream"), {"x": 2.0})
    assert forgot and not any(c["right"] for c in forgot)
    # The calls receive x**2 and x**4 exactly (4 and 16 at x = 2).
    assert sorted(c["at"]["u"] for c in forgot) == [2.0, 4.0, 16.0]


def _finding(**kw) -> dict:
    base = {
        "case": "c",
        "id": "f1",
        "backend": "tensorflow",
        "implementation": "impl",
        "partial": "xx",
        "derivative": "d²/dx²",
        "order": 2,
        "dtype": "float32",
        "outcome": "zero",
        "severity": 3,
        "counts": json.dumps({"zero": 3}),
        "input": "x",
        "lo": 16.0,
        "hi": 80.0,
        "lo_exact": True,
        "hi_exact": True,
        "ranges": "{}",
        "hits": 3,
        "methods": "reverse",
        "modes": "eager, function",
        "worst_inputs": json.dumps({"x": 20.0}),
        "worst_got": 0.0,
        "worst_truth": "2.0611536e-9",
        "worst_method": "reverse",
        "worst_mode": "eager",
        "expected": "unexpected",
        "held": 0,
        "modes_ok": "{}",
        "methods_ok": "{}",
        "backends_ok": "{}",
        "fixes": "[]",
        "rules": "[]",
        "culprit": "",
        "culprit_primitive": "",
        "culprit_partial": "",
        "culprit_outcome": "",
        "culprit_inputs": "",
        "culprit_got": float("nan"),
        "culprit_truth": "",
        "culprit_method": "",
        "value_wrong": "",
        "intermediate": "",
        "scale": 1.0,
        "error_text": "",
    }
    base.update(kw)
    if "counts" not in kw:  # a finding's counts name its own outcome, as findings.find's do
        base["counts"] = json.dumps({base["outcome"]: 3})
    return base


_REFUSE = {"tensorflow": ("NotImplementedError",), "jax": ("TypeError", "NotImplementedError")}


def _classified(*findings: dict) -> pd.DataFrame:
    return classify_findings(pd.DataFrame(list(findings)), lambda b: _REFUSE.get(b, ()))


def _kernel(**kw) -> dict:
    return _finding(
        culprit="softplus",
        culprit_primitive="softplus(u)",
        culprit_partial="uu",
        culprit_outcome="zero",
        culprit_inputs=json.dumps({"u": 20.0}),
        culprit_got=0.0,
        culprit_truth="2.0611536e-9",
        culprit_method="reverse",
        **kw,
    )


def test_one_kernel_failing_in_two_cases_and_two_frameworks_is_one_root_cause():
    found = _classified(
        _kernel(case="softplus", implementation="builtin"),
        _kernel(case="softplus", implementation="builtin", backend="jax", id="f2"),
        _kernel(case="logistic", implementation="sigmoid_form", order=3, partial="ttt"),
        _kernel(case="softplus", implementation="builtin", outcome="inaccurate", id="f3"),
    )
    roots = root_causes(found)
    assert len(roots) == 1
    r = roots.iloc[0]
    assert r["id"] == "kernel:softplus:wrong" and r["kind"] == "kernel"
    assert r["frameworks"] == "tensorflow, jax" and r["cases"] == "softplus, logistic"
    assert r["orders"] == "2, 3" and r["members"] == 4
    assert set(json.loads(r["findings"])) == {
        "softplus:f1",
        "softplus:f2",
        "logistic:f1",
        "softplus:f3",
    }


@pytest.mark.parametrize(
    "other",
    [
        {"culprit": "sigmoid"},  # another primitive
        {"outcome": "nan"},  # non-finite against a finite value off the truth
        {"culprit": ""},  # no primitive to blame: the implementation's formula
        {"methods": "forward", "methods_ok": json.dumps({"reverse": 1.0}), "culprit": ""},
    ],
)
def test_two_mechanisms_never_share_a_root_cause(other):
    found = _classified(_kernel(), {**_kernel(id="f2"), **other})
    roots = root_causes(found)
    assert len(roots) == 2
    assert sorted(len(json.loads(f)) for f in roots["findings"]) == [1, 1]


def test_one_mechanism_in_two_dtypes_is_one_root_cause_with_regions_per_dtype():
    wide = {"lo": 37.0, "hi": 700.0, "worst_inputs": json.dumps({"x": 40.0})}
    found = _classified(_kernel(), _kernel(id="f2", dtype="float64", **wide))
    roots = root_causes(found)
    assert len(roots) == 1
    r = roots.iloc[0]
    assert r["id"] == "kernel:softplus:wrong" and r["dtypes"] == "float32, float64"
    regions = json.loads(r["regions"])
    # Each dtype keeps its own interval: float32's [16, 80] is not widened by float64's.
    assert [(g["dtype"], g["lo"], g["hi"]) for g in regions] == [
        ("float32", 16.0, 80.0),
        ("float64", 37.0, 700.0),
    ]
    text = r["text"]
    assert "c (float32): x in [16.0, 80.0]" in text and "c (float64): x in [37.0, 700.0]" in text
    assert "in float32 and float64" in text


def test_finite_differences_failing_in_two_cases_are_one_stencil_root_cause():
    fd = {"methods": "finite_difference"}
    found = _classified(_finding(**fd), _finding(id="f2", case="d", **fd), _finding(id="f3"))
    assert list(found["subject"]) == ["finite_difference", "finite_difference", "c.impl"]
    roots = root_causes(found)
    stencil = roots[roots["id"] == "formula:finite_difference:wrong"].iloc[0]
    assert stencil["cases"] == "c, d" and stencil["members"] == 2


def test_every_finding_belongs_to_exactly_one_root_cause_or_the_unsupported_table():
    findings = [
        _kernel(id="f1"),
        _finding(id="f2", methods="finite_difference"),
        _finding(id="f3", modes="function", modes_ok=json.dumps({"eager": 1.0, "xla": 0.9})),
        _finding(id="f4", outcome="error", backend="jax", error_text="TypeError: can't apply"),
        _finding(id="f5", outcome="error", error_text="IndexError: list index out of range"),
        _finding(id="f6", methods="forward", methods_ok=json.dumps({"reverse": 1.0})),
        _finding(id="f7", backends_ok=json.dumps({"jax": 1.0})),
        _finding(id="f8", intermediate="exp(x)"),
    ]
    found = _classified(*findings)
    assert list(found["kind"]) == [
        "kernel",
        "formula",
        "mode",
        "unsupported",
        "method",
        "method",
        "framework",
        "formula",
    ]
    roots, unsupported = root_causes(found), unsupported_table(found)
    members = [m for f in roots["findings"] for m in json.loads(f)]
    members += [m for f in unsupported["findings"] for m in json.loads(f)]
    assert sorted(members) == sorted(f"c:f{i}" for i in range(1, 9))
    assert unsupported.iloc[0]["exception"] == "TypeError: can't apply"


def test_a_compiled_mode_localised_to_a_primitive_is_one_root_cause_across_implementations():
    def div(implementation: str, mode: str, **kw) -> dict:
        found = _kernel(implementation=implementation, culprit_mode=mode, modes="xla", **kw)
        return {**found, "culprit": "div", "modes_ok": json.dumps({"eager": 1.0})}

    found = _classified(
        div("autodiff", "xla"),
        div("stable_division", "xla", id="f2"),
        # Named only in eager (the compiled mode was not localised): the implementation's.
        div("seed_newdiv", "eager", id="f3"),
    )
    assert list(found["subject"]) == ["div@tensorflow:xla"] * 2 + ["c.seed_newdiv@tensorflow"]
    roots = root_causes(found)
    named = roots[roots["id"] == "mode:div@tensorflow:xla:wrong"].iloc[0]
    assert named["implementations"] == "c.autodiff, c.stable_division"
    assert "under XLA (jit_compile=True), the derivative of div" in named["text"]


def test_one_method_failing_in_two_frameworks_is_one_root_cause():
    forward = {"methods": "forward", "methods_ok": json.dumps({"reverse": 1.0})}
    found = _classified(_finding(**forward), _finding(id="f2", backend="jax", **forward))
    roots = root_causes(found)
    assert list(roots["id"]) == ["method:c.impl:wrong"]
    assert roots.iloc[0]["frameworks"] == "tensorflow, jax"
    assert "(only in forward mode); another method" in roots.iloc[0]["text"]
    # Three methods read as a list, not "a and b and c".
    three = {**forward, "methods": "forward, forward_over_reverse, taylor"}
    text = root_causes(_classified(_finding(**three))).iloc[0]["text"]
    assert "(only in forward mode, forward-over-reverse and Taylor mode (jet))" in text


def test_one_crash_reached_through_several_implementations_is_one_root_cause():
    """TensorFlow's forward-over-reverse raised the same IndexError under tf.function in
    13 census kernels (pow, maximum, abs, xlogy, ...): one crash, one statement."""
    crash = {
        "outcome": "error",
        "methods": "forward_over_reverse",
        "modes": "function, xla",
        "order": 3,
        "partial": "xxx",
        "error_text": "IndexError: list index out of range",
    }
    pow_xy = {"worst_inputs": json.dumps({"x": 0.0, "y": 1.0}), "hits": 9}
    found = _classified(
        _finding(case="census_pow", implementation="kernel", **crash, **pow_xy),
        _finding(case="census_abs", implementation="kernel", **crash),
        _finding(case="census_abs", implementation="kernel", id="f2", dtype="float64", **crash),
        # Another exception, another method, another framework: three other crashes.
        _finding(
            case="census_abs",
            implementation="kernel",
            id="f3",
            **{**crash, "error_text": "ValueError: shapes differ"},
        ),
        _finding(
            case="census_abs", implementation="kernel", id="f4", **{**crash, "methods": "reverse"}
        ),
        _finding(case="census_abs", implementation="kernel", id="f5", backend="torch", **crash),
    )
    roots = root_causes(found).set_index("id")
    assert len(roots) == 4
    digest = hashlib.sha1(b"IndexError: list index out of range").hexdigest()[:6]
    one = roots.loc[f"method:tensorflow:forward_over_reverse:IndexError-{digest}:error"]
    assert one["members"] == 3 and one["cases"] == "census_pow, census_abs"
    assert one["dtypes"] == "float32, float64"
    assert "raise at order 3" in one["text"]
    assert (
        one["text"]
        .split(" (")[0]
        .endswith("census_pow.kernel, census_abs.kernel raise at order 3 in float32 and float64")
    )
    assert ": IndexError: list index out of range" in one["text"]
    assert "@" not in one["text"].split(". ")[0]
    # It raised: the example names where, with no value (a crash's is NaN) and no truth.
    assert "got nan" not in one["text"] and "truth" not in one["text"]
    assert "; for example census_" in one["text"] and one["text"].endswith(", float32)")
    # Its example and script: the member with the fewest inputs (abs's x, not pow's x
    # and y, though pow has more hits), the shortest script to run.
    assert json.loads(one["worst"])["case"] == "census_abs"
    assert "for example census_abs.kernel" in one["text"]


def test_a_value_that_raises_is_the_kernel_at_every_order_it_reaches():
    """TensorFlow 2.21's ``tf.experimental.numpy.hypot`` of bfloat16 raises at order 0,
    and so at every order: the kernel's crash, one root cause, whatever the method."""
    text = "AttributeError: EagerTensor object has no attribute 'astype'."
    crash = {"outcome": "error", "dtype": "bfloat16", "error_text": text}
    every = {"methods": "reverse, forward, finite_difference", **crash}
    found = _classified(
        _finding(case="census_hypot", implementation="kernel", order=0, partial="", **every),
        _finding(case="census_hypot", implementation="kernel", id="f2", order=1, **every),
        # A fourth order that also meets another exception after it: the same first one.
        _finding(
            case="census_hypot",
            implementation="kernel",
            id="f3",
            order=4,
            methods="forward",
            **{**crash, "error_text": text + "\nIndexError: list index out of range"},
        ),
        _finding(case="census_logaddexp", implementation="kernel", order=0, partial="", **every),
        # Not reached through the value: float16's value is computed (no order-0 crash in
        # float16), another implementation, another framework.
        _finding(
            case="census_hypot", implementation="kernel", id="f4", **{**every, "dtype": "float16"}
        ),
        _finding(case="census_hypot", implementation="other", id="f5", **every),
        _finding(case="census_hypot", implementation="kernel", id="f6", backend="jax", **every),
    )
    assert list(found["kind"]) == ["kernel"] * 4 + ["method"] * 3
    key = f"kernel:tensorflow:AttributeError-{hashlib.sha1(text.encode()).hexdigest()[:6]}:error"
    assert list(found["root_cause"])[:4] == [key] * 4
    roots = root_causes(found).set_index("id")
    one = roots.loc[key]
    assert one["members"] == 4 and one["cases"] == "census_hypot, census_logaddexp"
    assert one["orders"] == "0, 1, 4"
    assert "raise computing the value itself, and so at orders 0, 1, 4 in bfloat16" in one["text"]
    assert one["text"].split(". ")[0].endswith("no attribute 'astype'")
    # The three others stay crashes of their methods, each its own.
    assert sum(roots.index.str.startswith("method:")) == 2
    assert found["root_cause"].iat[4] == found["root_cause"].iat[5]


def test_a_case_with_many_regions_is_told_by_their_count_and_bounds():
    """A crash at every point of a sweep is a region per point: listed one by one they
    made a statement of 15,820 characters in the quick census. Past LISTED, a case's
    regions are their count and the least and greatest bound of each input."""
    xs = [2.0**k for k in range(-40, 41, 8)] + [-(2.0**k) for k in range(-30, 31, 10)]
    many = [{"case": "a", "input": "x", "lo": x, "hi": x} for x in xs]
    grid = {"case": "a", "ranges": {"x": [-(2.0**50), 1.0], "y": [0.5, 4.0]}}
    few = [{"case": "b", "input": "t", "lo": 1.5, "hi": 1.5}]
    text = regions_text([*many, grid, *few], "float64")
    a, b = text.split("; ")
    assert len(many) + 1 > LISTED
    head, within = a.split(" within ")
    assert head == f"a: {len(many) + 1} regions"
    bounds = dict(part.split(" in ") for part in within.split("], "))
    lo, hi = (float(v) for v in bounds["x"].strip("[]").split(", "))
    assert (lo, hi) == (-(2.0**50), 2.0**40)
    lo, hi = (float(v) for v in bounds["y"].strip("[]").split(", "))
    assert (lo, hi) == (0.5, 4.0)
    assert b == "b: t = 1.5"
    # At LISTED or fewer, each is told as before.
    assert regions_text(many[:LISTED], "float64").count("x = ") == LISTED


def test_a_mechanism_in_many_cases_is_told_by_their_count_and_its_example():
    """Finite differences across 60 census kernels listed every case's regions: a
    statement of 12,789 characters. Past CASES_LISTED cases, the statement tells how many
    and the regions of its example's case (in each of its dtypes); the bug report, which
    passes no example, still lists them all."""
    names = [f"census_k{i}" for i in range(CASES_LISTED + 3)]
    regions = [
        {"case": c, "input": "x", "lo": i + 0.25, "hi": i + 0.5, "dtype": d}
        for i, c in enumerate(names)
        for d in ("float32", "float64")
    ]
    text = regions_text(regions, "float32", example="census_k4")
    assert text == (
        f"{len(names)} cases, for example census_k4 (float32): x in [4.25, 4.5]; "
        "census_k4 (float64): x in [4.25, 4.5]"
    )
    # An example outside the regions: the first case stands for them.
    assert regions_text(regions, "float32", example="other").startswith(
        f"{len(names)} cases, for example census_k0 (float32): "
    )
    # Without an example, or at CASES_LISTED cases or fewer, every case is told.
    assert all(f"{c} (float64)" in regions_text(regions, "float32") for c in names)
    few = [r for r in regions if r["case"] in names[:CASES_LISTED]]
    told = regions_text(few, "float32", example="census_k4")
    assert all(f"{c} (float32)" in told for c in names[:CASES_LISTED])


@pytest.mark.parametrize(
    ("kw", "kind"),
    [
        # Every primitive right at its arguments, bits lost: rounding, the expression's.
        ({"localised": 1.0, "outcome": "inaccurate", "worst_got": 2.0611e-9}, "formula"),
        # The same with nothing localised: no evidence that the rules are right.
        ({"localised": 0.0, "outcome": "inaccurate", "worst_got": 2.0611e-9}, "framework"),
        # A NaN is no rounding, whatever the primitives say.
        ({"localised": 1.0, "outcome": "nan", "worst_got": float("nan")}, "framework"),
        # A zero where the truth holds its own (2e-9 against a scale of 1e-3): no noise.
        ({"localised": 1.0, "outcome": "zero", "scale": 1e-3}, "framework"),
    ],
)
def test_a_framework_that_only_rounds_differently_is_the_formula(kw, kind):
    f = _finding(backends_ok=json.dumps({"jax": 1.0}), **kw)
    assert decide(f, ())[0] == kind


def test_a_mode_that_includes_eager_is_not_a_compiler_effect():
    shares = json.dumps({"xla": 1.0})
    assert decide(_finding(modes="eager, function", modes_ok=shares), ())[0] == "formula"
    assert decide(_finding(modes="function", modes_ok=json.dumps({"eager": 1.0})), ())[0] == "mode"


def test_a_wrong_rule_comes_before_the_primitives_and_a_right_one_after():
    wrong = json.dumps(
        [{"rule": "impl", "input": "x", "right": False, "got": "1", "truth": "2", "at": {}}]
    )
    right = json.dumps(
        [{"rule": "impl", "input": "x", "right": True, "got": "2", "truth": "2", "at": {}}]
    )
    assert decide(_kernel(rules=wrong), ())[0] == "rule"
    assert decide(_kernel(rules=right), ()) == ("kernel", "softplus")
    assert decide(_finding(rules=right), ()) == ("rule", "c.impl")
    # A right rule of a function the expression calls does not make the finding a rule's.
    called = right.replace('"impl"', '"foo"')
    assert decide(_finding(rules=called), ())[0] == "formula"
    # A right rule whose points another framework gets right through it, where this one
    # gives a bare 0: it drops the rule's derivative (PyTorch's 0 through an
    # autograd.Function's jvp); bits lost or a NaN there stay the rule's instability.
    shares = json.dumps({"jax": 1.0})
    elsewhere = _finding(rules=right, backend="torch", backends_ok=shares, outcome="zero")
    assert decide(elsewhere, ()) == ("framework", "c.impl@torch")
    lost = _finding(rules=right, backend="torch", backends_ok=shares, outcome="nan")
    assert decide(lost, ()) == ("rule", "c.impl")


def test_forward_rules_are_checked_against_dx_times_the_partial_exactly(tmp_path):
    """A ``tangent`` rule is each input's share of the tangent: checked at dx = 1 and
    dx = 2 against dx times the partial (a rule without dx is right at dx = 1 only); an
    input it leaves out contributes 0. At (a, b) = (3, 2), d(a*b**2)/da = b**2 = 4 and
    d/db = 2ab = 12 (integers)."""
    path = write_case(
        tmp_path,
        "tangents",
        """\
        title: tangent rules
        source: test
        inputs:
          a: {values: [3.0]}
          b: {values: [2.0]}
        function: a * b**2
        derivatives: {partials: [a, b]}
        implementations:
          right:
            expression: a * b**2
            tangent: {a: dx * b**2, b: dx * 2 * a * b}
          no_dx:
            expression: a * b**2
            tangent: {a: b**2, b: dx * 2 * a * b}
          half:
            expression: a * b**2
            tangent: {a: dx * b**2}
        """,
    )
    case = load_case(path)
    at = {"a": 3.0, "b": 2.0}
    right = check_rules(case, case.implementation("right"), at)
    assert [(c["kind"], c["input"], c["right"]) for c in right] == [
        ("tangent", "a", True),
        ("tangent", "b", True),
    ]
    assert [mpmath.mpf(c["truth"]) for c in right] == [4, 12]
    no_dx = {c["input"]: c for c in check_rules(case, case.implementation("no_dx"), at)}
    assert not no_dx["a"]["right"] and no_dx["a"]["dx"] == 2
    assert mpmath.mpf(no_dx["a"]["got"]) == 4 and mpmath.mpf(no_dx["a"]["truth"]) == 8
    assert no_dx["b"]["right"]
    half = {c["input"]: c for c in check_rules(case, case.implementation("half"), at)}
    assert half["a"]["right"] and not half["b"]["right"] and half["b"]["left_out"]


def test_a_finding_keeps_only_the_rules_its_framework_and_methods_go_through():
    """JAX: one rule per function, the forward one where there is one; PyTorch: reverse
    mode through ``backward`` (the gradient), forward mode through ``jvp`` (the tangent);
    TensorFlow: the gradient rule in every method; finite differences through none."""
    from harness.backends import catalogue

    rules = [
        {"rule": "f", "kind": "gradient", "input": "x", "right": True},
        {"rule": "f", "kind": "tangent", "input": "x", "right": False},
        {"rule": "g", "kind": "gradient", "input": "x", "right": True},
    ]

    def used(backend, *methods):
        return [(r["rule"], r["kind"]) for r in catalogue.get(backend).rules_used(rules, methods)]

    assert used("jax", "reverse") == [("f", "tangent"), ("g", "gradient")]
    assert used("jax", "taylor") == []
    assert used("torch", "reverse") == [("f", "gradient"), ("g", "gradient")]
    assert used("torch", "forward") == [("f", "tangent")]
    assert used("torch", "forward_over_reverse") == [
        ("f", "gradient"),
        ("f", "tangent"),
        ("g", "gradient"),
    ]
    assert used("tensorflow", "forward") == [("f", "gradient"), ("g", "gradient")]
    assert used("tensorflow", "finite_difference") == []


def test_outcome_classes():
    assert [outcome_class(o) for o in ("nan", "inf", "wrong", "zero", "inaccurate")] == [
        "nonfinite",
        "nonfinite",
        "wrong",
        "wrong",
        "wrong",
    ]


@pytest.mark.parametrize(
    ("kw", "tier"),
    [
        ({"outcome": "nan", "worst_got": float("nan"), "worst_inputs": '{"x": 100.0}'}, 4),
        # NaN at an input beyond the square root of the largest float32: the range's end.
        ({"outcome": "nan", "worst_got": float("nan"), "worst_inputs": '{"x": 1e30}'}, 3),
        # A wrong sign at an ordinary input.
        ({"outcome": "wrong", "worst_got": -2.0, "worst_truth": "2"}, 4),
        # 2.4 for 4.2: one correct bit, though the vocabulary says inaccurate.
        ({"outcome": "inaccurate", "worst_got": 2.4, "worst_truth": "4.2"}, 3),
        ({"outcome": "inaccurate", "worst_got": 1.0001, "worst_truth": "1"}, 2),
        # 4.5e-16 for a true -8e-20 beside a first derivative of 1: noise at its scale.
        ({"outcome": "wrong", "worst_got": 4.5e-16, "worst_truth": "-8e-20", "scale": 1.0}, 1),
        # The logistic's d³/dt³ at t = 17.96 in float32: -1.0e-6 for a true 1.6e-8 beside a
        # value of 1 is 8.4 eps of its scale, the size-1 terms' rounding: noise.
        (
            {
                "outcome": "wrong",
                "worst_got": -1.0056850214823498e-06,
                "worst_truth": "1.5896835e-8",
                "scale": 1.0,
            },
            1,
        ),
        # Noise is a small error too, not only a small truth: -2.4e-4 for a true 1.1e-10
        # beside a value of 1 is 2048 eps of it (11 bits of the scale lost), a wrong sign;
        # 7.03 for a true 0 beside a value of 1 (RK4's d/dr) is no noise at all; nor is
        # -1.5e23 for a true 6.7e-24 (seed 004's rule).
        (
            {
                "outcome": "wrong",
                "worst_got": -0.000244140625,
                "worst_truth": "1.0551644e-10",
                "scale": 1.0,
            },
            4,
        ),
        (
            {
                "outcome": "wrong",
                "worst_got": 7.027472126136557,
                "worst_truth": "0",
                "scale": 1.0,
                "dtype": "float64",
            },
            3,
        ),
        (
            {
                "outcome": "wrong",
                "worst_got": -1.5031092519121828e23,
                "worst_truth": "6.65e-24",
                "scale": 53.37,
            },
            4,
        ),
    ],
)
def test_severity_ranks_by_impact(kw, tier):
    assert severity(_finding(**kw)) == tier


def test_a_short_stretch_of_failures_gets_a_localised_value_of_its_own():
    # 60 zeros, then 2 values with bits lost (a finding of their own), then 140 zeros:
    # the evenly spread sample (rows 0, 50, 100, 151, 201) would miss rows 60 and 61.
    points = [*range(60), 1000, 1001, *range(2000, 2140)]
    outcomes = ["zero"] * 60 + ["inaccurate"] * 2 + ["zero"] * 140
    rows = pd.DataFrame(
        {
            "implementation": "builtin",
            "dtype": "float32",
            "partial": "xxx",
            "method": "reverse",
            "point": points,
            "outcome": outcomes,
            "bits": [24.0] * 60 + [6.0, 7.0] + [24.0] * 140,
        }
    )
    # Two groups (another partial), each sampled on its own.
    both = pd.concat([rows, rows.assign(partial="xxxx")], ignore_index=True)
    picked = sample_failures(both)
    for _, mine in picked.groupby("partial"):
        assert 1001 in set(mine["point"])  # the worst of the short stretch
        assert len(mine) <= SAMPLE + RUNS and mine["point"].is_unique
    # Without stretches (a grid's consecutive points are its rows): the spread alone.
    assert sorted(sample_failures(rows, 0)["point"]) == [0, 50, 2038, 2089, 2139]


def test_failures_along_one_input_are_one_axis_in_every_dtype_they_share_numbers_in():
    # Point numbers are each dtype's own: 1.0 is point 3 in float32 and point 4 in
    # float64 (point 3 there is 0.25). Read across dtypes, two numbers with one input
    # looked like a grid's row, and a one-input case evaluated in both dtypes at once
    # lost its stretches (softplus: 89 localised rows, 131 in one dtype at a time).
    one = pd.DataFrame(
        {
            "dtype": ["float32", "float64", "float64"],
            "point": [3, 3, 4],
            "x": [1.0, 0.25, 1.0],
            "y": 2.0,
        }
    )
    assert one_axis(one.iloc[[0, 2, 1]], ["x"])  # whichever dtype comes first
    assert one_axis(one, ["x"])
    # A grid: in one dtype, two points with the same first input.
    grid = pd.concat([one, one.iloc[[2]].assign(point=5, y=3.0)], ignore_index=True)
    assert not one_axis(grid, ["x", "y"])


@pytest.mark.parametrize(
    ("kw", "kind"),
    [
        # Bits lost where the other framework gets half the points right: each rounds at
        # the tolerance's edge in its own places (RK4's three frameworks), the formula's.
        ({"outcome": "inaccurate", "worst_got": 2.0611e-9, "share": 0.52}, "formula"),
        # The other framework right nearly everywhere: this framework's own.
        ({"outcome": "inaccurate", "worst_got": 2.0611e-9, "share": 0.95}, "framework"),
        # A zero is no rounding: half the points right elsewhere is enough.
        ({"outcome": "zero", "scale": 1e-3, "share": 0.52}, "framework"),
    ],
)
def test_bits_lost_take_a_decisive_other_framework_to_be_a_framework_s(kw, kind):
    share = kw.pop("share")
    f = _finding(backends_ok=json.dumps({"jax": share, "torch": share / 2}), **kw)
    assert decide(f, ())[0] == kind


def test_one_implementation_failing_under_xla_in_two_frameworks_is_one_root_cause():
    compiled = {
        "tensorflow": {"function": "Grappler", "xla": "XLA"},
        "jax": {"jit": "XLA"},
    }
    shares = json.dumps({"eager": 1.0})
    found = classify_findings(
        pd.DataFrame(
            [
                _finding(modes="xla", modes_ok=shares),
                _finding(id="f2", backend="jax", modes="jit", modes_ok=shares),
                # Under tf.function only: Grappler's rewrite, another compiler.
                _finding(id="f3", modes="function", modes_ok=shares),
                # Under both of TensorFlow's compiled modes: no one compiler to name.
                _finding(id="f4", modes="function, xla", modes_ok=shares),
            ]
        ),
        lambda b: (),
        lambda b: compiled.get(b, {}),
    )
    assert list(found["subject"]) == [
        "c.impl@XLA",
        "c.impl@XLA",
        "c.impl@Grappler",
        "c.impl@tensorflow",
    ]
    roots = root_causes(found)
    xla = roots[roots["id"] == "mode:c.impl@XLA:wrong"].iloc[0]
    assert xla["frameworks"] == "tensorflow, jax" and xla["modes"] == "xla, jit"
    assert xla["text"].startswith("tensorflow, jax: c.impl compiled by XLA is ")


def test_a_rule_proven_wrong_is_one_root_cause_whatever_its_values_come_to():
    wrong = json.dumps(
        [{"rule": "impl", "input": "x", "right": False, "got": "1", "truth": "2", "at": {}}]
    )
    right = wrong.replace('"right": false', '"right": true')
    nan = {"outcome": "nan", "worst_got": float("nan")}
    found = _classified(
        _finding(rules=wrong, scale=1e-3),  # a zero where the truth is not noise
        _finding(id="f2", rules=wrong, **nan),
        _finding(id="f3", rules=wrong, outcome="missing", expected="expected"),
        # A rule right in exact arithmetic: overflow and cancellation are two mechanisms.
        _finding(id="f4", implementation="stable", rules=right.replace("impl", "stable")),
        _finding(id="f5", implementation="stable", rules=right.replace("impl", "stable"), **nan),
    )
    roots = root_causes(found)
    assert sorted(roots["id"]) == [
        "rule:c.impl:nonfinite",
        "rule:c.stable:nonfinite",
        "rule:c.stable:wrong",
    ]
    proven = roots[roots["id"] == "rule:c.impl:nonfinite"].iloc[0]
    assert proven["members"] == 3 and proven["expected"] == "partly expected"
    assert "NaN, wrong (at most 4 correct bits" in proven["text"]
    assert "or missing (no gradient returned)" in proven["text"]


def test_a_statement_says_bits_lost_not_a_factor_of_2_where_bits_are_lost():
    lost = {"outcome": "inaccurate", "worst_got": 1.0001, "worst_truth": "1"}
    roots = root_causes(_classified(_finding(**lost)))
    text = roots.iloc[0]["text"]
    assert roots.iloc[0]["severity"] == 2
    assert "inaccurate (bits lost beyond the tolerance, more than 4 bits right)" in text
    assert "at most 4 correct bits" not in text


def test_a_statement_tells_each_framework_s_tier_where_they_differ():
    # TensorFlow gives -1 for a true 2 (the wrong sign at an ordinary input, tier 4); JAX
    # 0.5 (|0.5 - 2| / 2 = 3/4: under 1 correct bit, tier 3). One kernel, one root cause,
    # whose words must hold for each framework it names.
    sign = {"outcome": "wrong", "worst_got": -1.0, "worst_truth": "2"}
    bits = {"outcome": "wrong", "worst_got": 0.5, "worst_truth": "2"}
    roots = root_causes(_classified(_kernel(**sign), _kernel(id="f2", backend="jax", **bits)))
    (r,) = roots.itertuples()
    assert r.frameworks == "tensorflow, jax" and r.severity == 4
    assert (
        "are wrong (tensorflow: the wrong sign at ordinary inputs; jax: at most 4 correct "
        "bits, a 0 or the wrong sign) in float32" in r.text
    )
    # The same tier in both: one word for both, no framework singled out.
    same = root_causes(_classified(_kernel(**sign), _kernel(id="f2", backend="jax", **sign)))
    assert "are wrong (the wrong sign at ordinary inputs) in float32" in same.iloc[0]["text"]


def test_a_reproducer_shows_the_worst_member_a_script_can_compute():
    # census_hypot_diagonal's TensorFlow root cause had no script: its worst member merged
    # finite differences and autodiff, its worst point by finite differences.
    members = pd.DataFrame(
        {
            "id": ["fd-worst", "autodiff", "fd-only"],
            "methods": ["finite_difference, reverse", "reverse", "finite_difference"],
            "worst_method": ["finite_difference", "reverse", "finite_difference"],
            "order": [4, 2, 4],
            "impact": [3, 3, 3],
            "severity": [4, 2, 4],
            "hits": [10, 5, 10],
        }
    )
    assert worst_first(members)["id"].tolist() == ["autodiff", "fd-worst", "fd-only"]
    assert worst_first(members)["id"].iloc[0] == "autodiff"
    # The statement names the member the script shows, though the other's point is worse.
    fd_worst = _kernel(id="f1", methods="finite_difference, reverse", order=4, partial="xxxx")
    fd_worst.update(worst_method="finite_difference", outcome="nan", severity=4)
    autodiff = _kernel(id="f2", outcome="nan", severity=4)
    roots = root_causes(_classified(fd_worst, autodiff))
    assert len(roots) == 1 and roots.iloc[0]["members"] == 2
    worst = json.loads(roots.iloc[0]["worst"])
    assert (worst["finding"], worst["method"]) == ("c:f2", "reverse")
    # Only finite differences: the worst stands (the probe command reproduces it).
    only = members[members["id"] != "autodiff"]
    assert worst_first(only)["id"].iloc[0] == "fd-worst"


def test_a_refusal_is_the_frameworks_own_exception_not_every_one_of_its_type():
    """JAX refuses forward mode through a ``custom_vjp`` function with a TypeError; its
    ``jet`` of ``erfinv`` in float32 (x64 on) raised another TypeError in the quick census,
    a bug: only the first is ``unsupported``, with the back ends' own refusals."""
    import jax

    from harness.backends.catalogue import SPECS
    from harness.causes.classify import refused

    @jax.custom_vjp
    def f(x):
        return x

    f.defvjp(lambda x: (x, None), lambda _, g: (g,))
    with pytest.raises(TypeError) as raised:  # JAX's own words, from JAX
        jax.jvp(f, (1.0,), (1.0,))
    refusal = f"TypeError: {raised.value}"
    bug = (
        "TypeError: lax.mul requires arguments to have the same dtypes, got float64, "
        "float32. (Tip: jnp.multiply is a similar function that does automatic type "
        "promotion on inputs)."
    )
    jax_refusals = SPECS["jax"].refusals
    assert refused(refusal, jax_refusals) and not refused(bug, jax_refusals)
    assert refused("UnexpectedTracerError: Encountered an unexpected tracer.", jax_refusals)
    tf_refusals = SPECS["tensorflow"].refusals
    assert refused("LookupError: gradient registry has no entry for: SoftsignGrad", tf_refusals)
    assert not refused("IndexError: list index out of range", tf_refusals)
    # Through the classification: the bug is a crash of jet, the refusal unsupported.
    rows = [
        _finding(id="f1", outcome="error", backend="jax", methods="taylor", error_text=bug),
        _finding(id="f2", outcome="error", backend="jax", methods="forward", error_text=refusal),
    ]
    found = classify_findings(pd.DataFrame(rows), lambda b: SPECS[b].refusals)
    assert list(found["kind"]) == ["method", "unsupported"]
    # The id names the crash by its type and a digest of its text (dtypes as <dtype>),
    # never its message: the statement quotes that.
    shape = bug.replace("float64", "<dtype>").replace("float32", "<dtype>")
    digest = hashlib.sha1(shape.encode()).hexdigest()[:6]
    assert found["root_cause"].iloc[0] == f"method:jax:taylor:TypeError-{digest}:error"
    # Its statement: the exception in the member's own words (the key has <dtype>), the
    # dtype it raises in.
    (text,) = root_causes(found)["text"]
    assert "raises at order 2 in float32 (only in Taylor mode (jet)): TypeError: " in text
    assert "got float64, float32" in text and "<dtype>" not in text and ".." not in text


@pytest.mark.parametrize(
    "value_ok, says",
    [
        (1.0, "the derivative rule of softplus fails where its value is right, and"),
        (
            0.5,
            "the function's own value (order 0) is wrong at some of these points too: right at 50%",
        ),
        (float("nan"), "the derivative rule of softplus fails, and the derivatives"),
        # Wrong at every point of a finding: never "at some of these points: right at 0%".
        (0.0, "the function's own value (order 0) is wrong at these points too: right at none"),
        # 199 of 200 right is not all of them.
        (0.995, "is wrong at some of these points too: right at 99% of them"),
    ],
)
def test_a_kernel_statement_says_the_value_is_right_only_where_order_0_was_judged_right(
    value_ok, says
):
    (text,) = root_causes(_classified(_kernel(value_ok=value_ok)))["text"]
    assert says in text
    assert ("value is right" in text) == (value_ok == 1.0)


def test_a_kernel_whose_own_value_is_wrong_is_told_as_its_value_with_no_empty_clause():
    """A census expm1 computed as exp(x) - 1 returns 0 for a tiny negative x: the value
    kernel is wrong, and the statement said the derivative rule failed "where its value
    is right", then "Judged alone at the input it receives: ." with nothing after it."""
    found = _classified(_finding(case="census_expm1", value_wrong="expm1", value_ok=0.0))
    (text,) = root_causes(found)["text"]
    assert text.startswith("tensorflow: the value of expm1 is wrong at the inputs it receives")
    assert "value is right" not in text and "derivative rule" not in text
    assert ": ." not in text and "receives: ." not in text


def test_two_frameworks_failing_apart_never_each_claim_the_others_are_right():
    """TensorFlow NaN and PyTorch 0 at the same points, JAX right: each statement read
    "only in TensorFlow (PyTorch): ... the other frameworks get these points right",
    contradicting the other. Each now names who is right there and who fails too."""
    tf = _finding(outcome="nan", worst_got=float("nan"), severity=4)
    tf["backends_ok"] = json.dumps({"jax": 1.0, "torch": 0.0})
    torch = _finding(id="f2", backend="torch")
    torch["backends_ok"] = json.dumps({"jax": 1.0, "tensorflow": 0.0})
    alone = _finding(id="f3", backend="jax", case="other")
    alone["backends_ok"] = json.dumps({"tensorflow": 1.0, "torch": 0.96})
    roots = root_causes(_classified(tf, torch, alone)).set_index("id")
    assert set(roots["kind"]) == {"framework"} and len(roots) == 3
    texts = {r.frameworks: r.text for r in roots.itertuples()}
    assert not any(t.startswith("only in") for b, t in texts.items() if b != "jax")
    assert (
        "jax gets 100% of these points right, while torch (right at 0%) fails there too"
        in (texts["tensorflow"])
    )
    assert "tensorflow (right at 0%) fails there too" in texts["torch"]
    # Where every other framework is right, the statement says so: only in JAX.
    assert texts["jax"].startswith("only in jax: ")
    assert "tensorflow and torch get 100% and 96% of these points right" in texts["jax"]


def test_a_share_reads_100_or_0_percent_only_where_it_is_exactly_that():
    from harness.causes.clauses import percent

    assert [percent(v) for v in (1.0, 0.0, 0.995, 0.004, 0.5, 0.985)] == [
        "100%",
        "0%",
        "99%",
        "1%",
        "50%",
        "98%",
    ]


def test_every_kind_of_root_cause_has_its_colour_on_the_pages():
    from harness.causes.classify import KINDS
    from harness.report.root_causes_list import KIND_COLOURS

    assert set(KIND_COLOURS) == set(KINDS) - {"unsupported"}


def test_a_script_shows_the_failure_as_the_outcome_vocabulary_judges_it():
    """torch's d²/dv² of u/v at u = -v = -4.6e22 in float32 is -0.0 where the truth
    rounds to the smallest subnormal -2**-149: one ulp off, and still the spurious 0 the
    finding names (a 0 outranks the ulps budget), so its script shows it."""
    from harness.causes.reproduce import shows_failure

    tiny = -(2.0**-149)
    assert shows_failure(-0.0, tiny, "float32", 4.0)
    assert shows_failure(float("inf"), 3.0e38, "float32", 4.0)
    assert shows_failure(float("nan"), 1.0, "float32", 4.0)
    assert not shows_failure(float(np.nextafter(np.float32(1), np.float32(2))), 1.0, "float32", 4.0)
    assert shows_failure(1.0 + 2.0**-23 * 5, 1.0, "float32", 4.0)
    assert not shows_failure(1.0, float("nan"), "float32", 4.0)


def test_a_primitive_s_wrong_value_and_its_wrong_rule_are_two_root_causes():
    """PyTorch's softplus returns x for x > 20 (its threshold), wrong in float64 at
    x in [20.5, 31]: its value kernel. Its second derivative is 0 past 20 in every
    framework: the rule s(1 - s). Two mechanisms of one primitive, two statements."""
    found = _classified(
        _kernel(value_ok=0.5),
        _finding(id="f2", backend="torch", order=0, partial="", value_wrong="softplus"),
    )
    roots = root_causes(found).set_index("id")
    assert sorted(roots.index) == ["kernel:softplus:value:wrong", "kernel:softplus:wrong"]
    assert roots.loc["kernel:softplus:value:wrong", "text"].startswith(
        "torch: the value of softplus is wrong at the inputs it receives"
    )
    assert audit(roots.reset_index(), found) == []
    # Merged as they were, the checker says the two do not share a mechanism.
    merged = found.assign(root_cause="kernel:softplus:wrong")
    one = root_causes(found).iloc[[0]].assign(id="kernel:softplus:wrong", primitive="softplus")
    assert {p.rule for p in audit(one, merged)} >= {"one mechanism"}


def test_a_reproducer_s_numbers_are_told_as_its_own_and_the_probe_as_another_point():
    """A kernel's script computes the primitive alone at the input it receives; the probe
    command computes the case at the finding's worst point. The census page paired the
    probe with the script's got and truth, another point's numbers."""
    from harness.causes.repro_words import probe_words, script_words

    rep = {
        "target": "primitive softplus(u)",
        "inputs": json.dumps({"u": 20.0}),
        "derivative": "uu",
        "method": "reverse",
        "mode": "eager",
        "dtype": "float32",
        "got": 0.0,
        "truth": "2.0611536e-9",
        "reproduces": True,
        "probe": "harness probe cases/softplus.yaml builtin --at x=20.5 --partial xx",
    }
    words = script_words(rep)
    assert words.startswith("the script computes primitive softplus(u), d/duu at u = 20.0 (")
    assert "prints got 0.0; the certified truth there is 2.0611536e-9" in words
    assert "not the script's primitive" in probe_words(rep)
    case = {**rep, "target": "softplus.builtin", "reproduces": False}
    assert probe_words(case) == "the same value with the harness"
    assert "only the probe command, which computes it as the harness did" in script_words(case)


def test_a_nan_where_the_truth_overflows_says_inf_is_the_right_answer():
    """A truth of 2.59e308 in float64 makes inf the right answer: a NaN is the defect
    there, and the statement says so rather than "NaN or infinite"."""
    beyond = _finding(
        outcome="nan", dtype="float64", worst_got=float("nan"), worst_truth="2.59e308"
    )
    (text,) = root_causes(_classified(beyond))["text"]
    assert "is NaN (the truth lies beyond the dtype there: its right value is ±inf)" in text
    # 1.7976931348623158e308 rounds to the largest double, not to inf: no such clause.
    inside = {**beyond, "worst_truth": "1.7976931348623158e308"}
    (text,) = root_causes(_classified(inside))["text"]
    assert "is NaN at" in text and "beyond the dtype" not in text


def test_a_value_is_its_expression_s_whichever_rule_wraps_it():
    """softplus.doc_custom_gradient's value is log(1 + exp(x)), naive's expression: its
    order-0 NaN past 88.7 was stated as "its rule is the derivative in exact arithmetic,
    but its formula loses it in floats", though a value goes through no rule. One
    computation, one root cause, of the expression."""
    right_rule = json.dumps(
        [{"rule": "impl", "kind": "gradient", "input": "x", "right": True, "at": {"x": 100.0}}]
    )
    value = {"order": 0, "partial": "", "outcome": "nan", "worst_got": float("nan")}
    found = _classified(
        _finding(case="softplus", implementation="naive", **value, localised=1.0),
        _finding(
            case="softplus",
            implementation="impl",
            id="f2",
            rules=right_rule,
            same_value="naive",
            localised=1.0,
            **value,
        ),
    )
    roots = root_causes(found)
    assert list(roots["id"]) == ["formula:softplus.naive:nonfinite"]
    (text,) = roots["text"]
    assert "(so is the value of softplus.impl: the same expression)" in text
    assert "its rule" not in text and audit(roots, found) == []
    # A derivative of the same implementation still goes through its rule.
    derivative = _finding(case="softplus", implementation="impl", rules=right_rule)
    assert decide(derivative, ()) == ("rule", "softplus.impl")


def test_every_primitive_right_is_said_only_of_what_was_localised():
    solver = _finding(implementation="rk4", localised=0.0)
    (text,) = root_causes(_classified(solver))["text"]
    assert "no primitive was judged alone at these points" in text
    some = [_finding(localised=1.0), _finding(id="f2", localised=0.0, lo=90.0, hi=95.0)]
    (text,) = root_causes(_classified(*some))["text"]
    assert "every primitive judged alone is right at its own inputs (in 1 of its 2 findings" in text


def test_a_zero_for_a_subnormal_truth_says_so():
    """PyTorch's sigmoid is 0 at u = -94.4 in float32, where its truth 1.03e-41 is
    subnormal (the platform keeps subnormals in PyTorch here): a flush of a subnormal
    result, which the statement tells apart from a 0 for an ordinary number."""
    tiny = _finding(outcome="zero", worst_got=0.0, worst_truth="1.02757806e-41")
    (text,) = root_causes(_classified(tiny))["text"]
    said = "(where it gives 0, the truth is below float32's smallest normal, 1.1754944e-38)"
    assert said in text
    (text,) = root_causes(_classified(_finding()))["text"]  # a truth of 2.06e-9
    assert "smallest normal" not in text


def test_a_missing_gradient_is_never_shown_as_a_value():
    gone = _finding(outcome="missing", worst_got=float("nan"))
    (text,) = root_causes(_classified(gone))["text"]
    assert "got nan" not in text and "for example c.impl d²/dx² at x = 20.0 (" in text


def test_a_finding_of_mixed_outcomes_is_told_with_each_of_them():
    """A finite-difference finding labelled ``wrong`` whose points are 18 NaN and 2 wrong,
    its worst a NaN: the census said "is wrong (the wrong sign at ordinary inputs)" with a
    worst of "got nan". The statement names the NaN, and no tier of "wrong" its finite
    values do not show."""
    mixed = _finding(
        outcome="wrong",
        severity=4,
        counts=json.dumps({"nan": 18, "wrong": 2}),
        worst_got=float("nan"),
        worst_truth="-1.6759569e-77",
        dtype="float64",
    )
    (text,) = root_causes(_classified(mixed))["text"]
    assert "NaN" in text and "got nan" in text
    assert "the wrong sign at ordinary inputs" not in text
    assert "wrong (at most 4 correct bits, a 0 or the wrong sign)" in text


def test_nan_beyond_the_dtype_beside_a_finite_truth_s_infinity_is_said_of_the_nan_only():
    """sqrt's d3/dx3 is NaN at u = 2.5e-38 in float32 (truth 3.8e93: inf is right there) and
    inf at 2.6e-16 (truth 3.4028219e38, a float32): "the truth lies beyond the dtype there"
    is false of the second; the clause says where it holds."""
    nan = _kernel(outcome="nan", severity=4, worst_got=float("nan"), worst_truth="3.8e93")
    inf = _kernel(id="f2", outcome="inf", severity=4, worst_got=float("inf"))
    inf["worst_truth"] = "3.40282185580048833062561456577e+38"
    assert np.isfinite(np.float32(float(inf["worst_truth"])))  # a float32, not beyond it
    (text,) = root_causes(_classified(nan, inf))["text"]
    assert "(where it is NaN, the truth lies beyond the dtype: its right value is ±inf)" in text
    assert "beyond the dtype there" not in text


def test_zeros_for_subnormal_truths_in_two_dtypes_name_each_dtype_s_smallest_normal():
    f32 = _finding(outcome="zero", worst_got=0.0, worst_truth="1.02757806e-41")
    f64 = _finding(id="f2", dtype="float64", outcome="zero", worst_got=0.0, worst_truth="1e-310")
    (text,) = root_causes(_classified(f32, f64))["text"]
    # float32's 2**-126 as its shortest round-trip decimal, float64's 2**-1022 as repr.
    assert np.float32("1.1754944e-38") == np.float32(2.0**-126)
    assert "float32's 1.1754944e-38" in text
    assert f"float64's {float(2.0**-1022)!r}" in text
    assert "below float32's smallest normal, 1.1754944e-38)" not in text


def test_a_value_kernel_wrong_at_order_0_only_speaks_of_no_derivative():
    """PyTorch's log1p is 0 at the smallest subnormal: only the value (order 0) fails. The
    census said "the derivatives through it are wrong ... at order 0", then "the function's
    own value (order 0) is wrong at these points too"."""
    value = _finding(order=0, partial="", value_wrong="log1p", value_ok=0.0, backend="torch")
    (text,) = root_causes(_classified(value))["text"]
    assert text.startswith("torch: the value of log1p is wrong at the inputs it receives")
    assert "the function's value is" in text
    assert "derivatives through it" not in text and "wrong at these points too" not in text


@pytest.mark.parametrize(
    "dtype, factor, order, got, expected",
    [
        ("float32", 1.0, 2, 0.0, True),  # the smallest normal itself: half is subnormal
        ("float32", 1.9, 2, 0.0, True),
        ("float32", 2.1, 2, 0.0, False),  # its coefficient f''/2 is normal
        ("float32", 5.9, 3, -0.0, True),  # 3! = 6
        ("float64", 23.0, 4, 0.0, True),  # 4! = 24
        ("float64", 25.0, 4, 0.0, False),
        ("float32", 0.5, 2, 0.0, False),  # subnormal itself: judged flushed directly
        ("float32", 1.5, 2, 1e-38, False),  # not a 0
        ("float32", 1.5, 1, 0.0, False),  # order 1: f'/1! is the derivative itself
    ],
)
def test_a_taylor_coefficient_is_at_the_threshold_by_k_factorial(
    dtype, factor, order, got, expected
):
    from harness.numerics.flush import at_threshold

    tiny = mpmath.mpf(2) ** (-126 if dtype == "float32" else -1022)
    with mpmath.workdps(40):
        truth = mpmath.nstr(factor * tiny, 30)
    assert at_threshold(got, truth, dtype, order) is expected


def _value(backend: str, lo: float, hi: float, **kw) -> dict:
    """A finding of softplus's value (order 0) wrong at its own input, in ``backend``."""
    base = dict(
        backend=backend,
        order=0,
        partial="",
        derivative="f",
        value_wrong="softplus",
        outcome="inaccurate",
        lo=lo,
        hi=hi,
        worst_inputs=json.dumps({"x": lo}),
        worst_got=1.0,
        worst_truth="1.5",
    )
    return _finding(**{**base, **kw})


def test_one_primitive_failing_apart_in_two_frameworks_is_two_root_causes():
    """The quick census (2026-12-07) merged TensorFlow's softplus, inaccurate at its
    switch at -13.942386 (float32) and -34.04365539550781 (float64), with PyTorch's,
    0 below -88.72284 and wrong past its threshold 20: two frameworks' kernels failing at
    inputs that never meet are two mechanisms, each stated for its own framework."""
    found = _classified(
        _value("tensorflow", -13.942386, -13.942386, id="f1"),
        _value("tensorflow", -34.04365539550781, -34.04365338911716, dtype="float64", id="f2"),
        _value("torch", -103.97208, -88.72284, outcome="zero", worst_got=0.0, id="f3"),
        _value("torch", 20.000000000000004, 20.000001907348633, dtype="float64", id="f4"),
    )
    roots = root_causes(found).set_index("id")
    assert sorted(roots.index) == [
        "kernel:tensorflow:softplus:value:wrong",
        "kernel:torch:softplus:value:wrong",
    ]
    assert roots.loc["kernel:tensorflow:softplus:value:wrong", "frameworks"] == "tensorflow"
    assert roots.loc["kernel:torch:softplus:value:wrong", "members"] == 2
    assert roots.loc["kernel:torch:softplus:value:wrong", "text"].startswith("torch: ")
    # Every finding's root cause names the row it is counted in.
    assert set(found["root_cause"]) == set(roots.index)
    assert audit(roots.reset_index(), found) == []
    # Merged as they were, the checker says PyTorch's inputs meet none of TensorFlow's.
    merged = found.assign(root_cause="kernel:softplus:value:wrong")
    one = root_causes(merged).iloc[[0]]
    assert one["id"].iat[0] == "kernel:softplus:value:wrong"
    assert [p.rule for p in audit(one, merged)] == ["one mechanism"]


def test_frameworks_failing_at_meeting_inputs_stay_one_root_cause():
    """cosh overflows on |x| in [88.72284, 89.415985] in every framework: one mechanism.
    Inputs meet across dtypes (a float64 region holding a float32 one), and a third
    framework joins through either of the other two."""
    found = _classified(
        _value("tensorflow", 88.72284, 89.415985, id="f1"),
        _value("jax", 709.7827128933841, 710.4758600739439, dtype="float64", id="f2"),
        _value("jax", 89.0, 89.2, id="f3"),
        _value("torch", 709.8, 710.0, dtype="float64", id="f4"),
    )
    assert list(root_causes(found)["id"]) == ["kernel:softplus:value:wrong"]
    # Noise alone (the truth and the error at the rounding of the function's scale)
    # falls at scattered inputs in every framework: never split.
    noise = dict(worst_got=1e-17, worst_truth="1e-17", scale=1.0)
    scattered = _classified(
        _value("tensorflow", 1e9, 2e9, id="f1", **noise),
        _value("torch", 5e29, 5e29, id="f2", **noise),
    )
    assert list(root_causes(scattered)["id"]) == ["kernel:softplus:value:wrong"]
    assert set(scattered["impact"]) == {1}
    # Noise beside two frameworks failing apart goes with the one its inputs meet.
    beside = _classified(
        _value("tensorflow", -13.942386, -13.942386, id="f1"),
        _value("torch", -103.97208, -88.72284, outcome="zero", worst_got=0.0, id="f2"),
        _value("jax", -100.0, -90.0, id="f3", **noise),
    )
    assert sorted(root_causes(beside)["id"]) == [
        "kernel:jax+torch:softplus:value:wrong",
        "kernel:tensorflow:softplus:value:wrong",
    ]


def test_a_compiler_s_kernel_is_one_root_cause_with_the_framework_that_always_runs_it():
    """The quick census told XLA's cosh twice: JAX's kernel:cosh:value:wrong and
    TensorFlow's mode:census_cosh.kernel@XLA:wrong, at the same inputs with the same
    values. Localised under XLA, TensorFlow's value of cosh is wrong there too: one
    mechanism, whose statement says TensorFlow meets it only under XLA."""
    compilers = {"tensorflow": {"xla": "XLA"}, "jax": {"jit": "XLA"}}
    common = dict(
        case="census_cosh",
        implementation="kernel",
        dtype="float64",
        input="x",
        lo=89.41598510742188,
        hi=710.4758600739439,
        order=1,
        outcome="inaccurate",
        value_wrong="cosh",
        worst_got=1.0,
        worst_truth="1.5",
    )
    jax = _finding(id="f1", backend="jax", modes="eager, jit", **common)
    xla = _finding(
        id="f2",
        backend="tensorflow",
        modes="xla",
        modes_ok=json.dumps({"eager": 1.0, "function": 1.0}),
        **common,
    )
    found = classify_findings(pd.DataFrame([jax, xla]), lambda b: (), compilers.get)
    roots = root_causes(found)
    assert list(roots["id"]) == ["kernel:cosh:value:wrong"]
    assert "(tensorflow only under XLA (jit_compile=True))" in roots["text"].iat[0]
    assert audit(roots, found) == []
    # Not localised to a wrong value under XLA, it stays the compiler's mode.
    alone = classify_findings(
        pd.DataFrame([{**xla, "value_wrong": ""}]), lambda b: (), compilers.get
    )
    assert list(alone["root_cause"]) == ["mode:census_cosh.kernel@XLA:wrong"]


def test_finite_differences_are_not_told_as_a_derivative_rule_s_method():
    """The quick census said cosh's derivative rule fails "only in forward mode,
    forward-over-reverse, Taylor mode (jet) and finite differences": finite differences
    use no derivative rule (their NaN there comes through the value). A rule's methods
    are told apart from finite differences failing beside them."""
    rule = root_causes(_classified(_kernel(methods="forward, finite_difference")))
    text = rule["text"].iat[0]
    assert "(only in forward mode; finite differences, which use no derivative rule, fail" in text
    assert "forward mode and finite differences" not in text
    # A value kernel's finite differences go through the value: told as they are.
    value = root_causes(
        _classified(_value("torch", 1.0, 2.0, methods="forward, finite_difference"))
    )
    assert "(only in forward mode and finite differences)" in value["text"].iat[0]


def test_a_flush_of_the_whole_function_has_no_chain_rule_to_speak_of():
    """A census case is one primitive of x: the flushed derivative is the function's own
    (JAX's jet, sigmoid at -87.33653 in float32), with no "rest of the chain rule". The
    localisation records whether the primitive is the whole expression; a primitive whose
    truth only equals the function's (softplus.naive's exp at x = -706.7181273927491,
    where log(1 + exp(x)) and exp(x) agree to 300 digits) is not the whole function."""
    from harness.causes.flush_words import chained

    census = {"name": "sigmoid", "inputs": {"u": -87.33653259277344}, "whole": True}
    inner = {"name": "exp", "inputs": {"u": -706.7181273927491}, "whole": False}
    assert chained({"jax": census}) == "this, the primitive being the whole function, makes"
    assert chained({"jax": inner}) == "the rest of the chain rule makes"
    assert chained({"jax": census, "tensorflow": inner}) == "the rest of the chain rule makes"
    assert chained({"jax": {k: v for k, v in census.items() if k != "whole"}}) == (
        "the rest of the chain rule makes"
    )
    assert chained({}) == "the rest of the chain rule makes"
