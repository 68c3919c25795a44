"""The certified reference: Arb balls beside mpmath (issue 14).

Expected values come from exact arithmetic (rationals, powers of two, bit patterns) or
from the textbook formula at far higher precision, never from the code under test.
"""

from __future__ import annotations

import dataclasses
import math

import mpmath
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from harness.cases import expressions as ex
from harness.cases.load import load_case
from harness.cases.points import generate, represent
from harness.judge.compare import judge
from harness.reference.certify import certify_point, decides, mpf_of
from harness.reference.table import compute_reference
from harness.reference.verify import ReferenceSettings, evaluator, verify_point

from .conftest import CASES


def _with_reference(case, text):
    node = ex.parse(text, set(case.input_names))
    reference = dataclasses.replace(case.reference, expression=node, derivatives={})
    raw = {**case.raw, "reference": {"expression": text}}
    return dataclasses.replace(case, reference=reference, raw=raw)


def _table(case, rows: dict[str, list[float]], dtypes=("float64",), tmp_path=None, every=8):
    frame = pd.DataFrame({"point": range(len(next(iter(rows.values())))), **rows})
    per = {d: represent(frame, case.input_names, d) for d in dtypes}
    settings = ReferenceSettings(cross_check=every)
    table, counts = compute_reference(case, per, settings, tmp_path)
    return table, counts


def test_the_absorbed_argument_hole_is_closed():
    # 1 + log(1 + exp(-x)) * exp(x) at x = 1000: 1 + exp(-1000) is exactly 1 at 50 and at
    # 100 digits, so mpmath "verifies" 1 + 0 = 1. The truth is 1 + e^1000 log1p(e^-1000)
    # = 2 - e^-1000/2 + ..., which is 2.0 in float64. The row is either certified at 2.0
    # or unreliable; never a verified 1.
    case = _with_reference(load_case(CASES / "softplus.yaml"), "1 + log(1 + exp(-x)) * exp(x)")
    # Arb alone (no cross-check): the certified truth.
    table, _ = _table(case, {"x": [1000.0]}, every=0)
    row = table[table.partial == ""].iloc[0]
    assert row.reliable and row.certified and row.reference_rounded == 2.0
    assert not row.cross_checked
    # With mpmath cross-checking every point: its 1 lies outside the ball, a reference bug.
    table, _ = _table(case, {"x": [1000.0]}, every=1)
    row = table[table.partial == ""].iloc[0]
    assert not (row.reliable and row.reference_rounded == 1.0)
    assert not row.reliable and row.message.startswith("reference bug")
    # The ball itself holds the truth, and decides it.
    balls = certify_point(case, {"x": 1000.0}, [()])
    with mpmath.workdps(1200):
        truth = 1 + mpmath.exp(1000) * mpmath.log1p(mpmath.exp(-1000))
    assert balls[()].contains(truth) and float(balls[()].centre()) == 2.0


def test_an_exact_zero_by_symmetry_is_certified_and_judged():
    # hitting_time's d2t*/dy0^2 = (1 - 2 y0)/(r y0^2 (1 - y0)^2) is exactly 0 at y0 = 1/2:
    # two precisions cannot verify it (cancellation), a ball proves it.
    case = load_case(CASES / "hitting_time.yaml")
    table, counts = _table(
        case, {"r": [0.01, 3.0], "y0": [0.5, 0.5]}, dtypes=("float32", "float64")
    )
    zero = table[table.partial == "y0,y0"]
    assert len(zero) == 4 and zero.reliable.all() and zero.certified.all()
    assert (zero.reference_rounded == 0.0).all() and (zero.oracle == "arb").all()
    assert counts["certified"] == counts["rows"] == len(table) and counts["undefined"] == 0


