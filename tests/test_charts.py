"""The report's hand-written SVG charts (harness.report.svgplot) and its tables whose rows
are data (harness.report.html.table): runs of one outcome as one shape, lines that stay
within a pixel of every point, scales, and the rows shown, filtered and sorted in
Chromium."""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.judge.compare import ERROR_COLUMNS
from harness.report.figures import band_figure
from harness.report.html import COLOURS, LAZY_ROWS, page, table
from harness.report.svgplot import Scale, polyline_points, runs

from .test_report import CHROMIUM, FLAGS


def test_runs_are_the_maximal_stretches_of_one_code():
    codes = np.array([1, 1, np.nan, 2, 2, 2, 1, np.nan, np.nan, 3])
    assert runs(codes) == [(0, 2, 1.0), (3, 6, 2.0), (6, 7, 1.0), (9, 10, 3.0)]
    assert runs(np.array([])) == []


def test_a_log_scale_spaces_decades_evenly_and_symlog_is_odd():
    log = Scale(np.array([1e-3, 1e3]), 0, 600)
    assert log.kind == "log"
    assert [round(float(log(v)), 9) for v in (1e-3, 1, 1e3)] == [0, 300, 600]
    sym = Scale(np.array([-1e4, -1e-2, 1e-2, 1e4]), 0, 100)
    assert sym.kind == "symlog"
    assert math.isclose(float(sym(0.0)), 50) and math.isclose(float(sym(1e4)), 100)
    assert math.isclose(float(sym(-1e2)) - 50, -(float(sym(1e2)) - 50))
    # Zero and positive values: no logarithm holds them.
    assert Scale(np.array([0.0, 1.0, 3.0]), 0, 10).kind == "linear"


def _distance(p, a, b) -> float:
    (px, py), (ax, ay), (bx, by) = p, a, b
    dx, dy = bx - ax, by - ay
    if dx == dy == 0:
        return math.hypot(px - ax, py - ay)
    t = max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)))
    return math.hypot(px - ax - t * dx, py - ay - t * dy)


@given(st.lists(st.integers(0, 40), min_size=2, max_size=60))
def test_a_line_keeps_every_point_within_its_tolerance(heights):
    xs = np.arange(len(heights), dtype=float) * 3
    (kept,) = polyline_points(xs, np.array(heights, dtype=float), tolerance=0.75)
    assert kept[0] == (0, heights[0]) and kept[-1] == (int(xs[-1]), heights[-1])
    for x, y in zip(xs, heights):
        # The kept vertex span around x holds the point within 0.75 pixels.
        near = min(_distance((x, y), a, b) for a, b in zip(kept, kept[1:] or kept))
        assert near <= 0.75 + 1e-9, (x, y, kept)


def test_a_line_breaks_where_there_is_no_value_and_a_flat_run_is_two_vertices():
    ys = np.array([5.0, 5, 5, 5, np.nan, 7, 8])
    flat, tail = polyline_points(np.arange(7.0) * 10, ys)
    assert flat == [(0, 5), (30, 5)] and tail == [(50, 7), (60, 8)]


def _band_frame(outcomes: list[str]) -> pd.DataFrame:
    n = len(outcomes)
    frame = pd.DataFrame({c: [""] * n for c in ERROR_COLUMNS})
    return frame.assign(
        backend="tensorflow",
        implementation="i",
        method="reverse",
        mode="eager",
        dtype="float64",
        partial="x",
        x=np.logspace(-3, 3, n),
        outcome=outcomes,
        bits=0.0,
    )


def test_each_run_of_one_outcome_is_one_box():
    outcomes = ["ok"] * 7 + ["nan"] * 3 + ["ok"] * 2 + ["zero"] + ["nan"] * 5
    svg = band_figure(_band_frame(outcomes), "x", "x")
    boxes = {
        colour: len(re.findall(r"M-?\d+ -?\d+H-?\d+V-?\d+H-?\d+z", d))
        for colour, d in re.findall(
            r'<path fill="(#[0-9a-f]{6})" shape-rendering[^>]* d="([^"]*)"', svg
        )
    }
    expected: dict[str, int] = {}
    for outcome, _ in itertools.groupby(outcomes):
        expected[COLOURS[outcome]] = expected.get(COLOURS[outcome], 0) + 1
    assert boxes == expected  # ok 2, nan 2, zero 1: five shapes for 18 points
    assert "<image" not in svg


@pytest.mark.slow
def test_a_long_table_shows_filters_and_sorts_its_rows_in_chromium(tmp_path):
    """Rows past the first page load on demand; the filter and the sorting see them all."""
    from playwright.sync_api import sync_playwright

    n = 2 * LAZY_ROWS + 17
    frame = pd.DataFrame(
        {
            "name": [f"row {i}" for i in range(n)],
            "value": [float((i * 37) % 101) for i in range(n)],
            "link": [f'<a href="#r{i}">r{i}</a>' for i in range(n)],
        }
    )
    markup = table(frame, numeric=("value",), raw=("link",))
    assert "<tr><td>" not in markup  # no row written as HTML: they are data
    path = tmp_path / "t.html"
    path.write_text(page("t", f"<details><summary>rows</summary>{markup}</details>"))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        tab = browser.new_page()
        problems: list[str] = []
        tab.on("pageerror", lambda err: problems.append(str(err)))
        tab.goto(path.as_uri(), wait_until="load")
        rows = "table tbody tr"
        assert tab.locator(rows).count() == 0  # closed: nothing loaded yet
        tab.click("summary")
        tab.wait_for_function(f"document.querySelectorAll('{rows}').length === {LAZY_ROWS}")
        tab.click("button")
        assert tab.locator(rows).count() == 2 * LAZY_ROWS
        assert tab.locator("table tbody a").first.get_attribute("href") == "#r0"
        tab.fill("input[type=search]", "row 1")
        wanted = [s for s in frame["name"] if "row 1" in s]
        assert tab.locator(rows).count() == min(len(wanted), LAZY_ROWS)
        tab.fill("input[type=search]", "")
        tab.click("th:nth-child(2)")  # value, up
        tab.click("th:nth-child(2)")  # value, down
        first = tab.locator("table tbody tr td:nth-child(2)").first.inner_text()
        browser.close()
    assert problems == []
    assert float(first) == frame["value"].max()
