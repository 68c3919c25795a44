"""Experiment cases (seed 001's Hessian norm and matrix mixed partials): references
against independent mpmath computations, the published questions answered on real
TensorFlow runs, bit-for-bit reproducibility, and the pages in headless Chromium."""

from __future__ import annotations

import shutil
from pathlib import Path

import mpmath
import numpy as np
import pytest

from harness.backends.catalogue import load
from harness.cases.experiment_kinds import ExperimentCase
from harness.cases.load import load_case
from harness.experiments import hessian_norm, matrix_partials
from harness.experiments.stages import evaluate_experiment
from harness.results import read_metadata
from harness.stages.report import render_case
from harness.stages.run import run_case

from .conftest import CASES

MATRIX_CASE = """\
title: Mixed partials (small)
source: seeds/001
experiment: matrix_mixed_partials
parameters: {sizes: [2, 3], samples: 1, seed: 7}
dtypes: [float64, float32]
modes: [function]
"""

HESSIAN_CASE = """\
title: Hessian norm (small)
source: seeds/001
experiment: hessian_norm
parameters:
  functions: [log_sum_exp, rosenbrock]
  dimensions: [2, 10]
  steps: {from: 1e-12, to: 1, count: 25}
  probes: [1, 16]
  power_iterations: 10
  seed: 3
dtypes: [float32, float64]
modes: [function]
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    where = tmp_path_factory.mktemp("experiments")
    (where / "cases").mkdir()
    out = {}
    for name, text in (("mixed", MATRIX_CASE), ("hnorm", HESSIAN_CASE)):
        path = where / "cases" / f"{name}.yaml"
        path.write_text(text)
        out[name] = run_case(path, results=where / "results")
    return where, out


def _values(errors, implementation, quantity, n, dtype="float64"):
    rows = errors[
        (errors.implementation == implementation)
        & (errors.partial == quantity)
        & (errors.n == n)
        & (errors.dtype == dtype)
        & (errors["sample"] == 0)
    ].sort_values("entry")
    return rows.value.to_numpy(float)


def test_the_shipped_experiment_cases_validate():
    for name in ("hessian_norm", "matrix_mixed_partials"):
        case = load_case(CASES / f"{name}.yaml")
        assert isinstance(case, ExperimentCase)
        assert case.source.startswith("seeds/001")
    full = load_case(CASES / "hessian_norm.yaml")
    assert full.params("full")["dimensions"] == [2, 10, 50]
    assert max(full.params("full")["probes"]) >= 256


def test_matrix_reference_agrees_with_mpmath_diff(monkeypatch):
    monkeypatch.setattr(mpmath.mp, "dps", 40)  # restored after the test
    X, Y = matrix_partials.matrices(11, 2, 0)
    blocks = matrix_partials.exact_blocks(X, Y)

    def loss(dx, dy, a, b, k, m, yk=None):
        x = mpmath.matrix(X.tolist())
        y = mpmath.matrix(Y.tolist())
        x[a, b] += dx
        y[k, m] += dy
        z = x * x * y
        return mpmath.sqrt(mpmath.fsum(z[i, j] ** 2 for i in range(2) for j in range(2)))

    for k, m, a, b in [(0, 1, 1, 0), (1, 1, 0, 0), (0, 0, 0, 1)]:
        mixed = mpmath.diff(lambda u, v, w=(a, b, k, m): loss(u, v, *w), (0, 0), (1, 1))
        assert mpmath.almosteq(mixed, blocks["XY"][k, m, a, b], rel_eps=mpmath.mpf(10) ** -25)

    def loss_yy(u, v):
        y = mpmath.matrix(Y.tolist())
        y[0, 1] += u
        y[1, 1] += v
        z = mpmath.matrix(X.tolist()) ** 2 * y
        return mpmath.sqrt(mpmath.fsum(z[i, j] ** 2 for i in range(2) for j in range(2)))

    yy = mpmath.diff(loss_yy, (0, 0), (1, 1))
    assert mpmath.almosteq(yy, blocks["YY"][0, 1, 1, 1], rel_eps=mpmath.mpf(10) ** -25)


@pytest.mark.slow
def test_every_way_matches_the_reference(runs):
    _, out = runs
    errors = out["mixed"]
    f64 = errors[errors.dtype == "float64"]
    assert set(f64.outcome) <= {"ok", "inaccurate"}
    assert (f64.outcome == "ok").mean() > 0.97
    for impl in ("jacobian", "hvp"):
        assert len(_values(errors, impl, "XY", 3)) == 81  # n^4 entries
    assert len(_values(errors, "trace_trick", "trace_trick_X", 3)) == 9  # n^2 entries
    assert not set(errors[errors.implementation == "trace_trick"].partial) & {"XY", "YY"}


@pytest.mark.slow
def test_what_the_trace_trick_computes(runs):
    """The trick's d/dX Tr(dloss/dY) is sum_k XY[k,k,:,:], the mixed block contracted
    with the identity, equal to the HVP of the block along dY = I; not the block."""
    _, out = runs
    errors = out["mixed"]
    for n in (2, 3):
        block = _values(errors, "jacobian", "XY", n).reshape(n, n, n, n)
        trick = _values(errors, "trace_trick", "trace_trick_X", n).reshape(n, n)
        along_identity = _values(errors, "hvp", "trace_trick_X", n).reshape(n, n)
        np.testing.assert_allclose(trick, np.einsum("kkab->ab", block), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(trick, along_identity, rtol=1e-12, atol=1e-14)
        # No single slice of the block is what the trick returned.
        slices = block.reshape(n * n, n, n)
        assert all(not np.allclose(s, trick) for s in slices)
        yy = _values(errors, "jacobian", "YY", n).reshape(n, n, n, n)
        trick_y = _values(errors, "trace_trick", "trace_trick_Y", n).reshape(n, n)
        np.testing.assert_allclose(trick_y, np.einsum("kkmp->mp", yy), rtol=1e-12, atol=1e-14)


def _fd(errors, dtype, quantity="frobenius_norm"):
    rows = errors[
        (errors.method == "finite_difference")
        & (errors.dtype == dtype)
        & (errors.partial == quantity)
    ]
    if quantity == "frobenius_norm":
        rows = rows[rows.probes == rows.probes.max()]
    return rows


@pytest.mark.slow
def test_autodiff_hessian_norms_are_ok_and_finite_differences_are_v_shaped(runs):
    _, out = runs
    errors = out["hnorm"]
    auto = errors[errors.method.isin(["forward_over_reverse", "reverse"])]
    assert set(auto.h) == {0.0}
    assert (auto.outcome == "ok").all(), auto[auto.outcome != "ok"]
    for dtype, eps in (("float32", 2.0**-23), ("float64", 2.0**-52)):
        for (fn, n), g in _fd(errors, dtype).groupby(["implementation", "n"]):
            g = g.sort_values("h")
            err = g.rel_error.to_numpy(float)
            best = int(np.argmin(err))
            # The V: the optimum is inside the sweep, within a factor 100 of eps^(1/3)
            # (Rosenbrock's large Hessian entries pull it down), and both ends are worse
            # by orders of magnitude.
            assert 0 < best < len(err) - 1, (fn, n, dtype, err)
            h_best = g.h.iloc[best]
            assert eps ** (1 / 3) / 100 <= h_best <= eps ** (1 / 3) * 10, (fn, n, dtype, h_best)
            assert err[0] > 100 * err[best] and err[-1] > 100 * err[best]
            # Even at its best the difference is far from float64's last bits; in
            # float32 its best is a few ulps (eps^(2/3) is only ~200 ulps).
            assert err[best] > (1e3 if dtype == "float64" else 1) * eps
    # float32: at h = 1e-12, x + h delta rounds to x, the gradients cancel exactly.
    tiny = _fd(errors, "float32")
    assert set(tiny[tiny.h == tiny.h.min()].outcome) == {"zero"}
    spectral = _fd(errors, "float32", "spectral_norm")
    assert set(spectral[spectral.h == spectral.h.min()].outcome) == {"nan"}  # 0 / ||0||


@pytest.mark.slow
def test_hessian_reference_against_mpmath_diff_and_facts(runs, monkeypatch):
    monkeypatch.setattr(mpmath.mp, "dps", 40)  # restored after the test
    for fn in ("rosenbrock", "log_sum_exp", "tanh_network"):
        p = hessian_norm.Problem(fn, 3, seed=5, max_probes=4)
        h = hessian_norm.exact_hessian(p)

        def f(*x, p=p, fn=fn):
            x = [mpmath.mpf(float(a)) + d for a, d in zip(p.x, x)]
            if fn == "rosenbrock":
                return mpmath.fsum(
                    100 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2 for i in range(2)
                )
            if fn == "log_sum_exp":
                return mpmath.log(mpmath.fsum(mpmath.exp(v) for v in x))
            return mpmath.fsum(
                float(p.w2[k])
                * mpmath.tanh(
                    mpmath.fsum(float(p.w1[k][j]) * x[j] for j in range(3)) + float(p.b1[k])
                )
                for k in range(hessian_norm.HIDDEN)
            )

        for i, j in ((0, 0), (0, 1), (1, 2)):
            order = [0, 0, 0]
            order[i] += 1
            order[j] += 1
            d = mpmath.diff(f, (0, 0, 0), tuple(order))
            assert mpmath.almosteq(d, h[i][j], rel_eps=mpmath.mpf(10) ** -20, abs_eps=1e-30)
    _, out = runs
    where = runs[0]
    meta = read_metadata(where / "results" / "hnorm" / "reference.parquet")
    norms = meta["facts"]["norms"]
    assert set(norms) == {f"{f}/{n}" for f in ("log_sum_exp", "rosenbrock") for n in (2, 10)}
    assert all(v["spectral"] <= v["frobenius"] * (1 + 1e-12) for v in norms.values())


@pytest.mark.slow
def test_hessian_evaluation_is_reproducible_bit_for_bit(tmp_path):
    path = tmp_path / "hnorm.yaml"
    path.write_text(HESSIAN_CASE.replace("[2, 10]", "[3]"))
    case = load_case(path)
    params = case.params("full")
    tf = load("tensorflow").framework  # the module as the back end sets it up
    first, _ = evaluate_experiment(case, params, ["float32"], ["eager"], "tensorflow", tf)
    second, _ = evaluate_experiment(case, params, ["float32"], ["eager"], "tensorflow", tf)
    assert first.value.to_numpy().tobytes() == second.value.to_numpy().tobytes()


@pytest.mark.slow
def test_experiment_pages_render_in_chromium(runs, tmp_path):
    from playwright.sync_api import sync_playwright

    from .test_report import figure_sizes, watched_page

    where, _ = runs
    pages = [
        render_case(c, where / "results", where / "reports", where / "cases")
        for c in ("mixed", "hnorm")
    ]
    text = pages[0].read_text()
    assert "sum<sub>k</sub> XY[k,k,a,b]" in text and "n = 2, sample 0, float64" in text
    assert "Best step per function" in pages[1].read_text()
    with sync_playwright() as p:
        browser, page, problems, requests = watched_page(p)
        page.goto(pages[1].as_uri(), wait_until="load")
        sizes = figure_sizes(page)
        assert len(sizes) == 2  # error vs h, error vs M
        assert all(w > 300 and h > 150 and n > 50 for w, h, n in sizes), sizes
        page.goto(pages[0].as_uri(), wait_until="load")
        assert page.locator("table").count() >= 2
        sizes = figure_sizes(page)
        assert len(sizes) == 1 and sizes[0][0] > 300 and sizes[0][2] > 50, sizes
        browser.close()
    assert problems == []
    assert all(u.startswith(("file://", "data:")) for u in requests), requests
    shutil.rmtree(where / "reports")
    assert not Path(where / "reports").exists()