def test_a_ball_that_holds_zero_is_an_exact_zero_and_judged_like_one():
    # log(exp(x) + exp(x)) = x + log 2: every derivative past the first is exactly 0.
    # Arb's jets cancel to a ball around 0 whose midpoint is a few units of 2**-2048,
    # either sign; every value in it rounds to 0 in every dtype. The reference is 0 (not
    # the midpoint), so a result of rounding noise at the scale of the lower orders is ok
    # (|f| = 1.19, f' = 1 at x = 0.5: 64 ulps of float64 at that scale, 1.7e-14), as at
    # an exact zero, and a result far above it is not.
    case = _with_reference(load_case(CASES / "softplus.yaml"), "log(exp(x) + exp(x))")
    table, counts = _table(case, {"x": [0.5, -6.245175554611726e280]}, every=0)
    assert counts["certified"] == counts["rows"]
    high = table[table.partial.str.len() >= 2]
    assert len(high) == 6 and high.certified.all() and high.reliable.all()
    assert (high.reference_mantissa == 0).all() and (high.reference_rounded == 0).all()
    assert (high.reference == "0.0").all()
    for mid, rad in zip(high.ball_mid, high.ball_rad):
        assert mpmath.mpf(mid) != 0 and abs(mpmath.mpf(mid)) <= mpmath.mpf(rad)
    assert high.ball_note.str.contains("the ball holds 0").all()
    at = table[(table.x == 0.5) & (table.partial == "xxx")].iloc[0]
    values = np.array([2.0**-104, -(2.0**-104), 1e-10])
    r = judge(
        values,
        np.array(["value"] * 3),
        np.full(3, at.reference_rounded),
        np.full(3, at.reference_mantissa),
        np.full(3, at.reference_exponent, dtype=np.int64),
        np.full(3, True),
        "float64",
        np.full(3, 64.0),
        zero_scale=np.full(3, 1.1931471805599454),  # |log(2 e**0.5)|, the order-0 value
    )
    assert list(r["outcome"]) == ["ok", "ok", "wrong"]


def test_special_values_overflow_subnormal_kink_and_switch():
    ratio = load_case(CASES / "ratio.yaml")
    # d/db (-a/b) = a/b^2 at a = 1, b = 2^-70: 2^140 overflows float32 (inf) and is exact
    # in float64.
    table, _ = _table(ratio, {"a": [1.0], "b": [2.0**-70]}, dtypes=("float32", "float64"))
    b = table[table.partial == "b"].set_index("dtype")
    assert b.certified.all() and b.loc["float32", "reference_rounded"] == math.inf
    assert b.loc["float64", "reference_rounded"] == 2.0**140
    # A subnormal tie: 3 * 2^-150 rounds to even, 2^-148 (bits 0x00000002), in float32.
    case = _with_reference(load_case(CASES / "softplus.yaml"), "x * 3 / 2**150")
    table, _ = _table(case, {"x": [1.0]}, dtypes=("float32",))
    row = table[table.partial == ""].iloc[0]
    want = float(np.array([2], dtype=np.uint32).view(np.float32)[0])
    assert row.certified and row.reference_rounded == want
    # abs at its kink and where at its switch point: no derivative, no ball, unreliable.
    for text in ("abs(x)", "where(x < 0, -x, x)"):
        case = _with_reference(load_case(CASES / "softplus.yaml"), text)
        table, _ = _table(case, {"x": [0.0]})
        first = table[table.partial == "x"].iloc[0]
        assert not first.reliable and not first.certified, text
        value = table[table.partial == ""].iloc[0]
        assert value.reliable and value.certified and value.reference_rounded == 0.0, text


