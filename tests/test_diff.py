"""``harness diff``: what differs between two result sets."""

from __future__ import annotations

import shutil

import pytest

from harness.cli import main
from harness.config import load_config
from harness.results import read_metadata, read_table, write_table
from harness.stages.prepared import Selection
from harness.stages.run import run_case

from .conftest import ROOT

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    where = tmp_path_factory.mktemp("diff") / "results"
    config = load_config(overrides={"backends": ["tensorflow", "torch"]})
    sel = Selection(dtypes=["float32"], methods=["reverse"], modes=["eager"], orders=[0, 1])
    run_case(ROOT / "cases" / "softplus.yaml", config, sel, results=where, progress=None)
    main(["collect", "--results", str(where)])
    return where


def test_a_result_set_against_itself_has_no_differences(results, tmp_path, capsys):
    html = tmp_path / "diff.html"
    assert main(["diff", str(results), str(results), "--html", str(html)]) == 0
    out = capsys.readouterr().out
    assert "0 with another outcome" in out and "No differences." in html.read_text()


def test_one_edited_outcome_shows_exactly_that_row(results, tmp_path, capsys):
    copy = tmp_path / "copy"
    shutil.copytree(results, copy)
    path = copy / "softplus" / "errors.parquet"
    errors = read_table(path)
    pick = errors.index[(errors.backend == "torch") & (errors.outcome == "ok")][7]
    row = errors.loc[pick]
    errors["outcome"] = errors["outcome"].astype(str)
    errors.loc[pick, "outcome"] = "wrong"
    write_table(errors, path, read_metadata(path))
    from harness.judge.diff import diff_results

    diff = diff_results(results, copy)
    assert len(diff.rows) == 1
    got = diff.rows.iloc[0]
    for k in ("backend", "implementation", "method", "mode", "dtype", "partial"):
        assert got[k] == row[k]
    assert got["at"] == f"x={float(row['x'])!r}"
    assert (got["outcome_a"], got["outcome_b"]) == ("ok", "wrong")
    assert diff.domains.empty and diff.findings.empty
    assert main(["diff", str(results), str(copy)]) == 1
    assert "ok" in capsys.readouterr().out


def test_two_back_ends_of_one_result_set(results, capsys):
    """TensorFlow against PyTorch in one folder: rows matched without the back end; the
    naive softplus is nan at x = 100 in both, so that value is not a difference."""
    from harness.judge.diff import diff_results

    diff = diff_results(results, results, "tensorflow", "torch")
    assert "backend" not in diff.rows.columns
    at100 = diff.rows[(diff.rows.implementation == "naive") & (diff.rows["at"] == "x=100.0")]
    assert at100[at100.partial == "x"].empty
    assert diff.compared["rows_a"] == diff.compared["rows_b"] > 0
