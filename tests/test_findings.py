"""Runs, bisection to exact edges, and findings as statements (no TensorFlow: the
"framework" here is a NumPy function whose edges are known exactly)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from harness.edges.bisection import Bisector
from harness.judge.findings import find
from harness.judge.findings_text import derivative_name, format_value
from harness.judge.runs import FLICKER, runs


def test_runs_flicker_mixed_unreliable_and_pieces():
    o = ["ok", "inaccurate", "ok", "inaccurate", "wrong", "zero", "wrong", "nan", "nan"]
    o += ["ref_unreliable", "nan", "ok", "ok"]
    piece = [0] * 12 + [1]
    got = [(r.outcome, r.first, r.last, dict(r.counts)) for r in runs(np.array(o), piece)]
    assert got == [
        ("ok", 0, 0, {"ok": 1}),
        # one ok point between two inaccurate ones is flicker (at most FLICKER of them)
        ("inaccurate", 1, 3, {"inaccurate": 2}),
        # wrong, zero, wrong: alternating failures are one mixed episode, named by the worst
        ("wrong", 4, 6, {"wrong": 2, "zero": 1}),
        ("nan", 7, 8, {"nan": 2}),
        # an unreliable point ends a run; a new piece of the sweep starts another
        ("nan", 10, 10, {"nan": 1}),
        ("ok", 11, 11, {"ok": 1}),
        ("ok", 12, 12, {"ok": 1}),
    ]
    gap = ["inaccurate"] + ["ok"] * (FLICKER + 1) + ["inaccurate"]
    assert [r.outcome for r in runs(np.array(gap), [0] * len(gap))] == [
        "inaccurate",
        "ok",
        "inaccurate",
    ]


def test_derivative_names_and_shortest_decimals():
    assert derivative_name(()) == "f"
    assert derivative_name(("x",)) == "d/dx"
    assert derivative_name(("x",) * 3) == "d³/dx³"
    assert derivative_name(("a", "b", "b")) == "∂³/∂a∂b²"
    assert format_value(float(np.float32(88.72284)), "float32") == "88.72284"
    assert format_value(0.1, "float64") == "0.1"
    # Shortest in the dtype: "0.1" reads back as float16's 0.0999755859375.
    assert format_value(float(np.float16(0.1)), "float16") == "0.1"
    assert np.float16("0.1") == np.float16(0.1)


THRESHOLD = float(np.nextafter(np.float32(88.72283), np.float32(100)))  # the first NaN


def _framework(inputs):
    """NaN from THRESHOLD on (exactly as float32 compares), 1 below it."""
    x = inputs["x"].astype(np.float32)
    return {"impl": {"x": np.where(x >= np.float32(THRESHOLD), np.nan, 1.0)}}


def _judge(rows: pd.DataFrame) -> pd.DataFrame:
    out = rows.copy()
    out["outcome"] = np.where(np.isnan(out["value"]), "nan", "ok")
    out["reference"] = "1.0"
    return out


def _sweep(x: np.ndarray, modes=("function", "eager")) -> pd.DataFrame:
    rows = []
    for mode in modes:
        values = _framework({"x": x})["impl"]["x"]
        for xi, v in zip(x, values):
            rows.append(
                {
                    "implementation": "impl",
                    "partial": "x",
                    "mode": mode,
                    "x": xi,
                    "order": 1,
                    "value": v,
                    "outcome": "nan" if math.isnan(v) else "ok",
                    "reference": "1.0",
                    "reference_mantissa": 0.5,
                    "reference_exponent": 1,
                    "tolerance": 16.0,
                    "tolerance_unit": "ulps",
                }
            )
    return pd.DataFrame(rows)


def test_bisection_finds_adjacent_floats_at_the_exact_edge():
    x = np.unique(np.float32(np.logspace(0, 3, 40)).astype(np.float64))
    calls = []

    def evaluate(mode, inputs):
        calls.append((mode, len(inputs["x"])))
        return _framework(inputs)

    bisector = Bisector("x", [], {}, [[1.0, 1000.0]], _judge, lambda d, o: (16.0, ""))
    edges = bisector.bisect(_sweep(x), "reverse", "float32", ["function", "eager"], evaluate, 40)
    assert {e["mode"] for e in edges} == {"function", "eager"}
    for e in edges:
        assert e["side"] == "start" and e["outcome"] == "nan" and e["exact"]
        assert e["inside"] == THRESHOLD
        assert e["outside"] == float(np.nextafter(np.float32(THRESHOLD), np.float32(0)))
        assert e["outside_outcome"] == "ok"
    # Every call keeps the batch's shape (nothing would be traced again), and the second
    # mode only verifies the edge the first found: one call.
    assert {n for _, n in calls} == {40}
    assert sum(1 for m, _ in calls if m == "eager") == 1
    assert [e["verified"] for e in edges if e["mode"] == "eager"] == [True]


def test_eager_rounds_are_wide_only_where_the_framework_compiles_nothing_per_shape():
    """Reverse mode's eager rounds take WIDE inputs a call in a framework whose eager
    calls cost the same at any batch (TensorFlow, PyTorch); in one that compiles each
    primitive per shape (JAX) they keep the sweep's batch where it holds NARROW inputs or
    more, else take NARROW (one new shape, not a round per halving): the same exact edge
    every way."""
    from harness.backends.catalogue import SPECS
    from harness.edges.bisection import NARROW, WIDE

    assert {b: s.eager_wide for b, s in SPECS.items()} == {
        "tensorflow": True,
        "jax": False,
        "torch": True,
    }
    x = np.unique(np.float32(np.logspace(0, 3, 40)).astype(np.float64))
    assert 40 < NARROW < 300 < WIDE
    for wide, batch, width in ((True, 40, WIDE), (False, 40, NARROW), (False, 300, 300)):
        calls = []

        def evaluate(mode, inputs, calls=calls):
            calls.append(len(inputs["x"]))
            return _framework(inputs)

        bisector = Bisector(
            "x", [], {}, [[1.0, 1000.0]], _judge, lambda d, o: (16.0, ""), wide=wide
        )
        (edge,) = bisector.bisect(
            _sweep(x, ("eager",)), "reverse", "float32", ["eager"], evaluate, batch
        )
        assert set(calls) == {width}
        assert edge["inside"] == THRESHOLD
        assert edge["outside"] == float(np.nextafter(np.float32(THRESHOLD), np.float32(0)))


def test_an_edge_in_float64_needs_about_fifty_halvings_not_a_sweep():
    x = np.logspace(0, 3, 30)
    edge = float(np.nextafter(88.72283905206835, 100.0))

    def evaluate(mode, inputs):
        return {"impl": {"x": np.where(inputs["x"] >= edge, np.nan, 1.0)}}

    sweep = _sweep(x, ("eager",))
    sweep["value"] = np.where(sweep["x"] >= edge, np.nan, 1.0)
    sweep["outcome"] = np.where(sweep["x"] >= edge, "nan", "ok")
    bisector = Bisector("x", [], {}, None, _judge, lambda d, o: (16.0, ""))
    (e,) = bisector.bisect(sweep, "reverse", "float64", ["eager"], evaluate, 30)
    assert e["inside"] == edge and e["outside"] == float(np.nextafter(edge, 0.0))
    assert bisector.stats["calls"] <= 20


def test_a_flushed_input_is_judged_by_the_guide_and_the_flush_s_reference():
    """A platform that reads subnormal inputs as 0 (TensorFlow and JAX on this CPU), a
    derivative of 1 everywhere and a framework whose value at 0 is 3: every subnormal
    input gives 3, wrong against the truth and against the reference at 0 the flush
    reads. The edge is the last subnormal and the first normal float (their bit
    patterns), found with the guide and that one reference, not by judging each
    subnormal input the search visits against verified references."""
    smallest_normal = float(np.finfo(np.float32).tiny)  # 2**-126, bits 0x00800000
    last_subnormal = float(np.frombuffer(np.uint32(0x007FFFFF).tobytes(), np.float32)[0])

    def value(x):
        return np.where(np.abs(x.astype(np.float32)) < smallest_normal, 3.0, 1.0)

    judged_exactly, read_as_zero = [], []

    def judge(rows: pd.DataFrame) -> pd.DataFrame:
        judged_exactly.append(len(rows))
        out = rows.copy()
        out["outcome"] = np.where(out["value"] == 1.0, "ok", "wrong")
        out["reference"] = "1.0"
        return out

    def flushed_input(dtype, mode, inputs, partial):
        read_as_zero.append(inputs["x"])
        return (1.0, True)  # the reference at x = 0, as the flush reads a subnormal x

    x = np.unique(np.float32(np.logspace(-44, -30, 40)).astype(np.float64))
    sweep = _sweep(x, ("eager",))
    sweep["value"] = value(sweep["x"].to_numpy())
    sweep["outcome"] = np.where(sweep["value"] == 3.0, "wrong", "ok")
    bisector = Bisector(
        "x", [], {}, None, judge, lambda d, o: (16.0, ""), flushed_input=flushed_input
    )
    (e,) = bisector.bisect(
        sweep, "reverse", "float32", ["eager"], lambda m, i: {"impl": {"x": value(i["x"])}}, 64
    )
    assert e["exact"] and e["outcome"] == "wrong" and e["side"] == "end"
    assert (e["inside"], e["outside"]) == (last_subnormal, smallest_normal)
    # Judged exactly: the final pair, not the subnormal inputs each round visited.
    assert bisector.stats["misled"] == 0 and sum(judged_exactly) <= 2
    assert len(read_as_zero) > 20 and all(0 < v < smallest_normal for v in read_as_zero)


def _errors(x, outcome_of, modes=("eager", "function"), methods=("reverse",)):
    rows = []
    for method in methods:
        for mode in modes:
            for i, xi in enumerate(x):
                o = outcome_of(xi, method, mode)
                rows.append(
                    {
                        "case": "demo",
                        "implementation": "impl",
                        "method": method,
                        "mode": mode,
                        "dtype": "float32",
                        "order": 1,
                        "partial": "x",
                        "point": i,
                        "x": xi,
                        "value": np.nan if o == "nan" else 1.0,
                        "reference": "1.0",
                        "bits": 32.0 if o == "nan" else 0.0,
                        "outcome": o,
                        "expected": "",
                        "expectation_reason": "",
                    }
                )
    return pd.DataFrame(rows)


def test_findings_merge_ways_that_share_an_interval_and_keep_exact_edges():
    x = np.array([1.0, 10.0, 50.0, 80.0, 100.0, 200.0])

    def outcome(xi, method, mode):
        return "nan" if xi >= 100 else "ok"

    errors = _errors(x, outcome, methods=("reverse", "forward"))
    edges = pd.DataFrame(
        [
            {
                "implementation": "impl",
                "method": m,
                "mode": mode,
                "dtype": "float32",
                "partial": "x",
                "side": "start",
                "outcome": "nan",
                "coarse_inside": 100.0,
                "coarse_outside": 80.0,
                "inside": THRESHOLD,
                "outside": float(np.nextafter(np.float32(THRESHOLD), np.float32(0))),
                "outside_outcome": "ok",
                "exact": True,
            }
            for m in ("reverse", "forward")
            for mode in ("eager", "function")
        ]
    )
    found = find(errors, edges, ["x"], {"x": [[1.0, 200.0]]})
    assert len(found) == 1
    f = found.iloc[0]
    assert f.outcome == "nan" and f.lo == THRESHOLD and f.lo_exact and f.hi_open
    assert f.methods == "reverse, forward" and f.modes == "eager, function"
    assert f.combinations == 4 and f.points == 2
    assert "nan for x ≥ 88.72284 (to 200.0, the last input judged) (reverse, forward;" in f.text
    assert f.expected == "unexpected" and f.probe.startswith("harness probe cases/demo.yaml")
    # A way whose edge differs is the same finding, with its own exact interval.
    edges.loc[3, "inside"] = 90.0
    (f,) = find(errors, edges, ["x"], {"x": [[1.0, 200.0]]}).itertuples()
    variants = json.loads(f.variants)
    assert [v["lo"] for v in variants] == [THRESHOLD, 90.0]
    assert variants[1]["methods"] == ["forward"] and variants[1]["modes"] == ["function"]
    assert "x ≥ 90.0 (to 200.0, the last input judged) (forward; function)" in f.text


def test_a_finding_counts_both_zeros_as_points_of_its_interval():
    """A sweep holds -0.0 and 0.0; a run failing at both counts both in ``hits``, so its
    interval's ``points`` must count both too ("4 points", not "4 of 3 points")."""
    x = np.array([-1.0, 0.0, -0.0, 5e-324, 1.0])
    errors = _errors(x, lambda xi, method, mode: "nan" if xi >= 0 else "ok")
    (f,) = find(errors, pd.DataFrame(), ["x"], {"x": [[-1.0, 1.0]]}).itertuples()
    failing = {int(np.float64(v).view(np.uint64)) for v in x if v >= 0}  # bit patterns
    assert f.hits == f.points == len(failing) == 4
    assert ", 4 points;" in f.text and np.signbit(f.lo) and f.hi == 1.0