def test_an_intermediate_overflowing_arbs_precision_is_not_a_kink():
    # Arb's sinh at 6.245176e280 is NaN at 128 and 256 bits (an intermediate beyond the
    # working precision) and a narrow ball at 512; a NaN ball reads as "no derivative exists",
    # which made the value of sinh, cosh and log_softmax at huge inputs undefined in the
    # census (unjudged) or left to mpmath (uncertified). The truths here are mpmath's.
    x = 6.245176e280
    for text, truth in (("sinh(x)", mpmath.sinh), ("cosh(x)", mpmath.cosh)):
        case = _with_reference(load_case(CASES / "softplus.yaml"), text)
        table, _ = _table(case, {"x": [x, -x]}, every=0)
        value = table[table.partial == ""].sort_values("x")
        with mpmath.workdps(50):
            want = [float(truth(mpmath.mpf(v))) for v in sorted([x, -x])]  # ±inf, rounded
        assert value.certified.all() and value.reliable.all(), text
        assert list(value.reference_rounded) == want, text
    # log_softmax(a, b)[0] = a - b - log1p(exp(a - b)): finite, a itself in float64.
    a, b = -3.4028234663852886e38, -0.0006905339541845024
    case = _with_reference(load_case(CASES / "ratio.yaml"), "log_softmax(a, b)")
    table, _ = _table(case, {"a": [a], "b": [b]}, every=0)
    value = table[table.partial == ""].iloc[0]
    with mpmath.workdps(80):
        want = float(mpmath.mpf(a) - b - mpmath.log1p(mpmath.exp(mpmath.mpf(a) - b)))
    assert value.certified and value.reliable and value.reference_rounded == want == a
    # A true kink at a huge point stays one: maximum's partial on its diagonal.
    case = _with_reference(load_case(CASES / "ratio.yaml"), "maximum(a, b)")
    balls = certify_point(case, {"a": 1e300, "b": 1e300}, [("a",), ()])
    assert not balls[("a",)].bounded
    assert balls[("a",)].reason.startswith("no derivative exists here")
    assert balls[()].bounded and float(balls[()].centre()) == 1e300


@pytest.mark.parametrize(
    "name", ["softplus", "nested_softplus", "ratio", "composition", "hitting_time", "logistic"]
)
def test_every_reference_value_of_the_closed_form_seed_cases_is_certified(name):
    case = load_case(CASES / f"{name}.yaml")
    points = generate(case, max_points=12 if name == "logistic" else 40)
    dtypes = ("float16", "bfloat16", "float32", "float64")
    per = {d: represent(points, case.input_names, d) for d in dtypes}
    table, counts = compute_reference(case, per, ReferenceSettings())
    # Every row with a value is certified; the rest are proven to have none (ratio at
    # a = b = 0 in float16: 0/0).
    assert counts["certified"] == counts["rows"] - counts["undefined"] > 0
    assert counts["rows"] == len(table)
    assert not table.message.str.startswith("reference bug").any()
    assert (table[table.reliable].oracle == "arb").all()
    if name == "ratio":
        undefined = table[~table.certified]
        assert counts["undefined"] == len(undefined) == 12
        assert ((undefined.a == 0) & (undefined.b == 0)).all()


# Random expressions of the case language over one input, from kernels that Arb and
# mpmath both evaluate; wherever mpmath verifies a value and Arb gives a ball, the two
# agree: the value lies inside the ball widened by the accuracy mpmath claims for it (the
# digits its two precisions agreed on: the value is off the truth by at most its distance
# to the higher precision's value plus that value's own, smaller error, so by under twice
# the distance). mpmath's value is an approximation (x/x at 24.400390625 verifies to
# 1 - 7.1e-102, 101.1 digits), the ball an enclosure (exactly [1, 1]): demanding the value
# inside the bare ball asks mpmath for more than it claims.
_LEAVES = st.sampled_from(["x", "x", "0.5", "3", "pi", "1e-3"])
_UNARY = st.sampled_from(["exp", "log1p", "sin", "cos", "atan", "tanh", "sigmoid", "softplus"])


