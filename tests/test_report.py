"""Collected summary and HTML reports: stable domains, provenance refusal, and the pages
opened in real headless Chromium (Debian's, driven by Playwright's Python client)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from harness.causes.audit import audit
from harness.causes.reproduce import reproducers
from harness.causes.study import study_root_causes
from harness.config import load_config
from harness.judge.case_tables import case_findings, stable_domain
from harness.results import ResultsError, read_metadata, read_table, write_table
from harness.stages.collect import ProvenanceMismatch, collect, collect_stage
from harness.stages.prepared import Selection
from harness.stages.report import render_reports
from harness.stages.run import run_case

from .conftest import CASES

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def test_stable_domain_runs_and_unjudged_points():
    g = pd.DataFrame(
        {
            "x": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0],
            "outcome": ["ok", "ok", "nan", "ok", "ref_unreliable", "ok", "inf"],
        }
    )
    # An unreliable reference ends a run: the point was not judged, so not known ok.
    assert stable_domain(g, ["x"]) == {"x": [[1.0, 2.0], [4.0, 4.0], [6.0, 6.0]]}
    # A flushed point (the platform's effect) neither ends nor extends a run.
    g.loc[4, "outcome"] = "flushed"
    assert stable_domain(g, ["x"]) == {"x": [[1.0, 2.0], [4.0, 6.0]]}
    # Nothing was evaluated between the two halves of a sweep of both signs.
    halves = pd.DataFrame({"x": [-1e3, -1e-3, 1e-3, 1e3], "outcome": ["ok"] * 4})
    pieces = {"x": [[-1e3, -1e-3], [1e-3, 1e3]]}
    assert stable_domain(halves, ["x"], pieces) == {"x": [[-1e3, -1e-3], [1e-3, 1e3]]}
    assert stable_domain(halves, ["x"]) == {"x": [[-1e3, 1e3]]}
    # A grid: a value of x is stable only if every point with that x is ok.
    grid = pd.DataFrame(
        {
            "x": [1, 1, 2, 2, 3, 3],
            "y": [1, 2, 1, 2, 1, 2],
            "outcome": ["ok", "ok", "ok", "zero", "ok", "ok"],
        }
    )
    assert stable_domain(grid, ["x", "y"]) == {"x": [[1, 1], [3, 3]], "y": [[1, 1]]}
    # Repeated values, both zeros, a NaN input: each distinct value once, ascending, and
    # stable only where all its rows are ok, as pandas' groupby says (-0.0 and 0.0 are one
    # value, with the sign of its first row; a NaN is no value).
    rng = np.random.default_rng(7)
    x = rng.choice([-2.0, -0.0, 0.0, 1.5, 3.0, np.nan], size=200)
    outcome = np.where((x == 1.5) & (rng.random(200) < 0.3), "zero", "ok")
    mixed = pd.DataFrame({"x": x, "outcome": outcome})
    per_value = (mixed["outcome"] != "ok").groupby(x, sort=True).any()
    runs, run = [], []
    for v, b in zip(per_value.index, per_value):
        if b and run:
            runs.append([run[0], run[-1]])
            run = []
        if not b:
            run.append(float(v))
    runs += [[run[0], run[-1]]] if run else []
    shown = stable_domain(mixed, ["x"])["x"]
    assert shown == runs and len(per_value) == 4 and len(runs) == 2
    first = x[np.flatnonzero(x == 0)[0]]
    zero = [v for r in shown for v in r if v == 0]
    assert all(np.signbit(z) == np.signbit(first) for z in zero)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    where = tmp_path_factory.mktemp("report")
    sel = Selection(
        backends=["tensorflow"],
        dtypes=["float32", "float64"],
        methods=["reverse", "finite_difference"],
        modes=["eager", "function"],
        max_points=12,
    )
    for case in ("ratio", "softplus", "nested_softplus"):
        run_case(CASES / f"{case}.yaml", selection=sel, results=where / "results")
    results = where / "results"
    collect_stage(sorted(results.glob("*/errors.parquet")), results / "summary.parquet")
    summary, findings = (
        read_table(results / "summary.parquet"),
        read_table(results / "findings.parquet"),
    )
    meta = read_metadata(results / "summary.parquet")
    roots = read_table(where / "results" / "root_causes.parquet")
    found = reproducers(roots, findings, "tensorflow", CASES, load_config().tolerances)
    write_table(found, where / "results" / "reproducers" / "tensorflow.parquet", meta)
    cases = where / "cases"
    cases.mkdir()
    for case in ("ratio", "softplus", "nested_softplus"):
        shutil.copy(CASES / f"{case}.yaml", cases)
    (cases / "broken.yaml").write_text("title: [unclosed\n")
    pages = render_reports(where / "results", where / "reports", cases)
    return where, summary, pages


@pytest.mark.slow
def test_every_root_cause_statement_holds_against_its_evidence(study):
    where, _, _ = study
    results = where / "results"
    roots = read_table(results / "root_causes.parquet")
    assert len(roots) > 0
    assert audit(roots, read_table(results / "findings.parquet")) == []


# The module fixture runs three cases in TensorFlow (about a minute): the slow set.
@pytest.mark.slow
def test_summary_rows_and_the_ratio_stable_domain(study):
    _, summary, _ = study
    keys = ["case", "implementation", "method", "mode", "dtype", "partial"]
    assert not summary.duplicated(keys).any()
    row = summary[
        (summary.case == "ratio")
        & (summary.implementation == "explicit_square")
        & (summary.method == "reverse")
        & (summary["mode"] == "eager")
        & (summary.dtype == "float32")
        & (summary.partial == "b")
    ].iloc[0]
    ((lo, hi),) = __import__("json").loads(row.stable_domain_json)["a"]
    # 12 points over 83 decades: the run ends on samples inside [1e-19, 2e19].
    assert 1e-19 <= lo < 1e-10 and 1e10 < hi <= 2e19
    assert (
        row["inf"] > 0 and row["zero"] > 0 and row["unexpected_failures"] < row["inf"] + row["zero"]
    )


@pytest.mark.slow
def test_collect_refuses_tables_from_different_software(study, tmp_path):
    where, _, _ = study
    src = where / "results" / "ratio" / "errors.parquet"
    from harness.results import read_metadata

    meta = read_metadata(src)
    other = tmp_path / "other" / "errors.parquet"
    write_table(read_table(src), other, {**meta, "packages": {**meta["packages"], "numpy": "0.0"}})
    with pytest.raises(ProvenanceMismatch, match="packages"):
        collect([src, other])


@pytest.mark.slow
def test_collect_writes_a_case_at_a_time_what_the_whole_table_would_be(study, tmp_path):
    """The collect stage writes the study's findings a case at a time, and makes the root
    causes from them without the columns they never read: the file, its CSV and the root
    causes are those of every case's findings concatenated, a case without findings
    (its columns of no type) first among them."""
    where, _, _ = study
    results = tmp_path / "results"
    for case in ("ratio", "softplus", "nested_softplus"):
        shutil.copytree(where / "results" / case, results / case)
    square = tmp_path / "aaa_square.yaml"
    square.write_text(
        "title: a square, right everywhere\nsource: test\n"
        "inputs:\n  x: {log: {from: 1, to: 100, count: 6}}\nfunction: x * x\n"
        "derivatives: {wrt: x, orders: [1, 2]}\n"
        "implementations:\n  product: {expression: x * x}\n"
    )
    sel = Selection(
        backends=["tensorflow"], dtypes=["float64"], methods=["reverse"], modes=["eager"]
    )
    run_case(square, selection=sel, results=results)
    files = sorted(results.glob("*/errors.parquet"))
    assert files[0].parent.name == "aaa_square" and case_findings(files[0]).empty
    said = collect_stage(files, results / "summary.parquet")
    whole = pd.concat([case_findings(p) for p in files], ignore_index=True)
    assert len(whole) >= 3 and f"{len(whole)} findings" in said
    # What one table, written at once, reads back as.
    write_table(whole, tmp_path / "whole.parquet", read_metadata(results / "summary.parquet"))
    pd.testing.assert_frame_equal(
        read_table(results / "findings.parquet"), read_table(tmp_path / "whole.parquet")
    )
    csv = (results / "findings.csv").read_text(encoding="utf-8")
    assert csv == whole.drop(columns=["snippet"]).to_csv(index=False)
    # The root causes of every column (the snippets and texts included).
    _, roots, unsupported = study_root_causes(whole)
    assert len(roots) >= 1
    pd.testing.assert_frame_equal(read_table(results / "root_causes.parquet"), roots)
    pd.testing.assert_frame_equal(
        read_table(results / "unsupported.parquet"), unsupported, check_dtype=False
    )
    # A case whose findings have no root causes (an older compare stage's), or a stale
    # one, is refused before anything is written.
    out = tmp_path / "again"
    found = files[1].with_name("findings.parquet")
    old = read_table(found)
    write_table(old.drop(columns=["root_cause"]), found, read_metadata(found))
    with pytest.raises(ProvenanceMismatch, match=re.escape(f"{found}: no root causes (")):
        collect_stage(files, out / "summary.parquet")
    assert not out.exists()
    write_table(old, found, read_metadata(found))
    write_table(read_table(files[-1]).iloc[1:], files[-1], read_metadata(files[-1]))
    with pytest.raises(ResultsError, match="written from another errors"):
        collect_stage(files, out / "summary.parquet")
    assert not out.exists()


@pytest.mark.slow
def test_only_the_compare_stage_judges_stale_or_missing_tables_are_refused(study, tmp_path):
    """The report and collect read the findings and summary the compare stage wrote; an
    errors table that changed after them, or a missing one, is refused (never judged
    again here), with the file and what to rerun."""
    import shutil

    from harness.judge.case_tables import case_findings, case_summary
    from harness.results import ResultsError, read_metadata

    where, _, _ = study
    case = tmp_path / "ratio"
    shutil.copytree(where / "results" / "ratio", case)
    errors = case / "errors.parquet"
    assert case_findings(errors).equals(read_table(case / "findings.parquet"))
    table = read_table(errors)
    write_table(table.iloc[1:], errors, read_metadata(errors))  # one row fewer
    with pytest.raises(ResultsError, match="summary.parquet: written from another errors"):
        collect([errors])
    for name, read in (("summary.parquet", case_summary), ("findings.parquet", case_findings)):
        with pytest.raises(ResultsError, match=f"{name}: written from another errors.parquet"):
            read(errors)
        (case / name).unlink()
        with pytest.raises(ResultsError, match=f"{name}: missing .*rerun the case's compare"):
            read(errors)


@pytest.mark.slow
def test_pages_say_the_right_things(study):
    where, _, pages = study
    index = (where / "reports" / "index.html").read_text()
    assert {p.name for p in pages} == {
        "index.html",
        "frameworks.html",
        "ratio.html",
        "softplus.html",
        "nested_softplus.html",
    }
    for needle in (
        'href="ratio.html"',
        'href="softplus.html"',
        "Root causes (",
        "Framework bugs (",
        "What the frameworks do not offer",
        "kernel:softplus:wrong",
        "Outcome matrix",
        "Findings: unexpected",
        "Findings: expected",
        "did not hold",
        "Platform: subnormal numbers",
        "Provenance",
        "broken.yaml:2: (file): YAML syntax error",
        "tensorflow",
        "ref_unreliable",
    ):
        assert needle in index, needle
    page = (where / "reports" / "ratio.html").read_text()
    for needle in (
        "Ratio -a/b",
        "seeds/000",
        "explicit_square",
        "Stable domain",
        "Worst points",
        "Derivative b (order 1)",
        "held",
    ):
        assert needle in page, needle
    # The page opens with its root causes, before its findings and the platform's notes.
    assert page.index("Root causes (") < page.index("<h2>Findings") < page.index("Platform:")
    for text in (index, page):
        assert "http://" not in text.replace("http://www.w3.org", "")
        assert "https://" not in text and "<script src" not in text
    # Every script is inline: the index's filter of its root causes, and on pages with a
    # long table the one that shows its rows (its rows are data, not code).
    for text in (index, page):
        scripts = re.findall(r"<script([^>]*)>", text)
        assert all("src" not in attrs for attrs in scripts), scripts
    assert index.count("<script>") == 1 + ('table data-rows="' in index)


def watched_page(playwright):
    """Debian's Chromium, one page, and the lists its console problems and requests
    collect into."""
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    problems, requests = [], []
    page.on("console", lambda m: m.type in ("error", "warning") and problems.append(m.text))
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    return browser, page, problems, requests


def figure_sizes(page) -> list[list[float]]:
    """Width, height and element count of every figure's SVG on a Playwright page."""
    return page.eval_on_selector_all(
        "figure.plot svg",
        "els => els.map(e => [e.getBoundingClientRect().width, "
        "e.getBoundingClientRect().height, e.querySelectorAll('*').length])",
    )


