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
    found = repair(path, "naive", selection=Selection(backends=["torch"]), per_part=4)
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
        str(tmp_path / "code"),
        "-q",
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "repair, right everywhere" in proc.stdout and "e-nodes" in proc.stdout
    assert "naive_repaired" in {i.name for i in load_case(into).implementations}
    # The code, one module for the one framework searched, checked bit for bit (12
    # points, orders 0-2, four methods with finite differences).
    assert [p.name for p in (tmp_path / "code").iterdir()] == ["naive_repaired_torch.py"]
    assert "checked by harness.check: 144 values bit for bit as judged" in proc.stdout
    # A rule that is wrong: every rewrite computes the same wrong 3x, so none is better.
    wrong = write_case(tmp_path, "wrong", WRONG_RULE)
    proc = _harness("repair", str(wrong), "--backends", "torch", "-q", cwd=ROOT)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "no repair of wrong" in proc.stdout
    assert "rejected: 0 regressions, 0 fixed" in proc.stdout
    # Bad input: an implementation the case lacks, --into with two.
    proc = _harness("repair", str(wrong), "nosuch", cwd=ROOT)
    assert proc.returncode == 2 and "no implementation nosuch" in proc.stderr
    proc = _harness("repair", str(path), "naive", "naive", "--into", str(into), cwd=ROOT)
    assert proc.returncode == 2 and "--into takes one IMPLEMENTATION" in proc.stderr
