"""The frameworks side by side: the verdict at each point judged in several back ends
(:mod:`harness.judge.agreement`), one statement for a finding every framework shares, and
``reports/frameworks.html`` in headless Chromium on real three-framework runs."""

from __future__ import annotations

import pandas as pd
import pytest

from harness.config import load_config
from harness.judge.agreement import agreement, disagreements, split_share
from harness.results import write_table
from harness.stages.collect import collect
from harness.stages.report import render_reports
from harness.stages.run import run_case

from .test_report import watched_page

BACKENDS = ("tensorflow", "jax", "torch")


def _rows(backend, mode, outcomes):
    return [
        {
            "backend": backend,
            "implementation": "f",
            "method": "reverse",
            "mode": mode,
            "dtype": "float32",
            "partial": "x",
            "x": float(x),
            "outcome": o,
        }
        for x, o in enumerate(outcomes)
    ]


def test_verdict_per_point_is_the_worst_of_each_frameworks_modes():
    # Points x = 0..6; TensorFlow in one mode, JAX in two (jit fails where eager is ok).
    errors = pd.DataFrame(
        _rows("tensorflow", "eager", ["ok", "ok", "nan", "flushed", "ok", "inaccurate", "ok"])
        + _rows("jax", "eager", ["ok", "nan", "inf", "ok", "ok", "inaccurate", "ok"])
        + _rows("jax", "jit", ["ok", "ok", "inf", "ok", "wrong", "inaccurate", "not_applicable"])
    )
    points = agreement(errors, ["x"]).set_index("x")
    # x = 3: TensorFlow's row is flushed (not judged), one back end left: not compared.
    # x = 6: JAX's jit row is not_applicable, its eager row ok: compared, agree.
    assert list(points.index) == [0.0, 1.0, 2.0, 4.0, 5.0, 6.0]
    assert points.verdict.to_dict() == {
        0.0: "agree",
        1.0: "split",  # TensorFlow ok, JAX eager nan
        2.0: "differ",  # nan against inf
        4.0: "split",  # JAX jit wrong
        5.0: "agree",
        6.0: "agree",
    }
    assert points.loc[4.0, "outcomes"] == {"tensorflow": "ok", "jax": "wrong"}
    assert points.loc[1.0, "derivative"] == "d/dx"
    assert split_share(points.reset_index()) == {
        "split": 2,
        "differ": 1,
        "agree": 3,
        "compared": 6,
    }
    off = disagreements(points.reset_index(), "x", BACKENDS)
    # Splits first, the worse outcome first (wrong before nan), then the differ.
    assert off[["verdict", "pattern", "points", "lo", "hi"]].values.tolist() == [
        ["split", "tensorflow: ok · jax: wrong", 1, 4.0, 4.0],
        ["split", "tensorflow: ok · jax: nan", 1, 1.0, 1.0],
        ["differ", "tensorflow: nan · jax: inf", 1, 2.0, 2.0],
    ]
    # One back end only: nothing to compare.
    assert agreement(errors[errors.backend == "jax"], ["x"]).empty


# Seed 002's softplus in the three frameworks. The naive log(1 + exp(x)) has a NaN
# gradient in float32 from x = 88.72284 (exp overflows) in all three; PyTorch's
# softplus returns x itself above its threshold 20, so its derivative is exactly 1 there,
# while sigmoid(x) = 1 - e^-x is 1 - 7.6e-10 at x = 21 and 1 - 9.4e-14 at x = 30 in
# float64 (beyond 16 ulps: inaccurate) and rounds to 1 from x = 37.
SOFTPLUS = """\
title: softplus in three frameworks
source: seeds/002
inputs:
  x: {values: [1.0, 10.0, 21.0, 30.0, 50.0, 90.0, 100.0]}
function: log(1 + exp(x))
derivatives: {wrt: x, orders: [1]}
implementations:
  naive: {expression: log(1 + exp(x))}
  builtin: {expression: softplus(x)}
dtypes: [float32, float64]
modes: [eager]
methods: [reverse]
"""


@pytest.mark.slow
def test_frameworks_page_leads_with_a_framework_that_is_wrong_where_another_is_right(
    tmp_path,
):
    from playwright.sync_api import sync_playwright

    cases = tmp_path / "cases"
    cases.mkdir()
    config = load_config(overrides={"setting": "full", "backends": list(BACKENDS)})
    (cases / "softplus3.yaml").write_text(SOFTPLUS)
    run_case(cases / "softplus3.yaml", config, results=tmp_path / "results")
    summary, findings, meta = collect(sorted((tmp_path / "results").glob("*/errors.parquet")))
    write_table(summary, tmp_path / "results" / "summary.parquet", meta)
    write_table(findings, tmp_path / "results" / "findings.parquet", meta)
    render_reports(tmp_path / "results", tmp_path / "reports", cases)
    with sync_playwright() as p:
        browser, page, problems, requests = watched_page(p)
        page.goto((tmp_path / "reports" / "index.html").as_uri(), wait_until="load")
        # The findings the root causes absorb are behind an expander: open it.
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        index_lines = page.locator("ol.findings li").all_inner_texts()
        page.click("text=Frameworks side by side")
        assert page.url.endswith("frameworks.html")
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        tables = page.locator("table")
        overview = tables.nth(0).inner_text()
        first_row = tables.nth(1).locator("tbody tr").first.inner_text()
        unshared = page.locator("ol.findings li").all_inner_texts()
        figures = page.locator("figure.plot svg").count()
        browser.close()
    assert problems == []
    assert all(u.startswith(("file://", "data:")) for u in requests), requests
    # The naive gradient's NaN (seed 002) in all three: one statement per point.
    for x in ("90.0", "100.0"):
        shared = [t for t in index_lines if f"naive · d/dx · float32: nan for x = {x}" in t]
        assert len(shared) == 1 and "· TensorFlow, JAX, PyTorch ·" in shared[0], index_lines
    # 2 implementations x 2 dtypes x 7 points x orders 0, 1 compared; PyTorch's
    # threshold splits the value and the derivative at x = 21 and 30.
    assert "softplus3\tTensorFlow, JAX, PyTorch\t56\t4\t0\t52" in overview, overview
    assert first_row.split("\t")[:11] == [
        "softplus3",
        "builtin",
        "reverse",
        "d/dx",
        "float64",
        "split",
        "TensorFlow: ok · JAX: ok · PyTorch: inaccurate",
        "2",
        "x",
        "21",
        "30",
    ], first_row
    assert len(unshared) == 4, unshared
    assert all("softplus3 · PyTorch · builtin · " in t for t in unshared), unshared
    assert all(": inaccurate for x = " in t for t in unshared), unshared
    assert figures == 2  # the value and d/dx in float64 split: their bands
