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
