"""The outcome vocabulary, rule by rule (no TensorFlow)."""

from __future__ import annotations

import math

import numpy as np

from harness.judge.compare import judge
from harness.numerics.floats import to_format


def _judge(values, rounded, status=None, reliable=None, dtype="float32", tol=4.0, exact=None):
    # Results and rounded references are values of the dtype (decimal literals are not).
    values = to_format(np.array(values, dtype=np.float64), dtype)
    rounded = to_format(np.array(rounded, dtype=np.float64), dtype)
    exact = rounded if exact is None else np.array(exact, dtype=np.float64)
    m, e = np.frexp(np.where(np.isfinite(exact), exact, 0.0))
    return judge(
        values,
        np.array(status or ["value"] * len(values)),
        rounded,
        m,
        e,
        np.array(reliable if reliable is not None else [True] * len(values)),
        dtype,
        np.full(len(values), tol),
    )


def test_each_outcome():
    nxt = float(np.nextafter(np.float32(1), np.float32(2)))
    r = _judge(
        [1.0, nxt, 1.5, -1.0, np.nan, np.inf, 0.0, 3.0, np.inf, -np.inf, 0.0],
        [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, np.inf, np.inf, -0.0],
    )
    assert list(r["outcome"]) == [
        "ok",
        "ok",
        "inaccurate",
        "wrong",
        "nan",
        "inf",
        "zero",
        "wrong",
        "ok",
        "wrong",
        "ok",
    ]
    assert r["ulps"][1] == 1 and r["bits"][1] == 1
    assert r["bits"][4] == 32  # NaN counts as nothing right
    assert math.isclose(r["rel_error"][2], 0.5)


def test_status_and_reliability_come_first():
    r = _judge(
        [np.nan, np.nan, 1.0],
        [1.0, 1.0, 1.0],
        status=["error", "missing", "value"],
        reliable=[True, True, False],
    )
    assert list(r["outcome"]) == ["error", "missing", "ref_unreliable"]
    assert np.isnan(r["bits"]).all()


def test_no_gradient_where_no_derivative_exists_is_not_judged():
    # maximum(x, y) on its diagonal: a kink, the reference has no value (NaN, unreliable).
    # A None gradient there is out of every verdict; an exception still is an error, and
    # a None where the reference has a value it could not certify is still missing.
    r = _judge(
        [np.nan, np.nan, np.nan],
        [np.nan, np.nan, 0.0],
        status=["missing", "error", "missing"],
        reliable=[False, False, False],
    )
    assert list(r["outcome"]) == ["ref_unreliable", "error", "missing"]


def test_relative_error_never_overflows():
    # Exact reference 1e-300 * 1e-300 (beyond float64) against a result of 1e300.
    r = judge(
        np.array([1e300]),
        np.array(["value"]),
        np.array([0.0]),
        np.array([0.5]),
        np.array([-2000]),
        np.array([True]),
        "float64",
        np.array([4.0]),
    )
    assert r["rel_error"][0] == np.inf and r["outcome"][0] == "wrong"
    top = float(np.finfo(np.float32).max)
    r = _judge([top], [top], dtype="float32", exact=[top])
    assert r["rel_error"][0] == 0.0


def test_spurious_zero_next_to_smallest_subnormal_is_zero_not_ok():
    r = _judge([0.0], [1e-45], tol=4.0)
    assert r["outcome"][0] == "zero"


def test_case_tolerance_overrides_the_table_with_its_reason(tmp_path):
    import textwrap

    from harness.cases.load import load_case
    from harness.config import load_config, settings_for

    path = tmp_path / "tol.yaml"
    path.write_text(
        textwrap.dedent("""\
        title: tolerance override
        source: test
        inputs:
          x: {values: [1.0]}
        function: exp(x)
        derivatives: {wrt: x, orders: [1, 2]}
        implementations:
          plain: {expression: exp(x)}
        tolerances:
          - {dtype: float32, order: 2, ulps: 3000, reason: a long chain of roundings}
        """)
    )
    settings = settings_for(load_case(path), load_config())
    assert settings.tolerance("float32", 2) == (3000.0, "a long chain of roundings")
    assert settings.tolerance("float32", 1) == (16.0, "")
    assert settings.tolerance("float64", 2) == (64.0, "")