@pytest.mark.parametrize("held", [True, False])
def test_a_finding_is_expected_only_when_an_expectation_covers_every_failing_row(held):
    x = np.array([1.0, 100.0, 200.0])
    errors = _errors(x, lambda xi, m, mode: "nan" if xi >= 100 else "ok")
    failing = errors.outcome == "nan"
    errors.loc[failing, "expected"] = "held"
    errors.loc[failing, "expectation_reason"] = "exp overflows"
    if not held:
        errors.loc[failing & (errors.x == 200.0), "expected"] = ""
    (f,) = find(errors, None, ["x"]).itertuples()
    assert f.expected == ("expected" if held else "unexpected")
    # Covered in part: still unexpected, and it says by what and how far.
    assert f.expectation == "exp overflows" and f.failing == 4
    assert f.held == (4 if held else 2)
    assert ("an expectation covers 2 of its 4 failing values" in f.text) == (not held)
    assert not f.lo_exact  # no bisection: the edge stays at the sweep points
    assert "x ≥ ~100.0" in f.text


def test_the_interpolated_guide_is_the_same_one_by_one_and_at_once():
    from harness.edges.brackets import guide_at, guides_at

    rng = np.random.default_rng(3)
    guides, xs = [], []
    for _ in range(200):
        xa, xb = sorted(rng.uniform(-10, 10, 2))
        ends = []
        for xe in (xa, xb):
            m, e = np.frexp(rng.choice([-1, 1, 0]) * 10.0 ** rng.uniform(-300, 300))
            ends.append((xe, float(m), int(e), float(10.0 ** rng.uniform(-20, 0))))
        guides.append((1, *ends))
        xs.append(rng.uniform(xa, xb))
    m, e, t = guides_at(guides, np.array(xs))
    for i, (g, x) in enumerate(zip(guides, xs)):
        m1, e1, t1 = guide_at(g, x)
        assert np.isclose(m[i] * 2.0 ** (e[i] - e1), m1, rtol=1e-12, atol=0) or m[i] == m1
        assert np.isclose(t[i], t1, rtol=1e-12)