@pytest.mark.slow
def test_pages_render_in_chromium_without_errors_or_network(study, tmp_path):
    from playwright.sync_api import sync_playwright

    where, _, _ = study
    assert Path(CHROMIUM).exists(), "Debian's chromium is needed (make test installs it)"
    with sync_playwright() as p:
        browser, page, problems, requests = watched_page(p)
        for name in ("index", "ratio", "softplus"):
            url = (where / "reports" / f"{name}.html").as_uri()
            page.goto(url, wait_until="load")
            sizes = figure_sizes(page)
            if name == "index":
                assert page.locator("td.cell").count() >= 10
            else:
                assert len(sizes) >= 2 * 5  # a band and a bits plot per derivative
                assert all(w > 100 and h > 100 and n > 20 for w, h, n in sizes), sizes
                # Vector shapes, no embedded image: a run of one outcome is one shape.
                assert page.locator("figure.plot svg image").count() == 0
                assert page.locator("figure.plot svg path").count() >= 10 * len(sizes)
            page.screenshot(path=str(tmp_path / f"{name}.png"), full_page=False)
        browser.close()
    assert problems == []
    assert all(u.startswith(("file://", "data:")) for u in requests), requests
    assert np.all([(tmp_path / f"{n}.png").stat().st_size > 10000 for n in ("index", "ratio")])


