"""The verified reference: precision escalation, unreliable points, rounding, cache."""

from __future__ import annotations

import dataclasses
import importlib
import subprocess
import sys
import time

import mpmath
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from harness.cases import expressions as ex
from harness.cases.load import load_case
from harness.cases.points import generate, represent
from harness.reference.table import cache_key, compute_reference
from harness.reference.verify import ReferenceSettings, verify_point
from harness.reference.verify import evaluator as _evaluator
from harness.registered import register

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
    assert counts2 == {
        "computed": 0,
        "cached": counts["computed"],
        "stencil_points": 0,
        "rows": len(table),
        "certified": counts["certified"],
        "cross_checked": counts["cross_checked"],
        "undefined": counts["undefined"],
    }
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


def test_a_tie_in_a_dtype_is_rounded_once_from_the_cached_value(tmp_path):
    # 3 * 2**-150 lies exactly halfway between float32's subnormals 2**-149 (bits 1) and
    # 2**-148 (bits 2); ties go to the even one, 2**-148. Read back from a 60-digit
    # decimal string the value fell just below the tie and rounded to 2**-149.
    case = _with_reference(load_case(CASES / "softplus.yaml"), "x * 3 / 2**150")
    case = dataclasses.replace(case, raw={**case.raw, "reference": {"expression": "x*3/2**150"}})
    pts = represent(pd.DataFrame({"point": [0], "x": [1.0]}), case.input_names, "float32")
    for attempt in ("computed", "cached"):
        table, counts = compute_reference(case, {"float32": pts}, ReferenceSettings(), tmp_path)
        assert counts[attempt] == 1
        got = table[table.partial == ""]["reference_rounded"].to_numpy()
        want = np.array([2], dtype=np.uint32).view(np.float32).astype(np.float64)
        assert got.tobytes() == want.tobytes(), (attempt, got, want)


def test_editing_a_function_body_does_not_reuse_cached_references(tmp_path):
    # composition.yaml with its function written through foo (u**2): x**8; then foo's
    # body edited to u**3: x**27. The reference cache must not hand back x**8.
    text = (CASES / "composition.yaml").read_text()
    assert "function: x**8\n" in text and "    expression: u**2\n" in text
    text = text.replace("function: x**8\n", "function: foo(foo(foo(x)))\n")
    (tmp_path / "a.yaml").write_text(text)
    (tmp_path / "b.yaml").write_text(
        text.replace("    expression: u**2\n", "    expression: u**3\n")
    )
    before, after = load_case(tmp_path / "a.yaml"), load_case(tmp_path / "b.yaml")
    assert cache_key(before, ReferenceSettings()) != cache_key(after, ReferenceSettings())
    frame = pd.DataFrame({"point": [0], "x": [2.0]})
    pts = {"float64": represent(frame, before.input_names, "float64")}
    old, _ = compute_reference(before, pts, ReferenceSettings(), tmp_path / "cache")
    new, counts = compute_reference(after, pts, ReferenceSettings(), tmp_path / "cache")
    assert counts["computed"] == 1 and counts["cached"] == 0
    value = lambda t: t[t.order == 0]["reference_rounded"].tolist()  # noqa: E731
    assert value(old) == [2.0**8] and value(new) == [2.0**27]