def test_a_grid_finding_names_its_input_ranges_and_tiny_truths_keep_their_digits():
    # Two free inputs that do not move together: a grid, no single axis to bisect.
    a = np.array([1.0, 2.0, 4.0, 8.0])
    rows = []
    for i, (ai, bi) in enumerate((p, q) for p in a for q in a):
        bad = ai == bi and ai >= 4.0
        rows.append(
            {
                "case": "grid",
                "implementation": "impl",
                "method": "reverse",
                "mode": "eager",
                "dtype": "float64",
                "order": 1,
                "partial": "a",
                "point": i,
                "a": ai,
                "b": bi,
                "value": 0.0 if bad else 1.0,
                # A true value below float64's range: written from its decimal, not as 0.
                "reference": "5.0821e-435" if bad else "1.0",
                "bits": 53.0 if bad else 0.0,
                "outcome": "zero" if bad else "ok",
                "expected": "",
                "expectation_reason": "",
            }
        )
    (f,) = find(pd.DataFrame(rows), None, ["a", "b"]).itertuples()
    assert f.input == "" and f.hits == 2
    assert json.loads(f.ranges) == {"a": [4.0, 8.0], "b": [4.0, 8.0]}
    assert "2 grid points (a in [4.0, 8.0], b in [4.0, 8.0]) (reverse; eager)" in f.text
    assert "truth 5.0821e-435" in f.text