#: What a page may weigh (issue 57): its bytes, and the elements a browser lays out (what
#: made the old pages slow: 85,726 for a 16 MB page that took 13 s to load).
PAGE_BYTES, PAGE_ELEMENTS = 2_000_000, 20_000


@pytest.mark.slow
def test_every_page_is_light_in_chromium(study):
    """Each page of the report under 2 MB and 20,000 elements once loaded in Chromium
    (benchmarks/pages.py times them; a test does not pass or fail on a clock)."""
    from playwright.sync_api import sync_playwright

    where, _, pages = study
    assert len(pages) == 5
    with sync_playwright() as p:
        browser, tab, problems, _ = watched_page(p)
        counts = {}
        for path in pages:
            assert path.stat().st_size <= PAGE_BYTES, (path.name, path.stat().st_size)
            tab.goto(path.as_uri(), wait_until="load")
            counts[path.name] = tab.evaluate("document.getElementsByTagName('*').length")
        browser.close()
    assert problems == []
    assert all(0 < n <= PAGE_ELEMENTS for n in counts.values()), counts


@pytest.mark.slow
def test_index_states_the_seed_facts_as_findings_in_chromium(study):
    """What a reader sees first: the seeds' facts as findings, with their exact edges, each
    linking to its place on its case's page."""
    from playwright.sync_api import sync_playwright

    where, _, _ = study
    with sync_playwright() as p:
        browser, page, problems, _ = watched_page(p)
        page.goto((where / "reports" / "index.html").as_uri(), wait_until="load")
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        lines = page.locator("ol.findings li").all_inner_texts()
        link = (
            page.locator("ol.findings li a", has_text="· d/dx · float32: nan for x ≥ 88.72284")
            .filter(has_text="naive")
            .first.get_attribute("href")
        )
        page.goto((where / "reports" / link.split("#")[0]).as_uri() + "#" + link.split("#")[1])
        anchored = page.locator(f"li#{link.split('#')[1]}").inner_text()
        browser.close()
    assert problems == []

    def line(*parts: str) -> str:
        hits = [t for t in lines if all(p in t for p in parts)]
        assert hits, parts
        return hits[0]

    # Seed 002: the naive gradient is NaN from x = 88.72284 (float32).
    line("softplus ·", "naive", "· d/dx · float32: nan for x ≥ 88.72284")
    # The documentation's custom gradient: NaN at order 2 from the same input.
    line("softplus ·", "doc_custom_gradient", "· d²/dx² · float32: nan for x ≥ 88.72284")
    # Seed 004: the nested second-order rule is wrong.
    line("nested_softplus · TensorFlow · seed004_rule · d²/dx² · float32: wrong")
    # Seeds 000/001: a/b**2 with a = b, float32: inf below 2**-63, zero from sqrt(max).
    line("ratio · TensorFlow · explicit_square · d/db · float32: inf for a ≤ 1.0842021e-19")
    line("ratio · TensorFlow · explicit_square · d/db · float32: zero for a ≥ 1.8446744e+19")
    assert "88.72284" in anchored and link.startswith("softplus.html#f")