def test_wrong_magnitude_is_wrong_in_both_directions():
    # seed 003: forgetting dy gives 4 where the derivative is 1024 (relative error 0.996)
    r = _judge([4.0, 0.6, 0.5, 1.9, 2.0], [1024.0, 1.0, 1.0, 1.0, 1.0], tol=4)
    assert list(r["outcome"]) == ["wrong", "inaccurate", "wrong", "inaccurate", "wrong"]


def test_finite_difference_within_its_predicted_error_is_ok_even_at_zero():
    # A central difference can not resolve a value below its own error: 0 against a
    # truth of 1e-12 is ok with a predicted error of 1e-9, and a zero without one.
    tol_abs = np.array([1e-9, np.nan, 1e-9, 1e-9])
    r = judge(
        np.array([0.0, 0.0, 1.0 + 5e-10, 1.0 + 5e-8]),
        np.array(["value"] * 4),
        np.array([1e-12, 1e-12, 1.0, 1.0]),
        *np.frexp(np.array([1e-12, 1e-12, 1.0, 1.0])),
        np.array([True] * 4),
        "float64",
        np.full(4, 16.0),
        tolerance_abs=tol_abs,
    )
    assert list(r["outcome"]) == ["ok", "zero", "ok", "inaccurate"]


def test_a_finite_result_where_the_truth_overflows_is_never_ok():
    top = float(np.finfo(np.float32).max)
    # Truths 1e300 and 3.5e38 both round to +inf in float32.
    r = _judge([top, top, np.inf], [np.inf] * 3, exact=[1e300, 3.5e38, 1e300])
    assert list(r["outcome"]) == ["wrong", "inaccurate", "ok"]
    # Counted beyond the range: about 2**23 ulps per binade from 2**128 to 1e300's.
    assert int(r["ulps"][0]) > 2**23 * (996 - 128)
    assert r["rel_error"][2] == 0.0  # the right infinity is not infinitely wrong
    # An underflowing truth returned as 0 (the dtype's best) has no relative error either.
    r = _judge([0.0], [0.0], dtype="float32", exact=[1e-50])
    assert r["outcome"][0] == "ok" and r["rel_error"][0] == 0.0


def _judge_zero(values, dtype: str, budget: float, scale: float) -> dict:
    """``values`` judged against an exact-zero reference on the zero scale ``scale``."""
    n = len(values)
    return judge(
        np.array(values, dtype=np.float64),
        np.array(["value"] * n),
        np.zeros(n),
        np.zeros(n),
        np.zeros(n, dtype=np.int64),
        np.ones(n, dtype=bool),
        dtype,
        np.full(n, budget),
        zero_scale=np.full(n, scale),
    )


def test_an_exact_zero_is_judged_on_the_scale_of_the_lower_orders():
    # |f''| = 6 at the point: rounding noise < 16 eps 6.
    r = _judge_zero([1e-300, 1e-15, 0.5, 0.0], "float64", 16.0, 6.0)
    assert list(r["outcome"]) == ["ok", "ok", "wrong", "ok"]
    assert 16 * 2.0**-52 * 6 > 1e-15


def test_a_derivatives_zero_is_judged_on_the_derivatives_not_the_value():
    # logaddexp(x, y) at x = y = -3.4e38 in float32: the value -3.4e38 + log 2, the first
    # derivatives 1/2, the second +-1/4, d3/dx2dy exactly 0 (s(1-s)(1-2s) at s = 1/2).
    # JAX's rule absorbs the log 2 there and returns 1.0: wrong, not noise of a value of
    # 3.4e38. Rounding noise of the derivatives' own scale (256 eps32 / 2) stays ok.
    import pandas as pd

    from harness.judge.compare import _zero_scale

    big = float(np.float32(-3.4028234663852886e38))
    frame = pd.DataFrame(
        {
            "dtype": "float32",
            "point": 0,
            "partial": ["", "x", "y", "xx", "xy", "xxy"],
            "order": [0, 1, 1, 2, 2, 3],
            "reliable": True,
            "reference_rounded": [big, 0.5, 0.5, 0.25, -0.25, 0.0],
        }
    )
    scale = _zero_scale(frame)
    assert scale.tolist() == [-big, 0.5, 0.5, 0.5, 0.5, 0.5]
    r = _judge_zero([1.0, 2.0**-20, -(2.0**-20)], "float32", 256.0, scale[-1])
    assert list(r["outcome"]) == ["wrong", "ok", "ok"]
    assert 2.0**-20 <= 256 * 2.0**-23 * 0.5