def _expressions():
    return st.recursive(
        _LEAVES,
        lambda inner: st.one_of(
            st.tuples(_UNARY, inner).map(lambda t: f"{t[0]}({t[1]})"),
            st.tuples(inner, st.sampled_from(["+", "-", "*", "/"]), inner).map(
                lambda t: f"({t[0]} {t[1]} {t[2]})"
            ),
            st.tuples(inner, st.sampled_from(["2", "3", "-1"])).map(lambda t: f"({t[0]})**{t[1]}"),
        ),
        max_leaves=6,
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=_expressions(),
    x=st.floats(min_value=-30, max_value=30, allow_nan=False).map(
        lambda v: float(np.float32(v))  # a dtype-rounded input
    ),
)
@example(text="(x / x)", x=24.400390625)  # mpmath 1 - 1e-102, the ball exactly [1, 1]
def test_mpmath_values_agree_with_the_arb_balls(text, x):
    case = _with_reference(load_case(CASES / "softplus.yaml"), text)
    partials = list(case.partials)
    verified = verify_point(evaluator(case), {"x": x}, partials, ReferenceSettings())
    balls = certify_point(case, {"x": x}, partials)
    for p in partials:
        value, ball = verified[p].value, balls[p]
        if value is None or ball.lower is None:
            continue
        digits = verified[p].digits
        assert digits >= ReferenceSettings().verify_digits, (text, x, p, digits)
        with mpmath.workprec(4096):
            claim = 2 * abs(value) * mpmath.mpf(10) ** -min(digits, 1000)
            inside = ball.lower - claim <= value <= ball.upper + claim
        assert inside, (text, x, p, value, digits, ball)


def test_a_ball_that_decides_a_dtype_rounds_every_inner_value_alike():
    # decides() on a ball straddling a float32 rounding boundary must say no.
    from harness.numerics.floats import FORMATS
    from harness.reference.certify import Ball

    f32 = FORMATS["float32"]
    mid = mpmath.mpf(1) + mpmath.mpf(2) ** -24  # the midpoint between 1 and 1 + 2^-23
    with mpmath.workprec(200):
        tiny = mpmath.mpf(2) ** -100
        assert not decides(Ball(mid - tiny, mid + tiny, 128), f32)
        assert decides(Ball(mid + tiny, mid + 2 * tiny, 128), f32)
        assert decides(Ball(-(tiny**2), tiny**2, 128), f32)  # 2^-200: 0 at both ends


@pytest.mark.parametrize(
    "text",
    ["softplus(softplus(x))", "x**8", "(x - 1)/(x + 3)**2", "sigmoid(x)*tanh(x)", "x**2.5"],
)
def test_the_one_variable_series_path_agrees_with_the_ball_jets(text):
    from flint import arb

    from harness.reference import balls
    from harness.reference.jets import JetSpace
    from harness.reference.series import evaluate_series

    node = ex.parse(text, {"x"})
    for x in (0.75, 3.0, 40.0):
        with balls.working_bits(256):
            point = {"x": arb(x)}
            series = evaluate_series(node, point, "x", 4)
            space = JetSpace(("x",), {"x": 4}, 4)
            jet = balls.evaluate(node, point, space)
            for k in range(5):
                a, b = series[k], jet.c[space.position[(k,)]]
                assert a.overlaps(b) and a.rad() < 2.0**-200 * (1 + abs(a.mid())), (text, x, k)


def test_a_ball_read_back_from_the_cache_is_the_ball_computed(tmp_path):
    # softplus(574) = 574 + e^-574 (+ ...) lies just above 574, the tie between the
    # bfloat16 neighbours 572 and 576 (spacing 4 in [512, 1024)): only a ball narrower
    # than e^-574 (1,024 bits) decides it, and it rounds up to 576. Cut to fewer bits in
    # the cache, the ball would straddle the tie; it is kept exactly.
    case = load_case(CASES / "softplus.yaml")
    table, counts = _table(case, {"x": [574.0]}, dtypes=("bfloat16",), tmp_path=tmp_path)
    row = table[table.partial == ""].iloc[0]
    assert row.certified and row.reference_rounded == 576.0
    again, counts2 = _table(case, {"x": [574.0]}, dtypes=("bfloat16",), tmp_path=tmp_path)
    assert counts2["cached"] == 1 and again.equals(table)