def test_statements_rank_across_cases_autodiff_before_finite_differences():
    from harness.judge.findings_text import statements

    x = np.array([1.0, 10.0, 100.0, 200.0])
    fd = _errors(
        x, lambda xi, m, mode: "inaccurate" if xi >= 100 else "ok", methods=("finite_difference",)
    )
    fd["case"] = "a_case"
    ad = _errors(x, lambda xi, m, mode: "nan" if xi >= 200 else "ok")
    ad["case"] = "b_case"
    both = pd.concat([find(fd, None, ["x"]), find(ad, None, ["x"])], ignore_index=True)
    s = statements(both)
    # The autodiff NaN (one point, later case) leads the finite differences' two points.
    assert list(s["case"]) == ["b_case", "a_case"]
    assert list(s["methods"]) == ["reverse", "finite_difference"]
    # Written out only as far as asked (the command line prints the first 20).
    first = statements(both, texts=1)
    assert list(first["text"]) == [s["text"][0], ""]
    assert "at x = 200.0: got nan" in s["text"][0] and "finite_difference" in s["text"][1]


def test_the_worst_point_comes_from_the_ways_most_of_them_share():
    x = np.array([1.0, 10.0, 50.0, 100.0, 200.0, 300.0])
    ad = _errors(x, lambda xi, m, mode: "nan" if xi >= 100 else "ok")
    fd = _errors(
        x, lambda xi, m, mode: "nan" if xi >= 200 else "ok", ("eager",), ("finite_difference",)
    )
    fd.loc[fd["outcome"] == "nan", "bits"] = 64.0  # worse, but one way of three
    (f,) = find(pd.concat([ad, fd], ignore_index=True), None, ["x"]).itertuples()
    assert f.methods == "reverse, finite_difference" and f.combinations == 3
    assert f.worst_method == "reverse" and json.loads(f.worst_inputs) == {"x": 100.0}


