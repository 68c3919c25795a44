"""The compare stage judges a case one dtype at a time (its memory is one dtype's rows),
and states what judging the whole table at once would: the same rows, findings (ids
and order too) and summary."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from harness.config import load_config
from harness.judge.axes import Axes
from harness.results import read_table, write_tables
from harness.stages.prepared import prepare


def _table(**columns) -> pd.DataFrame:
    return pd.DataFrame({k: np.asarray(v, dtype=np.float64) for k, v in columns.items()})


def test_the_inputs_that_vary_are_those_of_the_whole_table_not_of_a_part():
    nan = np.nan
    # x takes one value in each part, two across them; y equals x in the first part only;
    # z equals x wherever x is a number and is NaN where x is (equal only as NaN = NaN).
    first = _table(x=[1, 1], y=[1, 1], z=[1, 1], w=[5, 5])
    second = _table(x=[2, nan], y=[3, 3], z=[2, nan], w=[5, 5])
    axes = Axes(["x", "y", "z", "w"])
    axes.add(first)
    assert axes.free() == []  # nothing varies within the first part
    assert axes.same("x", "y") and axes.same("x", "z")
    axes.add(second)
    assert axes.free() == ["x", "y", "z"]  # w is one value throughout
    assert not axes.same("x", "y")
    assert not axes.same("x", "z") and axes.same("x", "z", equal_nan=True)
    assert not axes.one_axis()  # y varies on its own
    # A tie (NaN equal to NaN) is one axis; w, one value, is none; the first input stays.
    assert axes.independent() == ["x", "y"]
    assert Axes(["w"]).independent() == ["w"]
    # Taking the parts one by one is taking the whole table.
    whole = Axes.of(pd.concat([first, second]), ["x", "y", "z", "w"])
    assert whole.free() == axes.free() and whole.independent() == axes.independent()
    tied = Axes.of(_table(a=[1, 2, 3], b=[1, 2, 3], c=[0, 0, 0]), ["a", "b", "c"])
    assert tied.free() == ["a", "b"] and tied.one_axis() and tied.independent() == ["a"]


def test_tables_written_a_frame_at_a_time_read_back_as_their_concatenation(tmp_path):
    frames = [
        pd.DataFrame(
            {
                "dtype": [d] * 3,
                "value": np.arange(3, dtype=np.float64) + k,
                "note": ["", "a", None],
                "outcome": pd.Categorical(["ok", "nan", "ok"], categories=["ok", "nan", "inf"]),
            }
        )
        for k, d in enumerate(("float32", "float64"))
    ]
    path = tmp_path / "t.parquet"
    assert write_tables(iter(frames), path, {"case": "c"}) == 6
    back = read_table(path)
    expected = pd.concat(frames, ignore_index=True)
    pd.testing.assert_frame_equal(back, expected)
    assert pq.ParquetFile(path).metadata.num_row_groups == 2  # one per frame, as they came
    # One dtype's rows are read without the others'.
    part = read_table(path, filters=[("dtype", "==", "float64")])
    pd.testing.assert_frame_equal(part, frames[1])

    # Nothing to write is an error, and no file; a failure half-way keeps the old file.
    with pytest.raises(ValueError, match="no table to write"):
        write_tables(iter([]), tmp_path / "none.parquet", {})
    assert not (tmp_path / "none.parquet").exists()

    def failing():
        yield frames[0]
        raise RuntimeError("the judge broke")

    with pytest.raises(RuntimeError, match="the judge broke"):
        write_tables(failing(), path, {"case": "c"})
    pd.testing.assert_frame_equal(read_table(path), expected)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.parquet"]


@pytest.fixture
def two_dtypes(tmp_path):
    path = tmp_path / "two.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            title: softplus, two ways, two dtypes
            source: test
            inputs:
              x: {log: {from: 1, to: 800, count: 13}}
            function: log(1 + exp(x))
            derivatives: {wrt: x, orders: [1, 2]}
            implementations:
              naive: {expression: log(1 + exp(x))}
              stable: {expression: softplus(x)}
            dtypes: [float32, float64]
            methods: [reverse, finite_difference]
            modes: [eager]
            """
        )
    )
    return path


@pytest.mark.slow
def test_a_case_judged_a_dtype_at_a_time_is_stated_as_one_table(two_dtypes, tmp_path, monkeypatch):
    import harness.stages.expression as expression
    from harness.causes.evidence import attach
    from harness.causes.study import classify
    from harness.judge.case_tables import case_findings, case_summary, summarise_case
    from harness.judge.findings import find
    from harness.judge.summary import compact
    from harness.stages.inputs import read_edges, read_localised
    from harness.stages.run import run_stages

    given = []
    judge = expression.judge

    def recording(prep, table, reference, flush):
        given.append((sorted(set(table["dtype"])), sorted(set(reference["dtype"]))))
        return judge(prep, table, reference, flush)

    monkeypatch.setattr(expression, "judge", recording)
    config = load_config(overrides={"backends": ["torch"], "setting": "full"})
    prep = prepare(two_dtypes, config)
    results = tmp_path / "results"
    errors = run_stages(prep, results)
    # The judge saw one dtype at a time, values and reference alike.
    assert given == [(["float32"], ["float32"]), (["float64"], ["float64"])]
    path = results / "two" / "errors.parquet"
    groups = pq.ParquetFile(path).metadata
    dtypes = [
        groups.row_group(i).column(list(errors.columns).index("dtype")).statistics
        for i in range(groups.num_row_groups)
    ]
    assert [(s.min, s.max) for s in dtypes] == [("float32", "float32"), ("float64", "float64")]
    # What the whole table, judged at once, states: the same findings, ids and order
    # included, and the same summary.
    whole = compact(read_table(path))
    names = ["x"]
    edges = read_edges(prep, results, "torch")
    memo: dict = {}
    findings = find(whole, edges, names, prep.segments, prep.case, memo)
    findings = attach(findings, whole, read_localised(prep, results, "torch"), prep.case, names)
    findings = classify(findings)
    assert len(findings) >= 2 and set(findings["dtype"]) == {"float32", "float64"}
    pd.testing.assert_frame_equal(case_findings(path), findings)
    # Each finding's scale: the largest finite |rounded truth| of its worst point's lower
    # orders, in its back end, implementation and dtype (NaN for a value).
    table = read_table(path)
    for f in findings.itertuples():
        x = json.loads(f.worst_inputs)["x"]
        lower = table[
            (table.backend == f.backend)
            & (table.implementation == f.implementation)
            & (table.dtype == f.dtype)
            & (table.x == x)
            & (table.order < f.order)
        ]["reference_rounded"].abs()
        lower = lower[np.isfinite(lower)]
        want = lower.max() if f.order > 0 and len(lower) else np.nan
        assert f.scale == want or (np.isnan(f.scale) and np.isnan(want)), f
    assert np.isfinite(findings["scale"].astype(float)).any()  # some scale to check
    summary = summarise_case(whole, names, segments=prep.segments, edges=edges, memo=memo)
    pd.testing.assert_frame_equal(case_summary(path), summary)
    pd.testing.assert_frame_equal(errors, read_table(path))
