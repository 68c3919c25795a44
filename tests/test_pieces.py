"""Evaluation split into pieces (harness.stages.pieces): the plan, the files, and that splitting
changes no value, no edge and no verdict."""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd
import pytest

from harness.config import load_config
from harness.results import read_metadata, read_table
from harness.stages.compare import compare_stage
from harness.stages.pieces import ALL, Piece, parse_piece, plan
from harness.stages.prepared import Selection, prepare
from harness.stages.run import run_stages


def test_the_plan_names_one_piece_per_dtype_and_method():
    dtypes, methods = ("float32", "float64"), ("reverse", "forward")
    assert plan([], dtypes, methods) == [Piece(ALL, dtypes, methods)]
    assert [p.name for p in plan(["dtype"], dtypes, methods)] == ["float32", "float64"]
    assert plan(["dtype"], dtypes, methods)[1] == Piece("float64", ("float64",), methods)
    split = plan(["dtype", "method"], dtypes, methods)
    assert [(p.name, p.dtypes, p.methods) for p in split] == [
        (f"{d}.{m}", (d,), (m,)) for d in dtypes for m in methods
    ]
    # An experiment is one computation; an evaluation with nothing to run is one piece.
    assert plan(["dtype", "method"], dtypes, methods, whole=True) == [Piece(ALL, dtypes, methods)]
    assert plan(["dtype"], (), methods) == [Piece(ALL, (), methods)]
    assert parse_piece("float64.forward", split) == split[3]
    with pytest.raises(ValueError, match="float16.reverse.*float32.reverse, float32.forward"):
        parse_piece("float16.reverse", split)


def test_the_split_is_a_setting_per_setting(soft):
    config = load_config(overrides={"split": {"quick": ["dtype"], "full": []}})
    with pytest.raises(Exception, match="split"):
        load_config(overrides={"split": {"full": ["mode"]}})
    case = prepare(soft, config).settings
    assert case.split == ("dtype",)
    assert (
        prepare(soft, load_config(overrides={**config.data, "setting": "full"})).settings.split
        == ()
    )


@pytest.fixture
def soft(tmp_path):
    path = tmp_path / "soft.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            title: softplus, two ways
            source: test
            inputs:
              x: {log: {from: 1, to: 200, count: 9}}
            function: log(1 + exp(x))
            derivatives: {wrt: x, orders: [1, 2, 3]}
            implementations:
              naive: {expression: log(1 + exp(x))}
              stable: {expression: softplus(x)}
            dtypes: [float32, float64]
            methods: [reverse, finite_difference]
            modes: [eager, function]
            """
        )
    )
    return path


def _full(split):
    return load_config(
        overrides={"setting": "full", "backends": ["tensorflow"], "split": {"full": split}}
    )


EDGE_KEYS = ("implementation", "method", "mode", "dtype", "partial", "side", "coarse_inside")


@pytest.mark.slow
def test_splitting_changes_no_value_edge_or_verdict(soft, tmp_path):
    whole = tmp_path / "whole"
    split = tmp_path / "split"
    errors_whole = run_stages(prepare(soft, _full([])), whole)
    prep = prepare(soft, _full(["dtype", "method"]))
    errors_split = run_stages(prep, split)
    # One folder per piece, nothing else.
    folders = sorted(p.name for p in (split / "soft" / "tensorflow").iterdir())
    assert folders == sorted(
        f"{d}.{m}" for d in ("float32", "float64") for m in ("reverse", "finite_difference")
    )
    assert sorted(p.name for p in (whole / "soft" / "tensorflow").iterdir()) == [ALL]
    piece = read_metadata(split / "soft" / "tensorflow" / "float32.reverse" / "evaluations.parquet")
    assert piece["piece"] == "float32.reverse"
    assert piece["selection"]["dtypes"] == ["float32"] and piece["selection"]["methods"] == [
        "reverse"
    ]
    keys = ["backend", "implementation", "method", "mode", "dtype", "partial", "point"]
    a = errors_whole.sort_values(keys).reset_index(drop=True)
    b = errors_split.sort_values(keys).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)
    assert (a.outcome != "ok").any()  # the naive form overflows: there is something to split
    edges = [
        pd.concat(
            [read_table(p) for p in sorted((r / "soft" / "tensorflow").glob("*/edges.parquet"))]
        )
        .sort_values([*EDGE_KEYS])
        .reset_index(drop=True)
        # How the search went differs: an edge one method found, a later one in the same
        # job verifies in fewer rounds.
        .drop(columns=["rounds", "verified"])
        for r in (whole, split)
    ]
    assert len(edges[0]) > 0
    pd.testing.assert_frame_equal(edges[0], edges[1], check_dtype=False)
    # Each piece added what its bisection verified to a shard of its own: no two pieces
    # wrote the same cache file.
    shards = sorted((split / ".cache" / "reference").glob("*.shards/*.parquet"))
    assert shards and {s.stem for s in shards} <= {f"tensorflow.{f}" for f in folders}
    # A piece that goes missing is named, with the command that makes it again.
    (split / "soft" / "tensorflow" / "float64.reverse" / "evaluations.parquet").unlink()
    with pytest.raises(
        ValueError,
        match=r"float64\.reverse/evaluations\.parquet does not exist.*--piece float64\.reverse",
    ):
        compare_stage(prep, split)


@pytest.mark.slow
def test_a_piece_made_by_a_narrower_study_belongs_to_a_wider_one(soft, tmp_path):
    # Adding a dtype to the study adds pieces; those already made stay valid.
    narrow = load_config(overrides={**_full(["dtype", "method"]).data, "dtypes": ["float64"]})
    wide = _full(["dtype", "method"])
    results = tmp_path / "results"
    run_stages(prepare(soft, narrow), results)
    before = {
        p: p.stat().st_mtime_ns
        for p in (results / "soft" / "tensorflow").glob("*/evaluations.parquet")
    }
    from harness.stages.evaluate import evaluate_stage
    from harness.stages.reference import reference_stage

    prep = prepare(soft, wide)
    reference = reference_stage(prep, results)
    for method in ("reverse", "finite_difference"):
        evaluate_stage(prep, results, reference=reference, piece=f"float32.{method}")
    errors = compare_stage(prep, results)
    assert set(errors.dtype) == {"float32", "float64"}
    assert {p: p.stat().st_mtime_ns for p in before} == before
    assert np.isfinite(errors[errors.outcome == "ok"].value).all()


def test_a_piece_narrows_the_case_to_its_dtypes_and_methods(soft):
    prep = prepare(soft, _full(["dtype"]), Selection(backends=["tensorflow"]))
    assert [p.name for p in prep.pieces("tensorflow")] == ["float32", "float64"]
    narrowed = prep.narrowed(prep.pieces("tensorflow")[0])
    assert narrowed.settings.dtypes == ("float32",) and set(narrowed.points) == {"float32"}
    assert narrowed.selection_record()["methods"] == ["reverse", "finite_difference"]