def _bits_frame(inputs: dict[str, list[float]]) -> pd.DataFrame:
    from harness.judge.compare import ERROR_COLUMNS

    n = len(next(iter(inputs.values())))
    frame = pd.DataFrame({c: [""] * n for c in ERROR_COLUMNS})
    frame = frame.assign(
        implementation="i", method="reverse", mode="eager", dtype="float64", partial="x"
    )
    frame["bits"] = np.linspace(0, 10, n)
    for name, values in inputs.items():
        frame[name] = values
    return frame


def test_bits_figure_splits_grid_lines_but_not_tied_inputs():
    from harness.report.figures import bits_figure

    t = [1.0, 2.0, 3.0, 1.0, 2.0, 3.0]
    grid = bits_figure(_bits_frame({"t": t, "r": [0.1] * 3 + [1.0] * 3}), "t", "t")
    assert "each line the worst over r" in grid
    tied = bits_figure(_bits_frame({"a": t, "b": t}), "a", "b")
    assert "worst over" not in tied


@pytest.mark.slow
def test_results_from_another_version_of_the_case_are_marked_stale(study, tmp_path):
    from harness.report.index import render_index
    from harness.stages.report import render_case

    where, _, _ = study
    cases = tmp_path / "cases"
    cases.mkdir()
    for name in ("ratio", "softplus", "nested_softplus"):
        shutil.copy(where / "cases" / f"{name}.yaml", cases)
    edited = cases / "ratio.yaml"
    edited.write_text(edited.read_text().replace("title: Ratio", "title: Edited ratio"))
    page = render_case("ratio", where / "results", tmp_path / "reports", cases).read_text()
    assert "Stale results" in page and "cases/ratio.yaml" in page
    index = render_index(where / "results", tmp_path / "reports", cases).read_text()
    assert "Stale results</b> for ratio" in index
    fresh = render_case("softplus", where / "results", tmp_path / "reports", cases).read_text()
    assert "Stale results" not in fresh


