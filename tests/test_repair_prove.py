"""Candidates judged (:mod:`harness.repair.prove`, ``harness repair``): the seed's naive
softplus repaired to a form right at every judged value in PyTorch, the repair written
into a case file that loads; a wrong rule whose rewrites are all as wrong reported as
having no repair; bad arguments refused."""

from __future__ import annotations

import math
import subprocess
import sys

import mpmath
import numpy as np
import pytest

from harness.cases import expressions as ex
from harness.cases.load import load_case
from harness.repair.prove import repair
from harness.results import read_table
from harness.stages.prepared import Selection

from .conftest import ROOT, write_case

SOFTPLUS = """\
title: softplus as the seed writes it, float64
source: test
inputs:
  x: {log: {from: 1, to: 800, count: 12}}
function: log(1 + exp(x))
reference: {expression: softplus(x)}
derivatives: {wrt: x, orders: [1, 2]}
implementations:
  naive: {expression: log(1 + exp(x))}
dtypes: [float64]
"""

#: x**2 with a rule that says 3x (as x / (1/3)): every rewrite of the rule is as wrong.
WRONG_RULE = """\
title: a wrong rule
source: test
inputs:
  x: {log: {from: 0.5, to: 4, count: 5}}
function: x**2
derivatives: {wrt: x, orders: [1]}
implementations:
  wrong:
    expression: x**2
    gradient: {x: dy * x / (1 / 3)}
dtypes: [float64]
"""


#: NumPy's own float64 functions, for the forms' nodes (no harness kernel).
NUMPY = {
    "maximum": np.maximum,
    "log1p": np.log1p,
    "exp": np.exp,
    "abs": np.abs,
    "log": np.log,
    "softplus": lambda v: np.logaddexp(0.0, v),
}
BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}


def _numpy(node: ex.Node, x: np.float64) -> np.float64:
    """A form evaluated in float64 by NumPy, node by node."""
    if isinstance(node, ex.Var):
        return x
    if isinstance(node, ex.Num):
        return np.float64(node.value)
    if isinstance(node, ex.Unary):
        return -_numpy(node.arg, x)
    if isinstance(node, ex.Binary):
        return BINARY[node.op](_numpy(node.left, x), _numpy(node.right, x))
    return NUMPY[node.func](*(_numpy(a, x) for a in node.args))


def test_naive_softplus_is_repaired_to_a_form_right_at_every_judged_value(tmp_path):
    path = write_case(tmp_path, "softplus", SOFTPLUS)
    found = repair(
        path, "naive", selection=Selection(backends=["torch"]), per_part=4, symbolic=False
    )
    # Every point, order 0-2, by each of PyTorch's three autodiff methods in the eager
    # mode (finite differences, whose error is the method's own, aside).
    assert found.original.judged == 12 * 3 * 3
    assert not found.original.everywhere and found.original.regressions == 0
    best = found.best
    assert best is not None and best.everywhere and best.regressions == 0
    assert best.fixed == best.judged - found.original.right
    assert best is found.alternatives[0]
    # Independently: at x = 800 the repaired form in NumPy is the truth, 800 to the last
    # bit (mpmath), where the naive one overflows.
    form = ex.parse(best.form, {"x"})
    truth = float(mpmath.log(1 + mpmath.exp(mpmath.mpf(800))))
    with np.errstate(over="ignore"):
        assert _numpy(form, np.float64(800)) == truth == 800.0
        assert math.isinf(_numpy(ex.parse("log(1 + exp(x))", {"x"}), np.float64(800)))
    # The case with the repair added is a case file that loads, the original kept.
    import yaml

    data = yaml.safe_load(path.read_text())
    out = tmp_path / "fixed.yaml"
    out.write_text(yaml.safe_dump(found.case_with_repair(data), sort_keys=False))
    loaded = load_case(out)
    assert {i.name for i in loaded.implementations} == {"naive", "naive_repaired"}
    assert ex.unparse(loaded.implementation("naive_repaired").expression) == best.form


