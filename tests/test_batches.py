"""Many cases in one process: the ``batch`` setting (every evaluation padded to one
shape, :mod:`harness.backends.padding`), the stage commands over several case files,
and the census's batches (:mod:`harness.workflow.census`).

Expected values are exact: a cubic's derivatives at small dyadic points (every
operation exact in float32), the padded elements' count, the partition's sets.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import yaml

from harness.backends.padding import padded
from harness.config import load_config
from harness.results import read_metadata
from harness.stages.prepared import Selection
from harness.stages.run import run_case

from .conftest import ROOT, write_case

_CUBIC = """\
    title: a cubic
    source: test
    inputs:
      x: {values: [-3.0, -1.5, -0.25, 0.0, 0.75, 2.0, 3.5]}
    function: x*x*x - 2*x
    derivatives: {wrt: x, orders: [1, 2, 3, 4]}
    implementations:
      cubic: {expression: x*x*x - 2*x}
    dtypes: [float32, float64]
    """


def test_padding_adds_copies_of_the_first_point_and_nothing_else():
    x, y = np.array([0.5, -2.0, 3.0]), np.array([1.0, 2.0, 4.0])
    got = padded({"x": x, "y": y}, 5)
    assert got["x"].tolist() == [0.5, -2.0, 3.0, 0.5, 0.5]
    assert got["y"].tolist() == [1.0, 2.0, 4.0, 1.0, 1.0]
    assert padded({"x": x}, None)["x"].tolist() == x.tolist()
    assert padded({"x": x}, 2)["x"].tolist() == x.tolist()  # never cut


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_a_padded_evaluation_gives_the_case_its_own_rows(tmp_path, backend):
    """With ``batch: 64`` the framework computes 64 inputs per call (the evaluation's
    provenance says so) and the case gets its 7 points' rows, with the exact
    derivatives of x^3 - 2x (3x^2 - 2, 6x) by reverse and forward mode, as without
    padding."""
    path = write_case(tmp_path, "cubic", _CUBIC)
    tables = {}
    for batch in (None, 64):
        config = load_config(overrides={"setting": "full", "backends": [backend], "batch": batch})
        results = tmp_path / f"results_{batch}"
        selection = Selection(modes=["eager"], methods=["reverse", "forward"], orders=[0, 1, 2])
        errors = run_case(path, config, selection, results=results)
        meta = read_metadata(next((results / "cubic" / backend).glob("*/timings.parquet")))
        assert meta["evaluation"]["width"] == (batch or 7)
        tables[batch] = errors
    plain, wide = tables[None], tables[64]
    keys = ["implementation", "method", "mode", "dtype", "order", "x"]
    wide = wide.set_index(keys).sort_index()
    plain = plain.set_index(keys).sort_index()
    assert wide.index.equals(plain.index)
    assert wide["outcome"].equals(plain["outcome"])
    assert np.array_equal(wide["value"], plain["value"], equal_nan=True)
    x = wide.index.get_level_values("x").to_numpy()
    order = wide.index.get_level_values("order").to_numpy()
    exact = np.select([order == 0, order == 1], [x**3 - 2 * x, 3 * x**2 - 2], 6 * x)
    assert len(wide) == 2 * 2 * 3 * 7  # methods x dtypes x orders x points
    assert np.array_equal(wide["value"], exact)


def test_the_stage_commands_take_several_cases_and_go_on_past_a_broken_one(tmp_path, capsys):
    """``harness reference A B C``: each case's reference in one process; a case that
    does not validate is named with its line and key, the others are written, and the
    exit status is the worst (2, as for a refused case alone)."""
    from harness.cli import main

    good = [write_case(tmp_path, name, _CUBIC) for name in ("first", "second")]
    broken = write_case(tmp_path, "broken", _CUBIC.replace("orders: [1, 2, 3, 4]", "orders: [9]"))
    results = tmp_path / "results"
    status = main(["reference", str(good[0]), str(broken), str(good[1]), "--results", str(results)])
    assert status == 2
    assert "broken.yaml:6: derivatives.orders[0]: must be at most 4" in capsys.readouterr().err
    for path in good:
        table = pd.read_parquet(results / path.stem / "reference.parquet")
        assert set(table["x"]) == {-3.0, -1.5, -0.25, 0.0, 0.75, 2.0, 3.5}
    assert not (results / "broken").exists()


def test_census_batches_hold_every_case_once_and_each_kernel_s_layouts_together(tmp_path):
    from harness.census.cases import write_cases
    from harness.workflow.census import census_batches

    from .test_census import _expected_cases

    cases = sorted(_expected_cases())
    config = yaml.safe_load((ROOT / "config" / "study.yaml").read_text())
    quick = config["census"]["quick"]
    write_cases(tmp_path, quick["dtypes"], quick["per_sign"])
    count = 2
    config["census"]["quick"] = {**quick, "batches": count}
    batches = census_batches(config, cases, tmp_path)
    assert list(batches) == [f"b{i}" for i in range(1, count + 1)]
    placed = [c for members in batches.values() for c in members]
    assert sorted(placed) == cases  # each once
    where = {c: b for b, members in batches.items() for c in members}
    for case in cases:
        if case.endswith("_grid"):
            assert where[case] == where[case[: -len("_grid")] + "_diagonal"]
    # One batch: all of them.
    one = {**config, "census": {"quick": {"batches": 1}}}
    assert census_batches(one, cases, tmp_path) == {"b1": cases}


def test_a_census_split_by_dtype_gives_one_evaluation_job_per_dtype_and_its_tables(tmp_path):
    """With the census block's ``split: [dtype]`` each framework's evaluation of a batch is
    one job per dtype, each writing that dtype's piece of every case; the comparisons read
    exactly those pieces. Without it, one job writes every piece (the study's split)."""
    from harness.census.cases import write_cases
    from harness.workflow import check_config
    from harness.workflow.census import (
        census_config,
        census_evaluate_jobs,
        census_evaluations,
        census_settings,
    )

    config = yaml.safe_load((ROOT / "config" / "study.yaml").read_text())
    config["setting"] = "quick"
    dtypes = ["float32", "float64"]
    block = {"dtypes": dtypes, "per_sign": 4, "batches": 1, "split": ["dtype"]}
    config["census"] = {"quick": block}
    cases = sorted(p.stem for p in write_cases(tmp_path, dtypes, 4))[:3]
    jobs = census_evaluate_jobs(config, cases, "jax", tmp_path)
    assert jobs == {"float32": cases, "float64": cases}
    every = census_evaluations(config, cases, "jax", tmp_path)["evaluations"]
    mine = {d: census_evaluations(config, cases, "jax", tmp_path, piece=d) for d in dtypes}
    assert sorted(every) == sorted(
        f"results/census/{c}/jax/{d}/evaluations.parquet" for c in cases for d in dtypes
    )
    assert sorted(mine["float32"]["evaluations"] + mine["float64"]["evaluations"]) == sorted(every)
    for stage in ("evaluate", "compare"):
        assert json.loads(census_settings(config, stage))["split"]["quick"] == ["dtype"]
    # The study's own split is the census's only where the census block says none.
    assert config["split"]["quick"] == []
    del block["split"]
    assert census_config(config) is config
    assert census_evaluate_jobs(config, cases, "jax", tmp_path) == {None: cases}
    assert census_evaluations(config, cases, "jax", tmp_path)["evaluations"] == [
        f"results/census/{c}/jax/all/evaluations.parquet" for c in cases
    ]
    with pytest.raises(ValueError, match=r"census\.quick\.split"):
        check_config({**config, "census": {"quick": {"split": ["kernel"]}}})


def test_census_jobs_run_batch_by_batch_comparisons_before_the_next_evaluations():
    from harness.workflow.census import census_priority

    batches = {"b1": ["census_a"], "b2": ["census_b"]}
    backends = ["tensorflow", "jax", "torch"]
    order = [
        ("b1", "reference"),
        ("b1", "tensorflow"),
        ("b1", "jax"),
        ("b1", "torch"),
        ("b1", None),  # the comparisons
        ("b2", "reference"),
        ("b2", "tensorflow"),
        ("b2", "jax"),
        ("b2", "torch"),
        ("b2", None),
    ]
    priorities = [census_priority(batches, b, backends, k) for b, k in order]
    assert priorities == sorted(priorities, reverse=True)
    assert len(set(priorities)) == len(priorities)


def test_census_evaluation_jobs_declare_at_least_their_measured_peaks():
    """A scheduler that enforces ``mem_mb`` kills a job past it: TensorFlow's census batch
    peaked at 7,108.52 MB in the quick setting and 9,090.75 MB in the full one
    (benchmarks/README.md, their Snakemake benchmark files)."""
    from harness.workflow import check_config
    from harness.workflow.census import census_mem_mb

    config = yaml.safe_load((ROOT / "config" / "study.yaml").read_text())
    check_config(config)
    assert census_mem_mb({**config, "setting": "quick"}, "evaluate") >= 7109
    assert census_mem_mb({**config, "setting": "full"}, "evaluate") >= 9091
    bad = {**config, "census": {"full": {"evaluate_mem_mb": 100}}}
    with pytest.raises(ValueError, match=r"census\.full\.evaluate_mem_mb"):
        check_config(bad)


def test_census_reference_and_comparison_jobs_declare_their_measured_peaks():
    """The full census's comparison of ``census_atan2_grid`` (13,615,200 evaluation rows)
    was killed by the kernel at 17.7 GB beside a TensorFlow job while its rule declared
    1,500 MB; alone it peaked at 18,791,880 kB, and at 6,013,136 kB since the comparison
    holds one dtype's rows at a time. Its reference jobs peaked at 4,250.62 MB,
    the quick census's at 275.32 MB and its comparisons at 549.34 MB (their Snakemake
    benchmark files and `time -v`). Collecting the quick census peaked at 611,216 kB and
    reproducing its PyTorch root causes at 343,708 kB; ten full-census cases (420,117
    findings) at 2,004,840 and 915,096 kB (JAX)."""
    from harness.workflow import check_config
    from harness.workflow.census import census_mem_mb

    config = yaml.safe_load((ROOT / "config" / "study.yaml").read_text())
    check_config(config)
    quick, full = ({**config, "setting": s} for s in ("quick", "full"))
    assert census_mem_mb(quick, "reference") >= 276 and census_mem_mb(quick, "compare") >= 550
    assert census_mem_mb(full, "reference") >= 4251
    assert census_mem_mb(full, "compare") >= 6_013_136 // 1000 + 1
    assert census_mem_mb(quick, "collect") >= 612 and census_mem_mb(quick, "reproduce") >= 344
    # The whole full census has more findings than those ten cases.
    assert census_mem_mb(full, "collect") > 2_004_840 // 1000 + 1
    assert census_mem_mb(full, "reproduce") > 915_096 // 1000 + 1
    for key in ("reference_mem_mb", "compare_mem_mb", "collect_mem_mb", "reproduce_mem_mb"):
        with pytest.raises(ValueError, match=rf"census\.full\.{key}"):
            check_config({**config, "census": {"full": {key: 100}}})
    # The rules declare them.
    rules = (ROOT / "rules" / "census.smk").read_text()
    assert 'mem_mb=census_mem_mb(config, "reference")' in rules
    assert 'mem_mb=census_mem_mb(config, "compare")' in rules
    assert 'mem_mb=census_mem_mb(config, "collect")' in rules
    assert 'mem_mb=census_mem_mb(config, "reproduce")' in rules
