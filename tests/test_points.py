"""Points as each dtype holds them: duplicates collapsed, and the intervals sampled
(no TensorFlow)."""

from __future__ import annotations

import numpy as np

from harness.cases.load import load_case
from harness.cases.points import generate, represent, segment_index, segments

from .conftest import CASES


def test_points_that_round_together_collapse_and_are_counted():
    case = load_case(CASES / "ratio.yaml")
    base = generate(case)
    f16 = represent(base, case.input_names, "float16")
    # float16 holds magnitudes from 2**-24 (6e-8) to 65504: every t below half its
    # smallest subnormal rounds to 0, every t above 65520 is beyond its range.
    t = base["a"].to_numpy()
    zeros = int((t < 2.0**-25).sum())
    beyond = int((t >= 65520).sum())
    assert f16.attrs["dropped"]["beyond_range"] == beyond
    at_zero = f16[f16["a"] == 0]
    assert len(at_zero) == 1 and at_zero["point"].iloc[0] == 0  # the first keeps its number
    assert f16.attrs["dropped"]["collapsed"] >= zeros - 1
    assert not f16.duplicated(["a", "b"]).any()
    # In float64 nothing collapses.
    assert represent(base, case.input_names, "float64").attrs["dropped"] == {
        "beyond_range": 0,
        "collapsed": 0,
    }


def test_segments_keep_sweep_halves_and_stray_values_apart():
    softplus = load_case(CASES / "softplus.yaml")
    assert segments(softplus) == {"x": [[-1e3, -1e-3], [1e-3, 1e3]]}
    ratio = load_case(CASES / "ratio.yaml")
    assert segments(ratio) == {"a": [[1e-45, 1e38]], "b": [[1e-45, 1e38]]}
    # Explicit values are points of their own; samples, one interval from the smallest
    # to the largest (a census sweep).
    case = load_case(CASES / "softplus.yaml")
    assert segments(_with_input(case, "values", [3.0, -2.0, 0.5])) == {
        "x": [[-2.0, -2.0], [0.5, 0.5], [3.0, 3.0]]
    }
    assert segments(_with_input(case, "samples", [3.0, -2.0, 0.5])) == {"x": [[-2.0, 3.0]]}
    pieces = [[-1e3, -1e-3], [1e-3, 1e3]]
    # A value rounded just outside its sweep still belongs to it.
    x = np.array([-1e3, -0.00099999, 0.0010000001, 5.0])
    assert list(segment_index(x, pieces)) == [0, 0, 1, 1]


def _with_input(case, kind: str, values: list[float]):
    """``case`` with its one input ``x`` given as ``kind`` (values or samples)."""
    import dataclasses

    from harness.cases.model import InputSpec

    return dataclasses.replace(case, inputs=(InputSpec("x", kind, {kind: values}),))