def test_a_registered_reference_is_keyed_by_its_source(tmp_path, monkeypatch):
    module = tmp_path / "reference_under_test.py"
    module.write_text(
        "from harness.registered.register import reference\n"
        "@reference('reference_under_test', ('x',), 'a test reference')\n"
        "def fn(point, partials, dps):\n"
        "    return {p: point['x'] for p in partials}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "reference_under_test", raising=False)
    importlib.import_module("reference_under_test")
    try:
        base = load_case(CASES / "softplus.yaml")
        case = dataclasses.replace(
            base,
            reference=dataclasses.replace(
                base.reference, expression=None, registered="reference_under_test"
            ),
        )
        first = cache_key(case, ReferenceSettings())
        assert cache_key(case, ReferenceSettings()) == first
        module.write_text(module.read_text().replace("point['x']", "2 * point['x']"))
        assert cache_key(case, ReferenceSettings()) != first
    finally:
        del register.REFERENCES["reference_under_test"]
        sys.modules.pop("reference_under_test", None)


@pytest.mark.parametrize(
    ("text", "point", "partial", "truth"),
    [
        # tanh''(x) = -2 tanh(x) sech(x)^2; sigmoid'' = s(1 - s)(1 - 2s); softplus''' = sigmoid''
        ("tanh(x)", "1e-150", ("x", "x"), lambda x: -2 * mpmath.tanh(x) / mpmath.cosh(x) ** 2),
        ("tanh(x)", "-3e-300", ("x", "x"), lambda x: -2 * mpmath.tanh(x) / mpmath.cosh(x) ** 2),
        (
            "sigmoid(x)",
            "1e-200",
            ("x", "x"),
            lambda x: (lambda s: s * (1 - s) * (1 - 2 * s))(1 / (1 + mpmath.exp(-x))),
        ),
        (
            "softplus(x)",
            "-1e-120",
            ("x", "x", "x"),
            lambda x: (lambda s: s * (1 - s) * (1 - 2 * s))(1 / (1 + mpmath.exp(-x))),
        ),
        (
            "sigmoid(x)",
            "2e-100",
            ("x", "x", "x", "x"),
            # the fourth derivative: d (1 - 2s)^3 - 8 d^2 (1 - 2s), d = s(1 - s)
            lambda x: (lambda s, d: d * (1 - 2 * s) ** 3 - 8 * d**2 * (1 - 2 * s))(
                1 / (1 + mpmath.exp(-x)), mpmath.exp(-x) / (1 + mpmath.exp(-x)) ** 2
            ),
        ),
    ],
)
def test_sigmoid_family_near_zero_is_not_a_verified_zero(text, point, partial, truth):
    case = _with_reference(load_case(CASES / "softplus.yaml"), text)
    x = float(point)
    got = verify_point(_evaluator(case), {"x": x}, [partial], ReferenceSettings())[partial]
    with mpmath.workdps(1000):  # the textbook formula, far above the cancellation
        want = truth(mpmath.mpf(x))
    assert want != 0 and got.value is not None
    assert abs(got.value - want) <= abs(want) * mpmath.mpf(10) ** -25, (got.value, want)


def test_nested_exponentials_end_as_unreliable_not_as_a_hang():
    # exp(exp(exp(exp(3)))): the innermost three give e**(4.8e8); one more needs a number
    # with about 7e8 binary digits in its exponent. The kernel refuses it at once.
    case = _with_reference(load_case(CASES / "softplus.yaml"), "exp(exp(exp(exp(x))))")
    started = time.process_time()
    got = verify_point(_evaluator(case), {"x": 3.0}, case.partials, ReferenceSettings())
    assert time.process_time() - started < 10
    assert all(v.value is None for v in got.values())
    assert "exp of a number beyond 2**65536" in got[()].message
    # One exponential fewer is e**(4.8e8): evaluated, far beyond every dtype (inf there).
    case = _with_reference(load_case(CASES / "softplus.yaml"), "exp(exp(exp(x)))")
    value = verify_point(_evaluator(case), {"x": 3.0}, [()], ReferenceSettings())[()].value
    with mpmath.workdps(60):
        assert value is not None
        assert mpmath.almosteq(mpmath.log(value), mpmath.exp(mpmath.exp(3)), rel_eps=1e-25)


def test_a_point_past_its_time_budget_is_unreliable_with_the_reason():
    # Naive softplus'' at x = 1000 needs 800+ digits (see above); with no time to spare
    # the partials not yet verified are given up after the first precision.
    case = _with_reference(load_case(CASES / "softplus.yaml"), "log(1 + exp(x))")
    got = verify_point(
        _evaluator(case), {"x": 1000.0}, case.partials, ReferenceSettings(), budget_seconds=0.0
    )
    second = got[("x", "x")]
    assert second.value is None and "budget of 0 CPU seconds per point ran out" in second.message


def test_a_damaged_reference_cache_is_discarded_recomputed_and_said(tmp_path, capsys):
    case = load_case(CASES / "ratio.yaml")
    per = {"float64": represent(generate(case, max_points=6), case.input_names, "float64")}
    table, counts = compute_reference(case, per, ReferenceSettings(), tmp_path)
    [path] = tmp_path.glob("*.parquet")
    whole = pq.read_table(path)
    capsys.readouterr()
    # A truncated file: unreadable as a whole; recomputed, said once, rewritten.
    path.write_bytes(path.read_bytes()[:100])
    again, counts2 = compute_reference(case, per, ReferenceSettings(), tmp_path)
    err = capsys.readouterr().err
    assert f"reference cache {path}: unreadable" in err and "discarded" in err
    assert counts2["computed"] == counts["computed"] > 0 and again.equals(table)
    _, counts3 = compute_reference(case, per, ReferenceSettings(), tmp_path)
    assert counts3["computed"] == 0 and capsys.readouterr().err == ""
    # One entry whose value does not decode (the harness's own metadata kept): that
    # point alone is recomputed.
    values = whole.column("value").to_pylist()
    first = next(i for i, v in enumerate(values) if v)
    values[first] = "0xzzp1"
    column = whole.schema.get_field_index("value")
    pq.write_table(whole.set_column(column, "value", pa.array(values)), path)
    again, counts4 = compute_reference(case, per, ReferenceSettings(), tmp_path)
    assert "1 entry that does not decode; discarded" in capsys.readouterr().err
    assert counts4["computed"] == 1 and again.equals(table)
