"""The verified reference: precision escalation, unreliable points, rounding, cache."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import mpmath
import numpy as np

from harness.cases import expressions as ex
from harness.cases.load import load_case
from harness.cases.points import generate, represent
from harness.reference.table import compute_reference
from harness.reference.verify import ReferenceSettings, verify_point
from harness.reference.verify import evaluator as _evaluator

from .conftest import CASES


def _with_reference(case, text):
    node = ex.parse(text, set(case.input_names))
    return dataclasses.replace(case, reference=dataclasses.replace(case.reference, expression=node))


def test_naive_softplus_verifies_only_after_escalating_precision():
    case = _with_reference(load_case(CASES / "softplus.yaml"), "log(1 + exp(x))")
    got = verify_point(_evaluator(case), {"x": 1000.0}, case.partials, ReferenceSettings())
    second = got[("x", "x")]
    assert second.value is not None and second.precision >= 800
    assert mpmath.almosteq(second.value, mpmath.mpf("5.0759588975494567653e-435"), rel_eps=1e-25)
    # With too small a ceiling the same point is unreliable, never a confident 0.
    low = verify_point(
        _evaluator(case), {"x": 1000.0}, case.partials, ReferenceSettings(max_precision=200)
    )
    assert low[("x", "x")].value is None and "precision" in low[("x", "x")].message


def test_stable_reference_verifies_at_first_doubling():
    case = load_case(CASES / "softplus.yaml")
    got = verify_point(_evaluator(case), {"x": -1000.0}, case.partials, ReferenceSettings())
    assert all(v.value is not None and v.precision == 100 for v in got.values())


def test_undefined_points_are_unreliable_with_a_reason():
    case = load_case(CASES / "ratio.yaml")
    got = verify_point(_evaluator(case), {"a": 0.0, "b": 0.0}, case.partials, ReferenceSettings())
    assert all(v.value is None for v in got.values())
    assert "not defined" in got[()].message


def test_reference_table_rounds_directly_and_caches(tmp_path):
    case = load_case(CASES / "ratio.yaml")
    pts = generate(case, max_points=30)
    per = {d: represent(pts, case.input_names, d) for d in ("float32", "float64")}
    table, counts = compute_reference(case, per, ReferenceSettings(), tmp_path)
    assert counts["computed"] > 0 and counts["cached"] == 0
    f32 = table[(table.dtype == "float32") & (table.partial == "b")]
    # df/db = a/b**2 = 1/t: overflows float32 for t below 1/max, so inf is the right answer.
    t = f32["a"].to_numpy()
    with np.errstate(over="ignore"):
        expected = (1 / t).astype(np.float32)  # hardware rounding of the exact 1/t
    assert np.array_equal(f32["reference_rounded"].to_numpy(), expected.astype(np.float64))
    # At least 25 significant digits kept (checked on the values written with exponents).
    long_ones = [s for s in f32["reference"] if "e" in s]
    assert long_ones and all(
        len(s.replace("-", "").replace(".", "").split("e")[0]) >= 25 for s in long_ones
    )
    again, counts2 = compute_reference(case, per, ReferenceSettings(), tmp_path)
    assert counts2 == {"computed": 0, "cached": counts["computed"], "stencil_points": 0}
    assert again.equals(table)


def test_reference_never_imports_tensorflow():
    code = (
        "import sys; from harness.cases.load import load_case; from harness.cases.points import generate, represent;"
        "from harness.reference.verify import ReferenceSettings; from harness.reference.table import compute_reference;"
        f"c = load_case({str(CASES / 'softplus.yaml')!r}); p = generate(c, 5);"
        "compute_reference(c, {'float32': represent(p, c.input_names, 'float32')}, ReferenceSettings());"
        "print('tensorflow' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_closed_form_that_cancels_marks_only_its_own_partial():
    # At y0 = 1/2, d2t*/dy0^2 = (1 - 2 y0)/(...) is exactly 0: unverifiable. The value and
    # the other derivatives, from other closed forms and the jet, still verify.
    case = load_case(CASES / "hitting_time.yaml")
    got = verify_point(_evaluator(case), {"r": 0.01, "y0": 0.5}, case.partials, ReferenceSettings())
    assert got[("y0", "y0")].value is None and "cancellation" in got[("y0", "y0")].message
    others = {p: v for p, v in got.items() if p != ("y0", "y0")}
    assert len(others) == 5 and all(v.value is not None for v in others.values())
    # (r is the double nearest 0.01, so t* differs from 100 ln 4 in the 17th digit)
    assert mpmath.almosteq(others[()].value, 100 * mpmath.log(4), rel_eps=1e-15)
    assert mpmath.almosteq(others[("y0",)].value, mpmath.mpf(-400), rel_eps=1e-15)