def test_a_missing_gradients_worst_point_is_one_with_a_truth():
    # maximum(x, y) on its grid: TensorFlow's second derivative is None everywhere,
    # the first point judged is on the diagonal (a kink: no truth), the others have 0.
    x = np.array([-3.0, -2.0, -1.0])
    errors = _errors(x, lambda xi, m, mode: "missing")
    errors["value"], errors["bits"] = np.nan, np.nan
    errors.loc[errors["x"] == -3.0, "reference"] = ""
    errors.loc[errors["x"] != -3.0, "reference"] = "0.0"
    (f,) = find(errors, None, ["x"]).itertuples()
    assert f.outcome == "missing" and json.loads(f.worst_inputs) == {"x": -2.0}
    assert f.worst_truth == "0.0"
    # No point with a truth: the first stands.
    errors["reference"] = ""
    (f,) = find(errors, None, ["x"]).itertuples()
    assert json.loads(f.worst_inputs) == {"x": -3.0}


def test_unexpected_findings_no_expectation_touches_rank_first():
    from harness.judge.findings_text import rank

    frame = pd.DataFrame(
        {
            "expected": ["expected", "unexpected", "unexpected", "unexpected"],
            "held": [5, 3, 0, 0],
            "methods": ["reverse", "reverse", "finite_difference", "reverse"],
            "severity": [7, 7, 7, 1],
            "hits": [50, 40, 30, 1],
        }
    )
    # Untouched autodiff (even mild), untouched finite differences, partly covered, expected.
    assert rank(frame).tolist() == [3, 2, 1, 0]


def test_compact_tables_give_the_same_findings_and_summary():
    from harness.judge.case_tables import summarise_case
    from harness.judge.summary import compact

    x = np.geomspace(1.0, 300.0, 40)

    def outcome(xi, method, mode):
        if xi >= 100:
            return "nan" if method == "reverse" else "inf"
        return "inaccurate" if 20 <= xi < 30 and mode == "function" else "ok"

    errors = _errors(x, outcome, methods=("reverse", "forward"))
    errors["backend"] = "tensorflow"
    errors["reference_rounded"] = 1.0
    errors["message"] = [f"row {i}" for i in range(len(errors))]  # every value distinct
    errors["expected"] = errors["expected"].astype("str")
    small = compact(errors, most=len(x))
    assert isinstance(small["implementation"].dtype, pd.CategoricalDtype)
    assert isinstance(small["mode"].dtype, pd.CategoricalDtype)
    assert not isinstance(small["message"].dtype, pd.CategoricalDtype)  # too many values
    pd.testing.assert_frame_equal(small.astype(object), errors.astype(object), check_dtype=False)
    segments = {"x": [[1.0, 300.0]]}
    pd.testing.assert_frame_equal(
        find(small, None, ["x"], segments), find(errors, None, ["x"], segments)
    )
    pd.testing.assert_frame_equal(
        summarise_case(small, ["x"], segments=segments),
        summarise_case(errors, ["x"], segments=segments),
    )
    assert len(find(errors, None, ["x"], segments)) >= 3


