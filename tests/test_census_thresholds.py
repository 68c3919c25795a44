"""Where a kernel's value or a derivative crosses a dtype's limits: exp's thresholds
against mpmath's logarithms of the limits (written here from each format's bits), the
census's case files sampling each threshold with its neighbours, and the committed table
equal to a fresh computation from the operators' Arb rules."""

from __future__ import annotations

import json
import math

import mpmath
import numpy as np
import pytest

from harness.cases.schema import DTYPES
from harness.census.cases import census_cases
from harness.census.thresholds import TABLE, operator_thresholds, table, thresholds
from harness.operators import OPERATORS

#: (NumPy type, largest finite, smallest normal, smallest subnormal) from the bit layouts.
LIMITS = {
    "float32": (np.float32, (2 - 2.0**-23) * 2.0**127, 2.0**-126, 2.0**-149),
    "float64": (np.float64, (2 - 2.0**-52) * 2.0**1023, 2.0**-1022, 2.0**-1074),
}


def _first_float_at_or_above(value: mpmath.mpf, kind) -> float:
    """The smallest float of ``kind`` not below ``value``."""
    x = kind(float(value))
    while mpmath.mpf(float(x)) < value:
        x = np.nextafter(x, kind(np.inf))
    while mpmath.mpf(float(np.nextafter(x, kind(-np.inf)))) >= value:
        x = np.nextafter(x, kind(-np.inf))
    return float(x)


@pytest.mark.parametrize("dtype", sorted(LIMITS))
def test_exp_crosses_each_limit_at_the_float_mpmath_gives(dtype):
    """exp and all its derivatives are exp: one threshold per limit, the first float x
    with exp(x) at or above it (x >= log(limit), by mpmath at 60 digits)."""
    kind, largest, normal, subnormal = LIMITS[dtype]
    with mpmath.workdps(60):
        expected = sorted(
            _first_float_at_or_above(mpmath.log(mpmath.mpf(level)), kind)
            for level in (largest, normal, mpmath.mpf(subnormal) / 2)
        )
    assert operator_thresholds(OPERATORS["exp"], dtype) == expected
    assert thresholds("exp", dtype) == expected
    if dtype == "float64":  # JAX's jet of exp fails from here (its study finding's edge)
        assert -708.3964185322641 in expected


def test_a_derivative_s_threshold_is_found_where_the_value_has_none():
    """sin is at most 1 and its derivatives too: no overflow; it turns subnormal at the
    smallest normal (sin x = x to 1e-600 there), its threshold on both sides, and rounds
    to 0 only at 0."""
    _, _, normal, tiny = LIMITS["float64"]
    found = operator_thresholds(OPERATORS["sin"], "float64")
    assert all(abs(x) <= normal + tiny for x in found)
    for sign in (1, -1):
        assert any(abs(x - sign * normal) <= tiny for x in found), (sign, found)
    assert set(found) & {0.0, tiny}
    # sinh's first derivative, cosh, overflows where sinh does, and sinh at both signs.
    sinh = operator_thresholds(OPERATORS["sinh"], "float64")
    with mpmath.workdps(60):
        top = _first_float_at_or_above(mpmath.asinh(mpmath.mpf(LIMITS["float64"][1])), np.float64)
    assert top in sinh


def test_the_census_samples_each_threshold_with_its_neighbours():
    (exp,) = [c for c in census_cases(["float64"], 8) if c.name == "census_exp"]
    x = set(exp.inputs["x"].tolist())
    for t in thresholds("exp", "float64"):
        assert {np.nextafter(t, -np.inf), t, np.nextafter(t, np.inf)} <= x, t


@pytest.mark.slow
def test_the_committed_table_is_the_operators_own():
    """harness/census/thresholds.json is what `harness census-thresholds` computes from
    the operator table now (a changed rule or sampling needs the table written again)."""
    committed = json.loads(TABLE.read_text(encoding="utf-8"))
    fresh = table(OPERATORS, DTYPES)
    assert sorted(committed) == sorted(DTYPES)
    for dtype in DTYPES:
        assert committed[dtype] == fresh[dtype], dtype
    assert all(math.isfinite(x) for per in fresh.values() for v in per.values() for x in v)