@pytest.mark.slow
def test_root_causes_filter_in_the_page_in_chromium(study):
    """The index's filters hide the root causes that do not match, in the page itself."""
    from playwright.sync_api import sync_playwright

    where, _, _ = study
    roots = read_table(where / "results" / "root_causes.parquet")
    ratio = int(roots["cases"].str.split(", ").apply(lambda cs: "ratio" in cs).sum())
    kernels = int((roots["kind"] == "kernel").sum())
    assert 0 < ratio < len(roots) and 0 < kernels < len(roots)
    with sync_playwright() as p:
        browser, page, problems, requests = watched_page(p)
        page.goto((where / "reports" / "index.html").as_uri(), wait_until="load")
        visible = "els => els.filter(e => !e.hidden).length"
        assert page.eval_on_selector_all("li.rc", visible) == len(roots)
        page.select_option('select[data-filter="cases"]', "ratio")
        assert page.eval_on_selector_all("li.rc", visible) == ratio
        shown = page.eval_on_selector_all(
            "li.rc", "els => els.filter(e => !e.hidden).map(e => e.dataset.cases)"
        )
        assert all("ratio" in c.split() for c in shown)
        page.select_option('select[data-filter="cases"]', "")
        page.select_option('select[data-filter="kind"]', "kernel")
        assert page.eval_on_selector_all("li.rc", visible) == kernels
        counted = page.inner_text("#rc-shown")
        browser.close()
    assert counted == f"{kernels} of {len(roots)} root causes shown"
    assert problems == [] and all(u.startswith(("file://", "data:")) for u in requests)


@pytest.mark.slow
def test_provenance_shows_each_framework_by_its_registered_title(study):
    """The index's provenance tells every framework's facts under its title, whichever
    framework it is (no framework written into the page's code): TensorFlow's version as
    the installed distribution says it, its devices and its Grappler options."""
    import html
    import re

    where, _, _ = study
    index = (where / "reports" / "index.html").read_text()
    row = re.search(r"<tr><th>TensorFlow</th><td>(.*?)</td></tr>", index)
    assert row is not None
    text = html.unescape(row.group(1))
    version = next(v for v in map(_version, ("tensorflow-cpu", "tensorflow")) if v)
    assert text.startswith(f"tensorflow {version}")
    assert "; devices " in text and "; grappler_options " in text


def _version(distribution: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return ""


def test_a_figure_is_drawn_byte_for_byte_the_same_in_every_run():
    """Pages repeat byte for byte: matplotlib salts its SVG element ids with a random
    UUID unless told otherwise (two fresh processes drew different ids before), and a
    page's figures are numbered from its first (the same page drawn after another one, as
    ``harness report`` draws them all in one process, is the same page)."""
    draw = (
        "fig, ax = plt.subplots(); ax.plot([1, 2, 3], [3, 1, 2], 'o-'); "
        "ax.scatter([1, 2], [2, 1], rasterized=True); text = page('p', svg(fig)); "
    )
    code = (
        "import matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot as plt; "
        "from harness.report.html import page, svg; "
        "{before}" + draw + "print(text)"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", code.format(before=before)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for before in ("", "", draw)  # fresh, fresh, after another page
    ]
    assert 'id="' in runs[0] and runs[0] == runs[1] == runs[2]
