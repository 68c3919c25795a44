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


def test_the_diff_names_what_else_produced_the_other_set(results, tmp_path, capsys):
    """Same values, another TensorFlow and another CPU in the provenance: no difference in
    results (exit 0), and the two facts named, nothing else."""
    copy = tmp_path / "copy"
    shutil.copytree(results, copy)
    path = copy / "softplus" / "errors.parquet"
    meta = read_metadata(path)
    packages = dict(meta["packages"])
    name = "tensorflow-cpu" if "tensorflow-cpu" in packages else "tensorflow"
    was_tf, was_cpu = packages[name], meta["cpu_features"]
    packages[name] = "9.99.0"
    write_table(
        read_table(path),
        path,
        {**meta, "packages": packages, "cpu_features": "family 6, model 85, stepping 7; avx2"},
    )
    from harness.judge.diff import diff_results

    diff = diff_results(results, copy)
    assert diff.empty
    assert diff.setting == {
        "cpu_features": (was_cpu, "family 6, model 85, stepping 7; avx2"),
        f"package {name}": (was_tf, "9.99.0"),
    }
    html = tmp_path / "diff.html"
    assert main(["diff", str(results), str(copy), "--html", str(html)]) == 0
    out = capsys.readouterr().out
    assert f"made with another package {name}: A {was_tf} | B 9.99.0" in out
    assert "9.99.0" in html.read_text()
