"""Regimes (:mod:`harness.repair.regimes`): the split of the input values where two
forms are each right on one side, found from a judged table built by hand (so the right
split is known by construction), its threshold the shortest decimal between the two
values it falls between; no regime where one form alone does as well, or with two
inputs."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

from harness.cases import expressions as ex
from harness.repair.regimes import regimes, threshold

XS = [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]


def _errors(right: dict[str, set[float]], names=("x",)) -> pd.DataFrame:
    """Rows of an errors table: each implementation at each x, two orders, two dtypes;
    ``ok`` where ``right`` says, else ``nan``; finite differences always wrong (their
    error is their own, left out)."""
    rows = []
    for impl, good in right.items():
        for x, dtype, order in itertools.product(XS, ("float32", "float64"), (0, 1)):
            outcome = "ok" if x in good else "nan"
            for method in ("reverse", "finite_difference"):
                out = outcome if method == "reverse" else "wrong"
                rows.append(
                    {
                        "implementation": impl,
                        "method": method,
                        "dtype": dtype,
                        "order": order,
                        **{n: x for n in names},
                        "outcome": out,
                    }  # fmt: skip
                )
    return pd.DataFrame(rows)


FORMS = {"orig": "log(1 + exp(x))", "cand": "softplus(x)"}


def _regimes(errors, names=("x",)):
    return regimes(
        errors, {"expression": FORMS["orig"]}, "orig", names, FORMS, 7,
        ("finite_difference",), ("flushed",),
    )  # fmt: skip


def test_two_forms_right_on_either_side_of_a_value_make_one_regime():
    # orig right below 8, cand from 8 up (and at 1): the split falls between 4 and 8.
    errors = _errors({"orig": {0.5, 1.0, 2.0, 4.0}, "cand": {1.0, 8.0, 16.0, 32.0, 64.0}})
    (regime,) = _regimes(errors)[:1]
    assert regime.form == "where(x > 6.0, softplus(x), log(1 + exp(x)))"
    assert regime.number == 7 and regime.mapping["expression"] == regime.form
    assert "8 of 8 values" in regime.part and "orig where x <= 6.0" in regime.part
    ex.parse(regime.form, {"x"})
    # The other way round (cand below, orig above) makes fewer values right: it comes
    # after, if at all.
    later = [r for r in _regimes(errors)[1:] if r.part.startswith("regime (cand where")]
    assert all("8 of 8" not in r.part for r in later)


def test_no_regime_where_a_form_alone_does_as_well_or_with_two_inputs():
    assert _regimes(_errors({"orig": set(XS), "cand": {1.0, 2.0}})) == ()
    both = _errors({"orig": {0.5}, "cand": {64.0}}, names=("x", "y"))
    assert _regimes(both, names=("x", "y")) == ()


@pytest.mark.parametrize(
    "low, high, want",
    [(4.0, 8.0, 6.0), (-1.0, 2.0, 0.5), (1e-30, 1e-29, 3e-30), (-8.0, -4.0, -6.0),
     (1.0, 1.0000001, 1.0000001)],
)  # fmt: skip
def test_a_threshold_is_the_shortest_decimal_between_the_two_values(low, high, want):
    t = threshold(low, high)
    assert low < t <= high and t == want


def test_a_form_right_near_zero_on_both_sides_splits_by_magnitude():
    global XS
    saved, XS = XS, [-64.0, -8.0, -1.0, -0.5, 0.5, 1.0, 8.0, 64.0]
    try:
        errors = _errors({"orig": {-1.0, -0.5, 0.5, 1.0}, "cand": {-64.0, -8.0, 8.0, 64.0}})
    finally:
        XS = saved
    (regime,) = _regimes(errors)[:1]
    assert regime.form == "where(abs(x) > 3.0, softplus(x), log(1 + exp(x)))"
    assert "4 of 4 values" in regime.part  # the magnitudes 0.5, 1, 8 and 64