def test_a_search_the_guide_misled_starts_again_where_the_exact_pair_leaves_it():
    """The guided pair of a search is judged exactly; where that contradicts the guide,
    the search starts again, verified, in the part of the sweep's bracket those two
    exact outcomes leave (ordinals: integers)."""
    from harness.edges.brackets import Search

    def search(side, lo, hi):
        return Search(
            "impl", "x", side, "ok", frozenset({"ok"}), lo, hi, 1.0, 2.0, coarse=(100, 200)
        )

    # The run holds at 100 (side "end"); the guide led to (150, 151).
    s = search("end", 150, 151)
    s.restart("wrong", None)  # 150 is not in the run: the edge lies in (100, 150]
    assert (s.lo, s.hi, s.hint, s.rounds) == (100, 150, 150, 0)
    s = search("end", 150, 151)
    s.restart("ok", "ok")  # 151 is still in the run: the edge lies in [151, 200)
    assert (s.lo, s.hi, s.hint) == (151, 200, 151)
    # The run holds at 200 (side "start"); the guided pair is (inside 151, outside 150).
    s = search("start", 150, 151)
    s.restart("wrong", None)
    assert (s.lo, s.hi, s.hint) == (151, 200, 151)
    s = search("start", 150, 151)
    s.restart("ok", "ok")
    assert (s.lo, s.hi, s.hint) == (100, 150, 150)
    # A guided pair on the sweep's own points narrows nothing (-0.0 and 0.0 share
    # ordinal 0: the sweep judged each, a new input is one of them).
    s = Search("impl", "x", "end", "ok", frozenset({"ok"}), 0, 1, -0.0, 5e-324, coarse=(0, 1))
    s.rows = {0: ("reverse", "eager", "float64", 0.0, 0.0, "value", "")}
    s.restart("wrong", None)
    assert (s.lo, s.hi, s.rows) == (0, 1, {})


def test_an_edge_at_a_signed_zero_keeps_the_sign_and_each_zero_s_value():
    """atan2(x, x) is -pi at x = -0.0 and 0 at x = 0.0 (and everywhere else here): a
    `wrong` run of the one point -0.0. The two zeros share ordinal 0, which reads back as
    0.0, so the run's edges must name the sweep's own -0.0, and the edge between the two
    zeros each zero's own value (bit patterns: the sign bit). The sweep lists 0.0 before
    -0.0, which compare equal: the run still lies between -5e-324 and 0.0, each edge's
    two ends adjacent in the floats' own order (-0.0 just below 0.0), not between 0.0
    and 5e-324, a run at -0.0 that would skip 0.0."""
    x = np.array([-1.0, 0.0, -0.0, 5e-324, 1.0])  # the sweep's order: 0.0 before -0.0

    def framework(inputs):
        v = np.asarray(inputs["x"], dtype=np.float64)
        return {"impl": {"x": np.where((v == 0) & np.signbit(v), -math.pi, 0.0)}}

    def judge(rows: pd.DataFrame) -> pd.DataFrame:
        out = rows.copy()
        out["outcome"] = np.where(out["value"] == 0, "ok", "wrong")
        out["reference"] = "0.0"
        return out

    sweep = _sweep(x)  # both modes, the values and their judgement replaced
    sweep["value"] = np.tile(framework({"x": x})["impl"]["x"], 2)
    sweep["outcome"] = np.where(sweep["value"] == 0, "ok", "wrong")
    sweep["reference"], sweep["reference_mantissa"], sweep["reference_exponent"] = "0.0", 0.0, 0
    bisector = Bisector("x", [], {}, None, judge, lambda d, o: (16.0, ""))
    edges = bisector.bisect(
        sweep,
        "reverse",
        "float64",
        ["function", "eager"],
        lambda m, i: framework(i),
        8,
    )

    def position(v: float) -> int:  # float64's total order from its bits, -0.0 at -1
        bits = int(np.float64(v).view(np.uint64))
        return -(bits & (2**63 - 1)) - 1 if bits >> 63 else bits

    assert len(edges) == 4
    for e in edges:
        assert e["outcome"] == "wrong" and e["exact"]
        assert (e["inside"], np.signbit(e["inside"]), e["value_inside"]) == (0.0, True, -math.pi)
        assert abs(position(e["inside"]) - position(e["outside"])) == 1
        assert (e["value_outside"], e["outside_outcome"]) == (0.0, "ok")
        if e["side"] == "start":  # found by the search from -1.0: the float below -0.0
            assert e["outside"] == -5e-324
        else:  # the zero after it: the sweep's 0.0, its own value 0
            assert (e["outside"], np.signbit(e["outside"])) == (0.0, False)
    # The second mode checks the first's start edge at -0.0 itself (not at 0.0, which
    # ordinal 0 reads back as) and finds it there.
    assert [e["verified"] for e in edges if e["mode"] == "eager" and e["side"] == "start"] == [True]
    assert bisector.stats["misled"] == 0


