"""The kernel census: its points (exact float boundaries of every dtype, each special point
with its neighbours), its case files generated from the operator table (one per kernel,
valid for the study's own loader, rewritten only when their text changes), and its atlas
and page from a real run (shares against the errors table counted here, the page in
Chromium)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from harness.cases import expressions as ex
from harness.cases.load import load_case
from harness.causes.audit import audit
from harness.census.cases import CONSTANT_EXPONENTS, census_cases, write_cases
from harness.census.points import argument_values, boundary_sweep, neighbours, sweep
from harness.operators import OPERATORS, Kernel
from harness.operators.model import Sampling
from harness.results import read_table, write_table

#: Each dtype's smallest subnormal and largest finite, from its bit layout.
EXTREMES = {
    "float16": (math.ldexp(1, -24), math.ldexp(2 - math.ldexp(1, -10), 15)),
    "bfloat16": (math.ldexp(1, -133), math.ldexp(2 - math.ldexp(1, -7), 127)),
    "float32": (math.ldexp(1, -149), math.ldexp(2 - math.ldexp(1, -23), 127)),
    "float64": (math.ldexp(1, -1074), math.ldexp(2 - math.ldexp(1, -52), 1023)),
}


@pytest.mark.parametrize("dtype", sorted(EXTREMES))
def test_the_sweep_spans_the_whole_dtype_in_both_signs(dtype):
    values = sweep(dtype, 20)
    tiny, huge = EXTREMES[dtype]
    positive = np.sort(values[values > 0])
    assert positive[0] == tiny and positive[-1] == huge
    assert sorted(-values[values < 0]) == list(positive)
    assert len(positive) == 20 and len(set(positive)) == 20
    if dtype in ("float16", "float32"):  # NumPy holds these: each value is one of them
        kind = np.float16 if dtype == "float16" else np.float32
        assert (positive.astype(kind).astype(np.float64) == positive).all()
    # log-spaced: the binade steps differ by at most one
    steps = np.diff(np.floor(np.log2(positive)))
    assert steps.max() - steps.min() <= 1


def test_a_special_point_comes_with_its_neighbouring_floats():
    assert list(neighbours(1.0, "float32")) == [1 - 2.0**-24, 1.0, 1 + 2.0**-23]
    near_zero = neighbours(0.0, "float64")
    assert list(near_zero[:3]) == [-(2.0**-1074), 0.0, 2.0**-1074]
    assert math.copysign(1, near_zero[3]) == -1 and near_zero[3] == 0
    # the float nearest π/2 in float16 and its neighbours, 2^-10 apart at that binade
    pole = neighbours(math.pi / 2, "float16")
    assert list(np.diff(pole)) == [2.0**-10, 2.0**-10] and pole[1] == 1.5703125


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_each_frameworks_formula_switches_are_sampled_with_their_neighbours(dtype):
    """TensorFlow's Softplus kernel switches at -(log eps + 2) (computed here by numpy in
    the dtype itself), PyTorch's softplus at 20, XLA's fast tanh at its clamp
    7.90531110763549805 and at 0.0004 in float32: each is a census value with the floats
    beside it."""
    ftype = np.dtype(dtype).type
    eps = np.finfo(ftype).eps
    switch = -(np.log(eps) + ftype(2))
    for name, points in (
        ("softplus", [switch, -switch, ftype(20)]),
        ("log_sigmoid", [switch, ftype(20)]),
        # XLA's float32 constants (its float64 tanh has no such clamp).
        ("tanh", [7.90531110763549805, -0.0004] if dtype == "float32" else []),
    ):
        values = argument_values(OPERATORS[name].sampling[0], [dtype], 8)
        for point in points:
            point = ftype(point)
            for v in (np.nextafter(point, -np.inf), point, np.nextafter(point, np.inf)):
                assert float(v) in values, (name, dtype, float(v))


def test_a_finite_boundary_is_approached_from_one_ulp():
    near = boundary_sweep(1.0, "float32", 5)
    below = np.sort(near[near < 1])
    assert below[-1] == 1 - 2.0**-23 and below[0] == 0.0  # 1 - 2^-23 ... 1 - 1
    assert (near[near > 1] >= 1 + 2.0**-23).all()


def test_an_argument_stays_in_its_closed_domain_and_keeps_its_special_points():
    s = Sampling(-1.0, 1.0, (-1.0, 0.0, 1.0))
    values = argument_values(s, ["float32", "float64"], 12)
    assert values.min() == -1.0 and values.max() == 1.0
    for v in (-1.0, 1.0, 1 - 2.0**-24, 1 - 2.0**-53, -(2.0**-149), 2.0**-1074):
        assert v in values
    bits = values.view(np.int64)
    assert len(set(bits)) == len(bits)
    assert np.signbit(values[values == 0]).tolist() == [False, True]  # 0.0 and -0.0


def _expected_cases() -> set[str]:
    names = set()
    for name, op in OPERATORS.items():
        if not any(isinstance(k, Kernel) for k in op.kernels.values()):
            continue
        if op.arity[0] == 1:
            names.add(f"census_{name}")
        elif op.arity[0] == 2:
            names |= {f"census_{name}_grid", f"census_{name}_diagonal"}
    stems = [c.replace("-", "minus_").replace(".", "_") for c in CONSTANT_EXPONENTS]
    return names | {f"census_pow_{s}" for s in stems}


def test_one_case_per_kernel_each_valid_for_the_study_s_loader(tmp_path):
    paths = write_cases(tmp_path, ["float32", "float64"], 8)
    assert {p.stem for p in paths} == _expected_cases()
    for path in paths:
        case = load_case(path)  # the study's own validation, nothing skipped
        (impl,) = case.implementations
        node = impl.expression  # parsed by the loader
        operator = path.stem.removeprefix("census_").removesuffix("_grid")
        operator = operator.removesuffix("_diagonal")
        if isinstance(node, ex.Call):
            assert node.func == operator
        else:  # a constant exponent: x ** c
            assert isinstance(node, ex.Binary) and node.op == "pow"
        orders = {len(p) for p in case.partials}
        assert orders == {0, 1, 2, 3, 4}
        if len(case.input_names) == 2:  # every partial of (x, y) to order 4: 14 and f
            assert len(case.partials) == 15


def test_case_files_are_rewritten_only_when_their_text_changes(tmp_path):
    paths = write_cases(tmp_path, ["float64"], 8)
    before = {p: p.stat().st_mtime_ns for p in paths}
    stale = tmp_path / "census_gone.yaml"
    stale.write_text("title: an operator no longer in the table\n")
    write_cases(tmp_path, ["float64"], 8)
    assert {p: p.stat().st_mtime_ns for p in paths} == before
    assert not stale.exists()
    changed = write_cases(tmp_path, ["float64"], 40)  # every case's points change
    assert all(p.read_text() != "" for p in changed)
    assert sum(p.stat().st_mtime_ns != before[p] for p in changed) == len(changed)


def test_census_cases_hold_each_dtype_s_own_extremes():
    (exp,) = [c for c in census_cases(["float16", "float64"], 8) if c.name == "census_exp"]
    x = exp.inputs["x"]
    for dtype in ("float16", "float64"):
        tiny, huge = EXTREMES[dtype]
        assert {tiny, -tiny, huge, -huge} <= set(x)


@pytest.mark.slow
def test_a_census_sweep_states_intervals_and_bisects_its_edges(tmp_path):
    """A census case's inputs are samples of the whole line: PyTorch's softplus, whose
    derivatives fail over stretches of its sweep, gives findings over several samples,
    and the edges between outcomes bisected to adjacent floats of the dtype."""
    from harness.config import load_config
    from harness.stages.prepared import Selection
    from harness.stages.run import run_case

    cases = tmp_path / "cases"
    write_cases(cases, ["float32", "float64"], 24, kernels=["softplus"])
    text = (cases / "census_softplus.yaml").read_text()
    assert "samples: [" in text and "values: [" not in text
    selection = Selection(backends=["torch"], methods=["reverse"], modes=["eager"])
    results = tmp_path / "results"
    run_case(cases / "census_softplus.yaml", load_config(), selection, results=results)
    findings = read_table(results / "census_softplus" / "findings.parquet")
    spans = findings[findings["points"] > 1]
    assert len(spans) >= 1 and (spans["lo"] < spans["hi"]).all()
    edges = pd.concat(
        read_table(p) for p in (results / "census_softplus" / "torch").glob("*/edges.parquet")
    )
    exact = edges[edges["exact"]]
    assert len(exact) >= 1
    for e in exact.itertuples():
        kind = np.float32 if e.dtype == "float32" else np.float64
        inside, outside = kind(e.inside), kind(e.outside)
        assert np.nextafter(inside, outside) == outside, e  # adjacent floats


def test_an_edge_whose_truth_lies_beyond_float64_is_bisected(tmp_path):
    """exp's finite differences turn NaN where exp(x - h) overflows: the bisection between
    those samples is guided by truths past float64's largest (exp(710) ~ 2.2e308), which
    once raised OverflowError and lost the case's whole evaluation."""
    import mpmath

    from harness.config import load_config
    from harness.stages.prepared import Selection
    from harness.stages.run import run_case

    cases = tmp_path / "cases"
    write_cases(cases, ["float64"], 24, kernels=["exp"])
    selection = Selection(backends=["torch"], methods=["finite_difference"], modes=["eager"])
    results = tmp_path / "results"
    run_case(cases / "census_exp.yaml", load_config(), selection, results=results)
    edges = pd.concat(
        read_table(p) for p in (results / "census_exp" / "torch").glob("*/edges.parquet")
    )
    largest = EXTREMES["float64"][1]
    far = edges[edges["exact"] & (edges["outcome"] == "nan") & (edges["inside"] > 700)]
    assert len(far) >= 1
    for e in far.itertuples():
        assert np.nextafter(np.float64(e.inside), np.float64(e.outside)) == e.outside
        # Every derivative of exp is exp: the truth at the edge's outside end, verified
        # (its digits) or from the search's guide ("~" and six digits).
        text = str(e.reference_outside)
        close = mpmath.mpf(10) ** (-5 if text.startswith("~") else -20)
        with mpmath.workdps(40):
            truth = mpmath.exp(mpmath.mpf(float(e.outside)))
            assert abs(mpmath.mpf(text.lstrip("~")) / truth - 1) < close
    # The first derivative's edge lies where exp itself is past float64's largest.
    first = far[far["partial"] == "x"].iloc[0]
    assert first["inside"] > math.log(largest)
    assert mpmath.mpf(str(first["reference_outside"]).lstrip("~")) > largest


