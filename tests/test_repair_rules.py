"""Custom rules from the function's own derivative (:mod:`harness.repair.derivative`,
:mod:`harness.repair.candidates`): the seed's published nested rule (seed 004, whose
second-order rule is not the derivative and whose exp(x) overflows) repaired to a nested
rule right at every order 0-4 in float32 and float64, found by the second round that
joins the expression's best rewrite with the best rule; its PyTorch code differentiated
four times by PyTorch itself and held to mpmath."""

from __future__ import annotations

import mpmath
import pytest

from harness.repair.code import import_code
from harness.repair.prove import repair
from harness.stages.prepared import Selection

from .conftest import write_case

NESTED = """\
title: the published nested rule
source: test
inputs:
  x: {values: [-100, -20, -1, 0.5, 1, 10, 50, 100, 300]}
function: log(1 + exp(x))
reference: {expression: softplus(x)}
derivatives: {wrt: x, orders: [1, 2, 3, 4]}
implementations:
  seed004_rule:
    expression: log(1 + exp(x))
    gradient:
      x:
        expression: 1 - 1 / (1 + exp(x))
        gradient:
          x: dy * (1 - exp(x))
dtypes: [float32, float64]
methods: [reverse]
"""


def _torch_orders(fn, x: float, dtype: str, top: int = 4) -> list[float]:
    """``fn`` and its derivatives to ``top`` at ``x`` by nested torch.autograd.grad."""
    import torch

    t = torch.tensor([x], dtype=getattr(torch, dtype), requires_grad=True)
    out, d = [], fn(t)
    out.append(float(d.detach()[0]))
    for _ in range(top):
        (d,) = torch.autograd.grad(d.sum(), t, create_graph=True)
        out.append(float(d.detach()[0]))
    return out


@pytest.mark.slow
def test_the_published_nested_rule_is_repaired_at_every_order(tmp_path):
    path = write_case(tmp_path, "nested", NESTED)
    found = repair(path, "seed004_rule", selection=Selection(backends=["torch"]), per_part=4)
    # 9 points x orders 0-4 x two dtypes, reverse mode: the original right at a third.
    assert found.original.judged == 9 * 5 * 2
    assert found.original.right < found.original.judged // 2
    best = found.best
    assert best is not None and best.everywhere and best.judged == 90, found.table()
    impl = found.implementation_of(best)
    assert isinstance(impl["gradient"]["x"], dict), impl  # a nested rule, as the seed's
    assert "nested" in best.part and best.proof_id.endswith("_combined")
    # Its code, differentiated by PyTorch itself, against mpmath at x = 1 (the seed's
    # point: 0.7310586 and, the seed's rule, -1.7182817 where the truth is 0.19661193)
    # and x = 50, float32.
    assert found.check_code("torch").same
    fn = import_code(found.code("torch"), "seed004_rule_repaired", tmp_path, "own_nested")
    mpmath.mp.prec = 200
    for x in (1.0, 50.0):
        want = [mpmath.diff(lambda t: mpmath.log1p(mpmath.exp(t)), x, n) for n in range(5)]
        got = _torch_orders(fn, x, "float32")
        for n, (g, w) in enumerate(zip(got, want)):
            assert abs(g - float(w)) <= 1e-6 * abs(float(w)), (x, n, g, float(w))
