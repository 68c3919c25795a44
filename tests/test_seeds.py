"""The seeds' published facts, reproduced through the harness (TensorFlow, float32)."""

from __future__ import annotations

import numpy as np
import pytest

from harness.floats import FORMATS
from harness.pipeline import Selection, run_case

from .conftest import CASES

pytestmark = pytest.mark.slow

F32 = FORMATS["float32"]


@pytest.fixture(scope="module")
def ratio(tmp_path_factory):
    out = tmp_path_factory.mktemp("ratio")
    sel = Selection(dtypes=["float32"], methods=["reverse"], modes=["eager"], orders=[1])
    return run_case(CASES / "ratio.yaml", selection=sel, results=out)


def test_explicit_square_is_ok_only_between_1e_19_and_2e19(ratio):
    # Seeds 000/001: b**2 underflows below ~1e-19 (gradient inf), overflows above ~1.8e19
    # (gradient 0); the figure's blue, orange and green regions.
    g = ratio[(ratio.implementation == "explicit_square") & (ratio.partial == "b")]
    ok = g[g.outcome == "ok"].a
    assert 1e-19 <= ok.min() < 3e-19 and 9e18 < ok.max() <= 2e19
    normal = g[g.a >= F32.smallest_normal]
    assert set(normal[normal.a < ok.min()].outcome) == {"inf"}
    assert set(normal[normal.a > ok.max()].outcome) == {"zero"}
    assert set(g[g.a.between(ok.min(), ok.max())].outcome) == {"ok"}
    assert (g[g.outcome != "ref_unreliable"].expected != "broken").all()


def test_stable_division_is_ok_over_the_whole_normal_range(ratio):
    g = ratio[(ratio.implementation == "stable_division") & (ratio.partial == "b")]
    # Where both the input t and the answer 1/t are normal float32 numbers.
    normal = g[(g.a >= F32.smallest_normal) & (1 / g.a >= F32.smallest_normal)]
    assert len(normal) > 200
    assert set(normal.outcome) == {"ok"}
    assert np.allclose(normal.value, 1 / normal.a, rtol=1e-6)
    # The seed's own custom division (Defun newDiv ported) agrees everywhere.
    newdiv = ratio[(ratio.implementation == "seed_newdiv") & (ratio.partial == "b")]
    assert list(newdiv.outcome) == list(g.outcome)


def test_subnormal_inputs_are_flushed_to_nan_and_flagged(ratio):
    g = ratio[(ratio.implementation == "autodiff") & (ratio.partial == "b")]
    tiny = g[g.a < F32.smallest_normal]
    assert len(tiny) > 0 and tiny.subnormal.all()
    assert set(tiny.outcome) == {"nan"}  # TF reads a subnormal as 0 here: 0/0


@pytest.fixture(scope="module")
def softplus(tmp_path_factory):
    out = tmp_path_factory.mktemp("softplus")
    sel = Selection(dtypes=["float32"], methods=["reverse"], modes=["eager"], orders=[1, 2])
    return run_case(CASES / "softplus.yaml", selection=sel, results=out)


def _at(errors, implementation, partial, x):
    row = errors[
        (errors.implementation == implementation) & (errors.partial == partial) & (errors.x == x)
    ]
    assert len(row) == 1
    return row.iloc[0]


def test_naive_softplus_gradient_is_nan_at_100(softplus):
    # Seed 002: "the gradient this function evaluated at x=100 is NaN".
    row = _at(softplus, "naive", "x", 100.0)
    assert np.isnan(row.value) and row.outcome == "nan"
    assert row.expected == "held"


@pytest.mark.parametrize("implementation", ["doc_custom_gradient", "stable_custom_gradient"])
def test_custom_gradients_give_one_at_100(softplus, implementation):
    # "With this definition, the gradient at x=100 will be correctly evaluated as 1.0."
    row = _at(softplus, implementation, "x", 100.0)
    assert row.value == 1.0 and row.outcome == "ok"


def test_documented_custom_gradient_fixes_order_one_only(softplus):
    # Its rule dy * (1 - 1/(1 + exp(x))) is differentiated naively: exp(100) overflows.
    row = _at(softplus, "doc_custom_gradient", "xx", 100.0)
    assert np.isnan(row.value) and row.outcome == "nan"
    # The stable rule's second order is sigmoid's own gradient: finite, not NaN. Its true
    # value 3.7e-44 is a float32 subnormal, which TensorFlow flushes here: a `zero`.
    stable = _at(softplus, "stable_custom_gradient", "xx", 100.0)
    assert stable.value == 0.0 and stable.outcome == "zero"
    assert 0 < stable.reference_rounded < F32.smallest_normal
    assert _at(softplus, "stable_custom_gradient", "xx", 1.0).outcome == "ok"
