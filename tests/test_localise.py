"""Localisation in the three frameworks: a failing derivative is traced to the primitive
whose own rule breaks at the argument it receives, or to the intermediate that lies
beyond the dtype. The truths come from the textbook formulas in mpmath, not from the
harness's reference."""

from __future__ import annotations

import json

import mpmath
import numpy as np
import pandas as pd
import pytest

from harness.causes.localise import localise
from harness.stages.prepared import Selection, prepare

from .conftest import CASES

pytestmark = pytest.mark.slow

BACKENDS = ("tensorflow", "jax", "torch")


def _failing(implementation: str, partial: str, x: float, outcome: str) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "implementation": [implementation],
            "method": ["reverse"],
            "mode": ["eager"],
            "dtype": ["float32"],
            "partial": [partial],
            "order": [len(partial)],
            "point": [0],
            "x": [x],
            "outcome": [outcome],
            "bits": [32.0],
        }
    )


def _localised(backend: str, implementation: str, partial: str, x: float, outcome: str):
    """The localisation of one failing float32 value of the softplus case."""
    from harness.backends.catalogue import load

    engine = load(backend)
    engine.start()
    prep = prepare(CASES / "softplus.yaml", None, Selection(dtypes=["float32"]))
    flags = engine.probe_flush(["float32"], ["eager"])
    rows = _failing(implementation, partial, x, outcome)
    return localise(engine, prep.case, rows, prep.settings, flags).iloc[0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_kernel_of_softplus_is_named_where_its_second_derivative_fails(backend):
    # softplus''(20) = sigmoid'(20) = e^-20 / (1 + e^-20)^2, about 2.06e-9: every framework
    # computes it from sigmoid(20), which rounds to 1 in float32, as s(1 - s) = 0.
    row = _localised(backend, "builtin", "xx", 20.0, "zero")
    assert row["culprit"] == "softplus" and row["culprit_partial"] == "uu"
    assert json.loads(row["culprit_inputs"]) == {"u": 20.0}
    assert row["culprit_got"] == 0.0
    with mpmath.workdps(30):
        truth = mpmath.exp(-20) / (1 + mpmath.exp(-20)) ** 2
        assert abs(mpmath.mpf(row["culprit_truth"]) / truth - 1) < 1e-20


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_overflowing_intermediate_is_named_where_every_primitive_is_right(backend):
    # log(1 + exp(x))' at x = 100 in float32: exp(100) = 2.7e43 rounds to inf (rightly),
    # 1 + inf and log(inf) are right, and the chain rule gives 0 * inf = NaN.
    row = _localised(backend, "naive", "x", 100.0, "nan")
    assert row["culprit"] == "" and row["value_wrong"] == ""
    assert row["intermediate"] == "exp(x)" and row["intermediate_kind"] == "overflow"
    assert bool(row["localised"]) and not bool(row["through_rule"])
    assert np.isnan(row["culprit_got"])


def test_a_failure_under_xla_alone_is_localised_in_xla():
    # d/db of -a/b at a = b = 1e-19 in float32 is 1e19; TensorFlow's eager RealDiv
    # gradient forms (-a/b)/b and is right, its XLA compilation is not (inf): the
    # primitive a/b judged alone under XLA must show it, eager would not.
    from harness.backends.catalogue import load

    engine = load("tensorflow")
    engine.start()
    prep = prepare(CASES / "ratio.yaml", None, Selection(dtypes=["float32"]))
    flags = engine.probe_flush(["float32"], ["eager", "xla"])
    t = float(np.float32(1e-19))
    rows = _failing("autodiff", "b", t, "inf").drop(columns=["x"])
    rows = rows.assign(mode="xla", method="forward", a=t, b=t)
    row = localise(engine, prep.case, rows, prep.settings, flags).iloc[0]
    assert row["in_mode"] == "xla" and row["culprit"] == "div"
    assert not np.isfinite(row["culprit_got"])
    inputs = json.loads(row["culprit_inputs"])
    u, v = (mpmath.mpf(inputs[k]) for k in ("u", "v"))
    truth = {"v": -u / v**2, "u": 1 / v}[row["culprit_partial"]]
    assert abs(mpmath.mpf(row["culprit_truth"]) / truth - 1) < 1e-20


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_a_kernel_that_is_the_whole_expression_is_judged_from_the_evaluation_itself(
    backend, tmp_path
):
    """``builtin: softplus(x)`` is one primitive of the input: its judgement at a failing
    point is the evaluation's own rows (no second evaluation of the primitive), and the
    localisation is the same: softplus'' is 0 in float32 past x = 17 (the test above)."""
    from harness.backends.catalogue import load
    from harness.stages.run import run_case

    sel = Selection(backends=[backend], dtypes=["float32"], methods=["reverse"], modes=["eager"])
    errors = run_case(CASES / "softplus.yaml", selection=sel, results=tmp_path / "results")
    judged = errors[errors["implementation"] == "builtin"].drop(columns=["backend"])
    # The first point past x = 17 where softplus'' is 0 in float32 (sigmoid rounds to 1).
    zeros = judged[(judged["partial"] == "xx") & (judged["outcome"] == "zero")]
    failing = zeros[zeros["x"] > 17].head(1)
    assert len(failing) == 1
    engine = load(backend)
    engine.start()
    prep = prepare(CASES / "softplus.yaml", None, sel)
    flags = engine.probe_flush(["float32"], ["eager"])
    calls = []
    evaluate = engine.evaluate_case

    def counted(case, *args, **kwargs):
        calls.append(case.id)
        return evaluate(case, *args, **kwargs)

    engine.evaluate_case = counted
    alone = localise(engine, prep.case, failing, prep.settings, flags).iloc[0]
    assert "primitives" in calls
    calls.clear()
    own = localise(engine, prep.case, failing, prep.settings, flags, None, judged).iloc[0]
    assert "primitives" not in calls
    for row in (alone, own):
        assert row["culprit"] == "softplus" and row["culprit_partial"] == "uu"
        assert row["culprit_got"] == 0.0
    assert alone.to_dict() == own.to_dict()


KINKED = """\
title: softplus through its kinks
source: test
inputs:
  x: {values: [-1.0, 0.0, 1.0]}
function: softplus(x)
derivatives: {wrt: x, orders: [1]}
implementations:
  kinked: {expression: "maximum(x, 0) + log1p(exp(-abs(x)))"}
  branched: {expression: "where(x > 0, x + log1p(exp(-x)), log1p(exp(x)))"}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_tie_of_maximum_and_a_zero_of_abs_are_named_with_what_the_framework_picks(
    tmp_path, backend
):
    """maximum(x, 0) + log1p(exp(-abs(x))) is softplus, with slope 1/2 at 0 (exactly: the
    two kinks' one-sided slopes add up to it only together). At x = 0 maximum's arguments
    tie and abs's is 0: the localisation names both, and each framework's own slopes of
    them there (TensorFlow 2.21 gives d/dx = 1 in all, JAX 0.10.2 gives 0)."""
    from harness.backends.catalogue import load

    path = tmp_path / "kinked.yaml"
    path.write_text(KINKED)
    engine = load(backend)
    engine.start()
    prep = prepare(path, None, Selection(dtypes=["float32"]))
    flags = engine.probe_flush(["float32"], ["eager"])
    rows = _failing("kinked", "x", 0.0, "wrong")
    row = localise(engine, prep.case, rows, prep.settings, flags).iloc[0]
    kinks = json.loads(row["kink"])
    assert sorted(k["name"] for k in kinks) == ["abs", "maximum"]
    assert kinks[0]["inputs"] == {"u": 0.0} and kinks[1]["inputs"] == {"u": 0.0}
    # What the framework picks for each, as its own derivative of the primitive alone.
    assert set(kinks[0]["picks"]) == {"u"} and set(kinks[1]["picks"]) == {"u"}
    assert all(np.isfinite(v) for k in kinks for v in k["picks"].values())
    # where(x > 0, ...) at x = 0: its condition's sides are equal; x > 0 is false there.
    (branch,) = json.loads(
        localise(
            engine, prep.case, _failing("branched", "x", 0.0, "wrong"), prep.settings, flags
        ).iloc[0]["kink"]
    )
    assert branch["name"] == "where" and branch["branch"] == "log1p(exp(x))"


def test_a_kink_is_its_own_root_cause_naming_each_framework_s_pick(tmp_path):
    """Through the whole pipeline: at x = 0 TensorFlow and JAX get softplus's slope 1/2
    wrong through the kinks (1 and 0), PyTorch right. The statement said "the terms of
    its derivative cancel or round away"; it now names the kinks and each pick."""
    from harness.causes.audit import audit
    from harness.causes.study import study_root_causes
    from harness.results import read_table
    from harness.stages.run import run_case

    path = tmp_path / "kinked.yaml"
    path.write_text(KINKED)
    sel = Selection(
        backends=list(BACKENDS), dtypes=["float32"], methods=["reverse"], modes=["eager"]
    )
    run_case(path, selection=sel, results=tmp_path / "results")
    findings = read_table(tmp_path / "results" / "kinked" / "findings.parquet")
    found, roots, _ = study_root_causes(findings)
    kinked = roots[roots["kind"] == "kink"]
    assert list(kinked["id"]) == ["kink:kinked.kinked:abs+maximum:wrong"]
    (text,) = kinked["text"]
    assert "at a kink: " in text and "round away" not in text
    assert "PyTorch gets 100% of these points right" in text
    # Each framework that fails is named with its pick at the tie (JAX's and
    # TensorFlow's own slopes there: their sum is 0 and 1, never the truth 1/2).
    assert "TensorFlow takes " in text and "JAX takes " in text
    assert audit(roots, found) == []


FLUSHED = """\
title: naive softplus where 1/(1 + exp(x)) is subnormal
source: test
inputs:
  x: {values: [87.5, 88.048836]}
function: log(1 + exp(x))
derivatives: {wrt: x, orders: [1]}
implementations:
  naive: {expression: "log(1 + exp(x))"}
"""


def test_an_intermediate_flushed_to_zero_is_the_platform_s_in_every_framework(tmp_path):
    """log(1 + exp(x)) at x = 88.05 in float32: d/dx = exp(x)/(1 + exp(x)) = 1, but reverse
    mode computes log's derivative 1/u at u = 1 + exp(x) = 1.65e38 first, 6.1e-39, a
    subnormal, and a platform that writes subnormal results as 0 (TensorFlow and JAX on
    this CPU, by their own probe) gives 0 * exp(x) = 0. That is one mechanism in every
    framework that flushes, the platform's: never "only in TensorFlow" beside a method
    root cause for JAX. A framework that keeps subnormals gets the point right."""
    from harness.causes.audit import audit
    from harness.causes.study import study_root_causes
    from harness.results import read_metadata, read_table
    from harness.stages.run import run_case

    path = tmp_path / "flushed.yaml"
    path.write_text(FLUSHED)
    sel = Selection(
        backends=list(BACKENDS), dtypes=["float32"], methods=["reverse"], modes=["eager"]
    )
    run_case(path, selection=sel, results=tmp_path / "results")
    flush = {}
    for b in BACKENDS:
        meta = read_metadata(tmp_path / "results" / "flushed" / b / "all" / "evaluations.parquet")
        flush[b] = meta["platform"]["flush"]["float32"]["eager"]["results"]
    findings = read_table(tmp_path / "results" / "flushed" / "findings.parquet")
    found, roots, _ = study_root_causes(findings)
    failing = set(found["backend"]) if len(found) else set()
    assert failing == {b for b in BACKENDS if flush[b]}
    if not failing:
        return
    assert list(roots["id"]) == ["platform:log:flush:wrong"]
    (row,) = roots.to_dict("records")
    culprit = json.loads(row["culprit"])
    assert set(culprit) == failing
    for c in culprit.values():
        u = c["inputs"]["u"]
        # The framework's 1 + exp(x) at one of the two points, within an ulp of the truth.
        near = [
            float(mpmath.mpf(1) + mpmath.exp(mpmath.mpf(float(np.float32(x)))))
            for x in (87.5, 88.048836)
        ]
        assert any(abs(u - t) <= float(np.spacing(np.float32(t))) for t in near)
        with mpmath.workdps(40):
            truth = 1 / mpmath.mpf(u)
        assert 0 < truth < 2.0**-126 and c["got"] == 0.0 and c["partial"] == "u"
        assert abs(mpmath.mpf(c["truth"]) / truth - 1) < mpmath.mpf(10) ** -25
    text = row["text"]
    assert text.startswith(
        ", ".join(
            t
            for b, t in (("tensorflow", "TensorFlow"), ("jax", "JAX"), ("torch", "PyTorch"))
            if b in failing
        )
    )
    assert "the platform's flush of subnormal numbers" in text and "only in" not in text
    keep = [b for b in BACKENDS if not flush[b]]
    if keep:
        assert "100% of these points right" in text
    assert audit(roots, found) == []


TAYLOR_EDGE = """\
title: sigmoid where its second derivative lies just above float32's smallest normal
source: test
inputs:
  x: {values: [-87.33653]}
function: 1 / (1 + exp(-x))
derivatives: {wrt: x, orders: [2]}
implementations:
  kernel: {expression: "sigmoid(x)"}
"""


def test_a_taylor_coefficient_below_the_smallest_normal_is_the_platform_s(tmp_path):
    """JAX's jet carries f''(x)/2!: at x = -87.33653 in float32, sigmoid''(x) is just above
    float32's smallest normal 2**-126 and half of it is below, subnormal; a platform that
    writes subnormal results as 0 (JAX on this CPU, by its own probe) gives 0. The root
    cause is the platform's flush of that coefficient, not sigmoid's rule."""
    from harness.causes.audit import audit
    from harness.causes.study import study_root_causes
    from harness.results import read_metadata, read_table
    from harness.stages.run import run_case

    x = mpmath.mpf(float(np.float32(-87.33653)))
    with mpmath.workdps(50):
        s = 1 / (1 + mpmath.exp(-x))
        second = s * (1 - s) * (1 - 2 * s)
    tiny = mpmath.mpf(2) ** -126
    assert tiny <= second < 2 * tiny  # the point is what the test says it is
    path = tmp_path / "edge.yaml"
    path.write_text(TAYLOR_EDGE)
    sel = Selection(backends=["jax"], dtypes=["float32"], methods=["taylor"], modes=["eager"])
    run_case(path, selection=sel, results=tmp_path / "results")
    meta = read_metadata(tmp_path / "results" / "edge" / "jax" / "all" / "evaluations.parquet")
    flushes = meta["platform"]["flush"]["float32"]["eager"]["results"]
    findings = read_table(tmp_path / "results" / "edge" / "findings.parquet")
    found, roots, _ = study_root_causes(findings)
    if not flushes:  # subnormals kept: the coefficient survives, the value is right
        assert found.empty or "platform" not in set(roots["kind"])
        return
    assert list(roots["id"]) == ["platform:sigmoid:flush:wrong"]
    (row,) = roots.to_dict("records")
    (c,) = json.loads(row["culprit"]).values()
    assert c["got"] == 0.0 and c["partial"] == "uu" and c["method"] == "taylor"
    assert abs(mpmath.mpf(c["truth"]) / second - 1) < mpmath.mpf(10) ** -20
    assert "Taylor coefficient f^(k)/k!" in row["text"] and "1.1754944e-38" in row["text"]
    assert audit(roots, found) == []


def test_a_value_failing_under_a_compiler_alone_runs_its_primitives_there():
    """XLA's cosh is inaccurate past 89.41598 where TensorFlow's eager cosh is right: a
    value (order 0) failing in a compiled mode alone, even by bits lost, is localised in
    that mode, and so is a derivative's bits lost at a point where the value fails there
    alone; other bits lost by one mode alone are judged in eager mode."""
    from harness.causes.sampling import in_modes

    def row(order, mode, point, outcome="inaccurate"):
        partial = "x" * order
        return dict(
            implementation="k",
            dtype="float64",
            partial=partial,
            order=order,
            method="reverse",
            point=point,
            mode=mode,
            outcome=outcome,
        )

    rows = pd.DataFrame(
        [
            row(0, "xla", 1),  # the value, XLA alone: XLA
            row(1, "xla", 1),  # its derivative, bits lost, where the value fails: XLA
            row(1, "xla", 2),  # bits lost, the value right there: eager
            row(2, "xla", 3, "zero"),  # a 0 under XLA alone: XLA
            row(0, "xla", 4),  # the value fails in eager mode too: eager
            row(0, "eager", 4),
        ]
    )
    assert list(in_modes(rows)) == ["xla", "xla", "eager", "xla", "eager", "eager"]