def test_the_float64_shortcut_never_decides_what_exact_rounding_does_not():
    # Balls around the ties and overflow thresholds of every format, a few ulps of
    # float64 wide and narrower: wherever the fast test says "decided", rounding both
    # bounds exactly (integer arithmetic) agrees, in every format.
    from flint import arb

    from harness.numerics.floats import FORMATS
    from harness.reference.balls import working_bits
    from harness.reference.certify import Ball, _decided_fast

    fmts = list(FORMATS.values())
    centres = []
    for f in fmts:
        q = f.eps / 2
        centres += [1 + q, 1 - q / 2, f.max_finite * (1 + q / 2), f.smallest_subnormal / 2]
        centres += [f.smallest_subnormal * 1.5, 3 * f.smallest_subnormal / 2, f.max_finite]
    centres += [0.0, 1.0, 2.0**-1074, 1e308, 123.456]
    found, exact = [], []
    for c in centres:
        for sign in (1, -1):
            for width in (0, 2**-80, 2**-60, 2**-52, 2**-40, 2**-20):
                with working_bits(4096):  # exact: every bound below fits in 4,096 bits
                    mid = arb(sign * c)
                    lo = mid - arb(width) * abs(mid) - arb(2) ** -1100
                    hi = mid + arb(width) * abs(mid)
                    assert lo.is_exact() and hi.is_exact()
                    ball = Ball(lo, hi, 128)
                found.append(ball)
                exact.append(all(decides(ball, f) for f in fmts))
    fast = _decided_fast(found, fmts)
    assert not (fast & ~np.array(exact)).any()
    assert fast.sum() > len(found) // 4  # and it does decide the plain cases


def test_arb_is_the_oracle_and_mpmath_cross_checks_a_sample():
    case = load_case(CASES / "softplus.yaml")
    points = generate(case, max_points=40)
    rows = {"x": list(points["x"])}
    counts = {}
    for every in (0, 8, 1):
        table, counts[every] = _table(case, rows, dtypes=("float32",), every=every)
        assert counts[every]["certified"] == counts[every]["rows"] == len(table)
        assert (table.oracle == "arb").all() and table.reliable.all()
    assert counts[0]["cross_checked"] == 0
    assert 0 < counts[8]["cross_checked"] < counts[8]["rows"]
    assert counts[1]["cross_checked"] == counts[1]["rows"]
    # Without a cross-check, mpmath never runs where a ball settles the value.
    from harness.reference.table import ReferenceStore

    store = ReferenceStore(case, ReferenceSettings(cross_check=0), None)
    store.ensure([(x,) for x in rows["x"]], list(case.partials), cross_check=True)
    labels = {case.label(p) for p in case.partials}
    assert not any(labels & set(entry) for entry in store.cache.values())


def test_series_per_variable_and_mixed_jets_agree_with_one_full_jet():
    # logistic's partials: in t, r and y0 alone (one power series per variable) and the
    # mixed (r, y0) (ball jets over r and y0 only); one ball jet over every input and
    # order gives overlapping balls, and the certified values lie in both.
    from flint import arb

    from harness.reference import balls
    from harness.reference.jets import space_for

    case = load_case(CASES / "logistic.yaml")
    partials = list(case.partials)
    assert any(len(set(p)) > 1 for p in partials) and any(len(set(p)) == 1 for p in partials)
    space = space_for(tuple(partials), case.input_names)
    for point in (
        {"t": 138.62943611198906, "r": 0.01, "y0": 0.5},
        {"t": 3.0, "r": 1.0, "y0": 1e-3},
    ):
        got = certify_point(case, point, partials)
        with balls.working_bits(256):
            at = {k: arb(v) for k, v in point.items()}
            jet = balls.evaluate(case.reference.expression, at, space)
            for p in partials:
                full = jet.derivative(p)
                lo, hi = mpf_of(full.lower()), mpf_of(full.upper())
                assert got[p].settled and got[p].lower <= hi and lo <= got[p].upper, (point, p)
