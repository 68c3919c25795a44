"""A case's local names (``let:``): one node wherever the name is used, computed once by
the frameworks as the user's ``e = exp(x)`` is; a traced function's shared variables
written back as ``let:`` names by ``to_case``, and that case computing the user's own
derivative bits (where writing ``exp(x)`` three times gives another).

The expected values are JAX's own, of the user's function as written (``jax.grad``), and
the jaxpr's count of ``exp`` equations."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
import yaml

import harness
from harness.cases import expressions as ex
from harness.cases import lets
from harness.cases.load import load_case
from tests.check_helpers import same_bits

CASE = """
title: the logistic times exp, with a local name
source: tests/test_lets.py
inputs:
  x: {values: [-2.0, 0.5]}
let:
  e: exp(x)
  p: 1 + e
function: e * e / p
derivatives: {wrt: x, orders: [1, 2]}
implementations:
  named:
    expression: e * e / p
  written_out:
    expression: exp(x) * exp(x) / (1 + exp(x))
"""


def _case(tmp_path, text=CASE):
    path = tmp_path / "named.yaml"
    path.write_text(textwrap.dedent(text))
    return load_case(path)


def _user(jnp):
    def f(x):
        e = jnp.exp(x)
        return e * e / (1 + e)

    return f


def test_a_local_name_is_one_node_wherever_it_is_used(tmp_path):
    case = _case(tmp_path)
    named = case.implementation("named").expression
    product, p = named.left, named.right
    # e * e: one object twice; p = 1 + e holds that same object.
    assert product.left is product.right is p.right
    assert case.function.left.left is case.function.right.right
    # The written-out form: three separate calls, equal but not the same.
    out = case.implementation("written_out").expression
    assert out.left.left == out.left.right and out.left.left is not out.left.right
    # Shared in the order to compute them: e before p, which uses it.
    assert [ex.unparse(n) for n in lets.shared(named)] == ["exp(x)"]
    assert lets.shared(out) == []
    # Written back: the names it shares, and the text that uses them.
    back, text = lets.unparse(named, {"x"})
    assert back == {"s1": "exp(x)"} and text == "((s1 * s1) / (1 + s1))"
    # The reference's function reads the same mathematics either way.
    assert ex.unparse(case.function) == ex.unparse(out)


def test_shared_nodes_written_as_names_read_back_as_the_same_expression():
    e = ex.Call("exp", (ex.Var("x"),))
    minus = ex.Unary("neg", e)
    node = ex.Where(ex.Compare("gt", minus, ex.Num("1.0", 1.0)), ex.Binary("mul", minus, e), e)
    named, text = lets.unparse(node, {"x", "s1"})  # s1 taken: the names skip it
    assert named == {"s2": "exp(x)", "s3": "(-s2)"} and text == "where(s3 > 1.0, (s3 * s2), s2)"
    bound: dict = {}
    for name, body in named.items():
        bound[name] = lets.bind(ex.parse(body, {"x", *bound}), bound)
    back = lets.bind(ex.parse(text, {"x", *bound}), bound)
    assert ex.unparse(back) == "where((-exp(x)) > 1.0, ((-exp(x)) * exp(x)), exp(x))"
    assert back.then.left is back.cond.left and back.then.right is back.otherwise


def test_a_local_name_shadowing_an_input_or_used_early_is_refused(tmp_path):
    from harness.cases.model import CaseError

    with pytest.raises(CaseError, match=r"let\.sin.*already taken"):
        _case(tmp_path, CASE.replace("  e: exp(x)", "  sin: exp(x)\n  e: exp(x)"))
    with pytest.raises(CaseError, match=r"let\.e.*unknown name 'p'"):
        _case(tmp_path, CASE.replace("e: exp(x)", "e: exp(x) + p"))


def test_names_that_would_grow_past_any_written_expression_are_refused(tmp_path):
    from harness.cases.model import CaseError

    # a1 = x*x, a2 = a1*a1, ...: a30 written out would be 2**31 - 1 nodes.
    chain = "\n".join(f"  a{i}: a{i - 1} * a{i - 1}" for i in range(2, 31))
    text = CASE.replace("  e: exp(x)", f"  a1: x * x\n{chain}\n  e: exp(x)")
    with pytest.raises(CaseError, match=r"let\.a1[0-9].*written out.*more than the 20000"):
        _case(tmp_path, text)


@pytest.mark.slow
def test_the_walker_computes_a_shared_node_once(tmp_path):
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    from harness.backends.jax.build import KERNELS
    from harness.backends.walker import walk

    case = _case(tmp_path)

    def count(node) -> int:
        def f(x):
            return walk(node, {"x": x}, jnp.float32, KERNELS)

        return str(jax.make_jaxpr(f)(1.0)).count(" exp ")

    assert count(case.implementation("named").expression) == 1
    assert count(case.implementation("written_out").expression) == 3


@pytest.mark.slow
def test_to_case_names_what_the_trace_shares_and_computes_the_users_bits(tmp_path):
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    from harness.backends.jax import snippet
    from harness.config import load_config
    from harness.stages.run import run_case

    jax.config.update("jax_enable_x64", True)
    f = _user(jnp)

    def written_out(x):
        return jnp.exp(x) * jnp.exp(x) / (1 + jnp.exp(x))

    # The premise: at x = -2 the two forms' float64 gradients are an ulp apart.
    x = jnp.float64(-2.0)
    user = float(jax.grad(f)(x))
    assert user != float(jax.grad(written_out)(x))
    result = harness.check(
        f, "jax", {"x": [-2.0, 0.5]}, orders=(1, 2), dtypes=("float64",), methods=["reverse"]
    )
    data = yaml.safe_load(result.to_case())
    assert data["let"] == {"s1": "exp(x)"} and data["function"] == "((s1 * s1) / (1.0 + s1))"
    path = tmp_path / "cases" / "shared.yaml"
    path.parent.mkdir()
    path.write_text(result.to_case())
    config = load_config(None, {"setting": "full", "split": {"quick": [], "full": []}})
    rows = run_case(path, config, results=tmp_path / "results")
    first = rows[(rows["order"] == 1) & (rows["x"] == -2.0)]
    assert len(first) and (first["value"] == user).all()
    # Every value the case computes is the user's function's, bit for bit.
    keys = ["mode", "order", "point"]
    a = result.rows.set_index(keys)["value"].sort_index()
    b = rows.set_index(keys)["value"].sort_index()
    assert list(a.index) == list(b.index) and same_bits(a, b).all()
    # Its reproducer computes exp once too, and gives the user's gradient.
    case = load_case(path)
    (block,), name = snippet.write(case, "f", ("x",))
    assert block.count("jnp.exp(") == 1 and "s1 = jnp.exp(x)" in block
    scope = {"jnp": jnp, "DTYPE": jnp.float64}
    exec(block, scope)  # the harness's own generated source, not a case file
    assert np.float64(jax.grad(scope[name])(x)) == user