def test_flushed_rows_are_apart_and_amplified_flushes_are_not():
    tiny = 2.0**-140  # a float32 subnormal
    r = judge(
        np.array([np.nan, 0.0, 0.0, 0.0, 3.0]),
        np.array(["value"] * 5),
        np.array([1.0, tiny, 1.0, tiny, 1.0]),
        *np.frexp(np.array([1.0, tiny, 1.0, tiny, 1.0])),
        np.array([True] * 5),
        "float32",
        np.full(5, 16.0),
        # 0/0 at a flushed input; a subnormal result flushed; a normal truth the flush
        # leaves alone (naive softplus's zero); a result flush the row did not get right.
        flush_rounded=np.array([np.nan, 0.0, np.nan, 0.0, 0.0]),
        flush_defined=np.array([False, True, True, True, True]),
    )
    assert list(r["outcome"]) == ["flushed", "flushed", "zero", "flushed", "wrong"]


def test_zero_scale_is_the_running_maximum_over_lower_orders():
    """The scale an exact zero is judged on, against a brute force over the rows: per
    (dtype, point), the largest finite |reference| of a reliable partial of the row's
    order or lower, from the first order (the value's own for the value; random frames
    with repeated rows, gaps in the orders, NaN, inf and unreliable references)."""
    import pandas as pd

    from harness.judge.compare import _zero_scale

    rng = np.random.default_rng(7)
    partials = {"": 0, "x": 1, "y": 1, "xx": 2, "xy": 2, "xxxx": 4}
    for _ in range(20):
        n = int(rng.integers(1, 60))
        labels = rng.choice(list(partials), n)
        ref = rng.choice([0.0, 1.5, -3.0, 7.25, np.nan, np.inf, -1e300], n)
        frame = pd.DataFrame(
            {
                "dtype": rng.choice(["float32", "float64"], n),
                "point": rng.integers(0, 4, n),
                "partial": labels,
                "order": [partials[p] for p in labels],
                "reliable": rng.random(n) < 0.8,
            }
        )
        # One reference per (dtype, point, partial), as a judged frame holds it.
        key = frame["dtype"] + "|" + frame["point"].astype(str) + "|" + frame["partial"]
        first = {k: i for i, k in reversed(list(enumerate(key)))}
        frame["reference_rounded"] = [ref[first[k]] for k in key]
        frame["reliable"] = [bool(frame["reliable"][first[k]]) for k in key]
        want = []
        for r in frame.itertuples():
            sizes = [
                abs(q.reference_rounded)
                for q in frame.itertuples()
                if (q.dtype, q.point) == (r.dtype, r.point)
                and q.order <= r.order
                and (q.order >= 1 or r.order == 0)
                and q.reliable
                and math.isfinite(q.reference_rounded)
            ]
            want.append(max(sizes, default=0.0))
        assert _zero_scale(frame).tolist() == want


def test_a_flushed_input_on_a_kink_is_the_platform_s_whatever_the_framework_picks():
    """d/dx abs(x) at x = -5.9e-42 in float32 is -1; a platform that reads subnormal inputs
    as 0 puts the point on abs's kink, where no derivative exists, and the framework's
    pick there (TensorFlow 0, JAX 1) is the flush's doing: flushed, not a wrong kernel."""
    r = judge(
        np.array([0.0, 1.0, 1.0]),
        np.array(["value"] * 3),
        np.array([-1.0, -1.0, -1.0]),
        *np.frexp(np.array([-1.0, -1.0, -1.0])),
        np.array([True] * 3),
        "float32",
        np.full(3, 16.0),
        flush_rounded=np.array([np.nan, np.nan, np.nan]),
        # The first two at a flushed input whose derivative is undefined; the third at an
        # input the flush leaves alone: a real wrong sign.
        flush_defined=np.array([False, False, True]),
    )
    assert list(r["outcome"]) == ["flushed", "flushed", "wrong"]