@pytest.mark.slow
def test_a_census_run_gives_its_atlas_and_a_page_that_works_in_chromium(tmp_path):
    """Three census cases run for real (JAX and PyTorch, float64): the atlas's shares are
    the errors table's counts, what JAX's ``jet`` refuses (``atan``: no rule) is counted
    apart and not judged, and the page filters and sorts in Chromium."""
    from jax import lax
    from jax.experimental import jet
    from playwright.sync_api import sync_playwright

    from harness.config import load_config
    from harness.stages.census import write_atlas
    from harness.stages.prepared import Selection
    from harness.stages.run import run_case

    from .test_report import watched_page

    cases = tmp_path / "cases"
    write_cases(cases, ["float64"], 4)
    for stale in set(cases.glob("*.yaml")) - {
        cases / "census_square.yaml",
        cases / "census_atanh.yaml",
        cases / "census_atan.yaml",
    }:
        stale.unlink()
    config = load_config(overrides={"setting": "quick"})
    selection = Selection(backends=["jax", "torch"], methods=["reverse", "forward", "taylor"])
    for path in sorted(cases.glob("*.yaml")):
        run_case(path, config, selection, results=tmp_path / "results")
    roots = _collect_and_reproduce(tmp_path / "results", cases, ["jax", "torch"])
    assert len(roots) > 0
    # Every statement holds against its findings' evidence (harness.causes.audit).
    assert audit(roots, read_table(tmp_path / "results" / "findings.parquet")) == []
    # A study whose root causes share one id with the census's.
    study = tmp_path / "study"
    shared = roots.iloc[-1]["id"]
    write_table(
        pd.DataFrame({"id": [shared, "kernel:nothing:wrong"], "cases": ["softplus", "ratio"]}),
        study / "root_causes.parquet",
        {},
    )
    atlas = write_atlas(tmp_path / "results", cases, tmp_path / "reports", study)
    assert set(atlas["case"]) == {"census_square", "census_atanh", "census_atan"}
    causes = pd.read_parquet(tmp_path / "results" / "causes.parquet")
    assert sorted(causes["id"]) == sorted(roots["id"])
    assert dict(zip(causes["id"], causes["in_study"])) == {
        i: ("softplus" if i == shared else "") for i in roots["id"]
    }
    severities = list(causes["severity"])
    assert severities == sorted(severities, reverse=True)
    printed = {}
    for b in ("jax", "torch"):
        table = pd.read_parquet(tmp_path / "results" / "reproducers" / f"{b}.parquet")
        for r in table.itertuples():
            printed[r.root_cause] = printed.get(r.root_cause, 0) + int(r.reproduces)
    assert dict(zip(causes["id"], causes["reproduced"])) == {
        i: printed.get(i, 0) for i in roots["id"]
    }
    # JAX 0.10.2's jet has no rule for atan (and one for atanh's and square's primitives):
    # its derivatives by jet are refusals, each counted once and none judged.
    assert lax.atan_p not in jet.jet_rules and lax.atanh_p in jet.jet_rules
    key = ["backend", "method", "mode", "partial"]
    clean = {}  # (kernel, backend, dtype) -> every judged value right, from the errors
    for case in ("census_square", "census_atanh", "census_atan"):
        errors = pd.read_parquet(tmp_path / "results" / case / "errors.parquet")
        refused = (
            (case == "census_atan")
            & (errors.backend == "jax")
            & (errors.method == "taylor")
            & (errors.partial != "")
        )
        assert (errors[refused].outcome == "error").all()
        rows = atlas[atlas.case == case].set_index(key)
        expected = errors[refused].groupby(key).size()
        assert rows["unsupported"][rows["unsupported"] > 0].to_dict() == expected.to_dict()
        assert len(expected) == (8 if case == "census_atan" else 0)  # 4 orders, 2 modes
        errors = errors[~refused]
        judged = errors[~errors.outcome.isin(["not_applicable", "ref_unreliable", "flushed"])]
        counted = judged.groupby(["backend", "method", "mode", "partial"]).outcome.agg(
            lambda o: (o == "ok").mean()
        )
        for k, share in counted.items():
            assert rows.loc[k, "share_right"] == pytest.approx(share, abs=0), k
        for (backend, dtype), outcomes in judged.groupby(["backend", "dtype"]).outcome:
            clean[(case.removeprefix("census_"), backend, dtype)] = bool((outcomes == "ok").all())
        assert (rows.loc[rows["unsupported"] > 0, "judged"] == 0).all()
    assert (tmp_path / "results" / "atlas.csv").exists()
    # The clean bills (no finite differences run: by autodiff is by every method).
    bills = pd.read_parquet(tmp_path / "results" / "clean_bills.parquet")
    keys = zip(bills.operator, bills.backend, bills.dtype)
    assert dict(zip(keys, bills.clean_autodiff)) == clean
    assert (bills.clean == bills.clean_autodiff).all()
    assert not all(clean.values())  # atan's NaN derivatives in both frameworks, for one
    every_dtype = {}  # framework -> its kernels clean in every dtype judged
    for (kernel, backend, _), right in sorted(clean.items()):
        every_dtype.setdefault(backend, {}).setdefault(kernel, True)
        every_dtype[backend][kernel] &= right
    every_dtype = {
        b: ", ".join(k for k, right in ks.items() if right) or "none"
        for b, ks in every_dtype.items()
    }
    page_path = tmp_path / "reports" / "census.html"
    with sync_playwright() as p:
        browser, page, problems, requests = watched_page(p)
        page.goto(page_path.as_uri(), wait_until="load")
        shown = "els => els.filter(e => !e.hidden).length"
        assert page.eval_on_selector_all("table.matrix", shown) == 1
        page.select_option("#c-order", "2")
        visible = page.locator("table.matrix:not([hidden]) tbody tr")
        assert visible.count() == 3  # square, atanh and atan ∂xx
        page.fill("#c-name", "atanh")
        rows = "els => els.filter(e => !e.hidden).map(e => e.dataset.kernel)"
        assert page.eval_on_selector_all("table.matrix:not([hidden]) tbody tr", rows) == [
            "atanh ∂xx"
        ]
        # Every root cause has a row, the name filter reaches them too.
        every = "table.causes:not(.top) tbody tr"
        assert page.locator(every).count() == len(roots)
        kernels = page.eval_on_selector_all(every, rows)
        assert all("atanh" in k for k in kernels)
        assert len(kernels) == sum("atanh" in str(p) for p in roots["primitive"])
        # The summary names each framework's clean kernels.
        cells = page.eval_on_selector_all(
            "#clean-bills + p + table tbody tr",
            "rows => rows.map(r => [r.cells[0].textContent, r.cells[2].textContent])",
        )
        assert dict(cells) == {"JAX": every_dtype["jax"], "PyTorch": every_dtype["torch"]}
        # A cell's tooltip: where every method and mode is right, as exact floats. JAX's
        # second derivative of x*x is 2 at every input swept, -max to max.
        page.select_option("#c-order", "2")
        page.fill("#c-name", "square")
        cell = "table.matrix:not([hidden]) tbody tr:not([hidden]) td:nth-child(2)"
        assert page.locator(cell).count() == 1
        title = page.get_attribute(cell, "title")
        largest = repr(float(np.finfo(np.float64).max))
        assert title.splitlines()[0] == (
            f"right in every method and mode on x: [-{largest}, {largest}]"
        )
        browser.close()
    assert problems == [] and all(u.startswith(("file://", "data:")) for u in requests)