def test_a_misleading_guide_still_ends_at_the_exact_edge():
    """A truth that steps from 1 to 2 at E (between two sweep points) and a framework
    that returns 1 everywhere: the guide interpolates the truth between the bracket's
    ends (1 and 2), so it calls 1 wrong just past the sweep point before E, and the
    exact judgement of that pair contradicts it. The search is done again verified, and the
    edge is E and the float before it, as the exact judgement alone gives."""
    x = np.unique(np.float32(np.logspace(0, 3, 40)).astype(np.float64))
    edge = float(np.float32(300.0))

    def truth(v):
        return np.where(np.asarray(v, dtype=np.float64) >= edge, 2.0, 1.0)

    def judge(rows: pd.DataFrame) -> pd.DataFrame:
        out = rows.copy()
        t = truth(out["x"])
        out["outcome"] = np.where(out["value"] == t, "ok", "wrong")
        out["reference"] = [str(v) for v in t]
        return out

    sweep = _sweep(x, ("eager",))
    sweep["value"] = 1.0
    big = sweep["x"] >= edge
    sweep["outcome"] = np.where(big, "wrong", "ok")
    sweep["reference"] = np.where(big, "2.0", "1.0")
    sweep["reference_exponent"] = np.where(big, 2, 1)
    bisector = Bisector("x", [], {}, None, judge, lambda d, o: (16.0, ""))
    edges = bisector.bisect(
        sweep,
        "reverse",
        "float32",
        ["eager"],
        lambda m, i: {"impl": {"x": np.ones(len(i["x"]))}},
        64,
    )
    before = float(np.nextafter(np.float32(edge), np.float32(0)))
    (e,) = edges
    assert (e["side"], e["outcome"], e["outside_outcome"]) == ("start", "wrong", "ok")
    assert e["exact"] and (e["inside"], e["outside"]) == (edge, before)
    assert bisector.stats["misled"] == 1


def test_a_finding_prints_its_inputs_so_they_read_back_and_a_crash_as_its_exception():
    """0.49999999999999994 is not 0.5 (the float64 just below it, with outcomes of its
    own): the statement prints the input so that ``float()`` reads back the same bits. A
    point that raised shows the exception there, never a value ("got nan")."""
    below = float(np.nextafter(0.5, 0.0))
    x = np.array([0.25, below, 0.75])
    errors = _errors(x, lambda xi, m, mode: "error" if xi == below else "ok").assign(
        dtype="float64"
    )
    at = errors["x"] == below
    errors.loc[at, "value"] = np.nan
    errors["message"] = ""
    errors.loc[at, "message"] = (
        "tensorflow reverse (1 nested GradientTape), order 1 (x), float64, eager mode: "
        "TypeError: select cases must have the same shapes, got [(), (4,)]."
    )
    (text,) = find(errors, None, ["x"])["text"]
    printed = text.split("at x = ")[1].split(":")[0]
    assert float(printed) == below and printed != "0.5"
    assert "raised TypeError: select cases must have the same shapes" in text
    assert "got nan" not in text


def test_a_stable_domain_prints_its_edges_so_they_read_back():
    from harness.judge.case_tables import domain_text

    edge = float(np.float32(88.72283))  # 88.72283172607422: float32's last exp below inf
    text = domain_text({"x": [[1e-30, edge]]}, "float32")
    assert text == "x: [1e-30, 88.72283]"
    assert float(np.float32(text.split(", ")[1].rstrip("]"))) == edge
    below = float(np.nextafter(0.5, 0.0))
    assert domain_text({"t": [[below, 1.0]]}, "float64") == "t: [0.49999999999999994, 1.0]"
