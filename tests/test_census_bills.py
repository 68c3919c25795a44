"""The census's clean bills, root-cause counts and stable regions, from small atlases
written out here: a kernel is clean in a framework and dtype only where every judged
value is right (by autodiff, and by every method), a refused value is not judged, a
framework without the kernel has no bill, each root cause counts once per framework it
names, and a stable region is written in exact floats of its dtype."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from harness.census.atlas import ATLAS_COLUMNS, intersect, region_text
from harness.census.bills import cause_counts, clean_bills, clean_kernels


def _row(operator, backend, dtype, order, method, judged, ok, **extra) -> dict:
    row = dict.fromkeys(ATLAS_COLUMNS, 0)
    row.update(
        operator=operator,
        case=f"census_{operator}",
        backend=backend,
        dtype=dtype,
        order=order,
        partial="x" * order,
        method=method,
        mode="eager",
        points=judged,
        judged=judged,
        ok=ok,
        root_causes="",
        stable_domain="",
        worst="",
    )
    row.update(extra)
    return row


def _atlas() -> pd.DataFrame:
    rows = [
        # exp in TensorFlow: right everywhere by autodiff in both dtypes, finite
        # differences off once in float32.
        _row("exp", "tensorflow", "float32", 0, "reverse", 10, 10),
        _row("exp", "tensorflow", "float32", 4, "reverse", 10, 10),
        _row("exp", "tensorflow", "float32", 2, "finite_difference", 10, 9, inaccurate=1),
        _row("exp", "tensorflow", "float64", 1, "forward", 10, 10),
        _row("exp", "tensorflow", "float64", 1, "finite_difference", 10, 10),
        # exp in JAX: one wrong fourth derivative in float64 only; jet refused 5 values
        # of float32's third, and the rest are right.
        _row("exp", "jax", "float32", 3, "taylor", 7, 7, points=12, unsupported=5),
        _row("exp", "jax", "float64", 4, "reverse", 10, 9, wrong=1),
        # mish: no TensorFlow kernel (every point not applicable), right in PyTorch.
        _row("mish", "tensorflow", "float32", 1, "reverse", 0, 0, points=10, not_applicable=10),
        _row("mish", "torch", "float32", 1, "reverse", 10, 10),
        _row("mish", "torch", "float32", 2, "forward", 10, 10),
        # sqrt in PyTorch: nothing judged at all (every reference unreliable): no bill.
        _row("sqrt", "torch", "float64", 1, "reverse", 0, 0, points=4, ref_unreliable=4),
    ]
    return pd.DataFrame(rows, columns=list(ATLAS_COLUMNS))


def test_a_clean_bill_needs_every_judged_value_right():
    bills = clean_bills(_atlas()).set_index(["operator", "backend", "dtype"])
    assert sorted(bills.index) == [
        ("exp", "jax", "float32"),
        ("exp", "jax", "float64"),
        ("exp", "tensorflow", "float32"),
        ("exp", "tensorflow", "float64"),
        ("mish", "torch", "float32"),
        ("sqrt", "torch", "float64"),
    ]
    tf32 = bills.loc[("exp", "tensorflow", "float32")]
    assert (tf32.judged, tf32.ok, tf32.autodiff_judged, tf32.autodiff_ok) == (30, 29, 20, 20)
    assert (bool(tf32.clean_autodiff), bool(tf32.clean), tf32.orders) == (True, False, "0-4")
    tf64 = bills.loc[("exp", "tensorflow", "float64")]
    assert (bool(tf64.clean_autodiff), bool(tf64.clean)) == (True, True)
    jax32 = bills.loc[("exp", "jax", "float32")]
    assert (jax32.judged, jax32.unsupported, bool(jax32.clean_autodiff)) == (7, 5, True)
    jax64 = bills.loc[("exp", "jax", "float64")]
    assert (bool(jax64.clean_autodiff), bool(jax64.clean)) == (False, False)
    assert bool(bills.loc[("mish", "torch", "float32")].clean_autodiff)
    assert bills.loc[("mish", "torch", "float32")].orders == "1-2"
    # Nothing judged is no clean bill.
    unjudged = bills.loc[("sqrt", "torch", "float64")]
    assert (unjudged.judged, bool(unjudged.clean_autodiff), bool(unjudged.clean)) == (
        0,
        False,
        False,
    )


def test_a_kernel_is_clean_in_a_framework_only_in_every_dtype_judged():
    bills = clean_bills(_atlas())
    assert clean_kernels(bills) == {"tensorflow": ["exp"], "torch": ["mish"]}
    assert clean_kernels(bills, "clean") == {"torch": ["mish"]}
    assert clean_kernels(clean_bills(_atlas().iloc[:0])) == {}


def test_root_causes_count_once_in_each_framework_they_name():
    causes = pd.DataFrame(
        {
            "kind": ["kernel", "kernel", "mode", "kernel", "framework"],
            "frameworks": [
                "tensorflow, jax",
                "torch",
                "tensorflow",
                "jax, torch, tensorflow",
                "jax",
            ],
        }
    )
    counts = cause_counts(causes, ["tensorflow", "jax", "torch"])
    assert list(counts.index) == ["kernel", "framework", "mode"]
    assert counts.loc["kernel"].to_dict() == {"tensorflow": 2, "jax": 2, "torch": 2, "all": 3}
    assert counts.loc["mode"].to_dict() == {"tensorflow": 1, "jax": 0, "torch": 0, "all": 1}
    assert counts.loc["framework"].to_dict() == {
        "tensorflow": 0,
        "jax": 1,
        "torch": 0,
        "all": 1,
    }


def test_a_stable_region_is_written_in_exact_floats_of_its_dtype():
    # float32's 0x42b17218 and its neighbour below, 0x42b17217 (exp overflows between).
    edge, below = (
        float(np.frombuffer(np.uint32(bits).tobytes(), np.float32)[0])
        for bits in (0x42B17218, 0x42B17217)
    )
    text = region_text({"x": [[-edge, below], [edge, edge]]}, "float32")
    assert text == "x: [-88.72284, 88.72283]; [88.72284, 88.72284]"
    assert [float(np.float32(t)) for t in ("88.72284", "88.72283")] == [edge, below]
    # float64: every digit that tells the double apart; a grid names each input.
    third = 1 / 3
    assert region_text({"x": [[third, 2.0]], "y": []}, "float64") == (
        "x: [0.3333333333333333, 2.0] | y: none"
    )
    tiny = math.ldexp(1, -1074)
    assert region_text({"x": [[tiny, 1.0]]}, "float64") == "x: [5e-324, 1.0]"


def test_the_region_right_in_every_mode_is_the_intersection_of_theirs():
    eager = {"x": [[-10.0, -1.0], [0.0, 5.0], [7.0, 9.0]]}
    jit = {"x": [[-3.0, 0.5], [4.0, 8.0]]}
    assert intersect([eager, jit]) == {"x": [[-3.0, -1.0], [0.0, 0.5], [4.0, 5.0], [7.0, 8.0]]}
    assert intersect([eager, {"x": []}]) == {"x": []}
    assert intersect([eager, {"x": [[9.0, 12.0]]}]) == {"x": [[9.0, 9.0]]}
    assert intersect([eager]) == eager
    assert intersect([]) == {}