def _in_chromium(path):
    """The page loads in headless Chromium with no console error and no request beyond
    itself, its table and code shown."""
    from playwright.sync_api import sync_playwright

    from .test_report import watched_page

    with sync_playwright() as p:
        browser, page, problems, requests = watched_page(p)
        page.goto(path.as_uri(), wait_until="load")
        assert page.locator("table").count() == 1 and page.locator("pre").count() == 1
        assert "maximum" in page.locator("pre").inner_text()
        browser.close()
    assert problems == []
    assert all(u.startswith(("file://", "data:")) for u in requests), requests


def _harness(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "harness", *args], cwd=cwd, capture_output=True, text=True
    )


@pytest.mark.slow
def test_the_repair_command_writes_the_case_and_says_when_no_repair_exists(tmp_path):
    path = write_case(tmp_path, "softplus", SOFTPLUS)
    into = tmp_path / "softplus_fixed.yaml"
    proc = _harness(
        "repair",
        str(path),
        "naive",
        "--backends",
        "torch",
        "--into",
        str(into),
        "--code",
        str(tmp_path / "results" / "repairs" / "softplus"),
        "--table",
        str(tmp_path / "results" / "repairs" / "softplus.parquet"),
        "--no-symbolic",
        "-q",
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "repair, right everywhere" in proc.stdout and "e-nodes" in proc.stdout
    assert "naive_repaired" in {i.name for i in load_case(into).implementations}
    # The code, one module for the one framework searched, checked bit for bit (12
    # points, orders 0-2, four methods with finite differences).
    code = tmp_path / "results" / "repairs" / "softplus"
    assert [p.name for p in code.iterdir()] == ["naive_repaired_torch.py"]
    assert "checked by harness.check: 144 values bit for bit as judged" in proc.stdout
    # The table: the original, its repair and the other alternatives, a row each, with
    # the counts the printed table gives (12 points, orders 0-2, three methods).
    table = read_table(tmp_path / "results" / "repairs" / "softplus.parquet")
    assert list(table["kind"][:2]) == ["original", "repair"] and len(table) >= 3
    assert set(table["judged"][:2]) == {108} and table["right"].iloc[1] == 108
    # The repairs page from it, in Chromium: the alternatives and the code.
    proc = _harness(
        "report", "--repairs", "--results", str(tmp_path / "results"),
        "--reports", str(tmp_path / "reports"), cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    page_path = tmp_path / "reports" / "repairs.html"
    text = page_path.read_text()
    assert "softplus: naive" in text and "repair, right everywhere" in text
    assert "naive_repaired_torch.py" in text and "torch.autograd" not in text
    _in_chromium(page_path)
    # A rule that is wrong: every rewrite computes the same wrong 3x, so none is better
    # (rewrites alone); the function's own derivative, 2x, is right everywhere.
    wrong = write_case(tmp_path, "wrong", WRONG_RULE)
    proc = _harness("repair", str(wrong), "--backends", "torch", "--no-symbolic", "-q", cwd=ROOT)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "no repair of wrong" in proc.stdout
    assert "rejected: 0 regressions, 0 fixed" in proc.stdout
    assert "symbolic" not in proc.stdout
    proc = _harness("repair", str(wrong), "--backends", "torch", "-q", cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    best = next(line for line in proc.stdout.splitlines() if line.startswith("best:"))
    assert "rule (symbolic, first order)" in best and "d/dx: (2 * x)" in best, proc.stdout
    # Bad input: an implementation the case lacks, --into with two.
    proc = _harness("repair", str(wrong), "nosuch", cwd=ROOT)
    assert proc.returncode == 2 and "no implementation nosuch" in proc.stderr
    proc = _harness("repair", str(path), "naive", "naive", "--into", str(into), cwd=ROOT)
    assert proc.returncode == 2 and "--into takes one IMPLEMENTATION" in proc.stderr