def test_a_census_of_chosen_kernels_writes_their_layouts_alone(tmp_path):
    """A maintainer censuses the kernels they work on: the chosen operators' case files,
    every layout of each (pow's grid, diagonal and constant exponents), and no other;
    files of kernels not chosen are removed, so the folder (which the atlas reads) is
    the census that runs."""
    write_cases(tmp_path, ["float32"], 8)
    paths = write_cases(tmp_path, ["float32"], 8, ["pow", "exp"])
    expected = {n for n in _expected_cases() if n == "census_exp" or n.startswith("census_pow_")}
    assert len(expected) == 1 + 2 + len(CONSTANT_EXPONENTS)
    assert {p.stem for p in paths} == expected
    assert {p.stem for p in tmp_path.glob("*.yaml")} == expected


def test_the_census_commands_refuse_bad_input_in_one_line(tmp_path, capsys):
    from harness.cli import main
    from harness.cli.output import EXIT_INVALID

    assert main(["census-cases", "--out", str(tmp_path), "--dtypes", "float128"]) == EXIT_INVALID
    assert "unknown dtype 'float128'" in capsys.readouterr().err
    assert main(["census-cases", "--out", str(tmp_path), "--per-sign", "2"]) == EXIT_INVALID
    assert "--per-sign must be at least 4" in capsys.readouterr().err
    assert main(["census-cases", "--out", str(tmp_path), "--kernels", "exp,softpls"]) == (
        EXIT_INVALID
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--kernels: unknown kernel 'softpls'" in err
    assert "softplus" in err  # the names it checks
    assert not list(tmp_path.glob("*.yaml"))  # nothing half-written
    assert main(["census-cases", "--out", str(tmp_path), "--kernels", "sinc"]) == 0
    assert [p.stem for p in tmp_path.glob("*.yaml")] == ["census_sinc"]
    missing = tmp_path / "no_such_folder"
    assert main(["census", "--cases", str(missing), "--results", str(tmp_path)]) == EXIT_INVALID
    assert "no census case files (run harness census-cases)" in capsys.readouterr().err
    assert main(["census-cases", "--out", str(tmp_path), "--dtypes", "float64"]) == 0
    assert len(list(tmp_path.glob("census_*.yaml"))) == len(_expected_cases())


def _collect_and_reproduce(results, cases, backends) -> pd.DataFrame:
    """The study's collect and reproduce stages on census results, as the census rules
    run them: the root causes table (returned) and each back end's reproducers."""
    from harness.causes.reproduce import reproducers
    from harness.config import load_config
    from harness.results import read_metadata
    from harness.stages.collect import collect_stage

    collect_stage(sorted(results.glob("*/errors.parquet")), results / "summary.parquet")
    findings, meta = (
        read_table(results / "findings.parquet"),
        read_metadata(results / "summary.parquet"),
    )
    roots = read_table(results / "root_causes.parquet")
    for b in backends:
        table = reproducers(roots, findings, b, cases, load_config().tolerances)
        write_table(table, results / "reproducers" / f"{b}.parquet", meta)
    return roots
