"""A user's custom rule, traced: ``harness.trace`` turns the first derivative a framework
computes through a ``jax.custom_jvp``/``custom_vjp``, an ``autograd.Function`` or a
``tf.custom_gradient`` into an expression of the inputs and the seed (``dx``, ``dy``),
and ``harness.check`` judges it as a hand-written rule: exactly, in Arb. A rule whose own
derivative is a rule (a nested rule) is not traced, and the check says so.

The expected values are exact: the traced rules evaluated in rationals (and in 50-digit
mpmath where they hold an exp) against the derivative worked out by hand."""

from __future__ import annotations

import re
import warnings
from fractions import Fraction

import mpmath
import pytest

import harness
from harness.cases import expressions as ex
from harness.cases.load import load_case
from tests.check_helpers import example

jax = pytest.importorskip("jax")
torch = pytest.importorskip("torch")

POINTS = {"a": [0.5, 3.0, -2.0], "b": [0.25, -7.0, 3.0]}


def evaluate(node: ex.Node, env: dict, exp=None):
    """``node`` in the arithmetic of ``env``'s values (Fractions, or mpmath numbers with
    ``exp`` and ``log`` given)."""
    if isinstance(node, ex.Num):
        return Fraction(node.text) if exp is None else mpmath.mpf(node.text)
    if isinstance(node, ex.Var):
        return env[node.name]
    if isinstance(node, ex.Unary) and node.op == "neg":
        return -evaluate(node.arg, env, exp)
    if isinstance(node, ex.Binary):
        a, b = evaluate(node.left, env, exp), evaluate(node.right, env, exp)
        return {"add": a + b, "sub": a - b, "mul": a * b, "div": a / b}[node.op]
    if isinstance(node, ex.Call) and node.func == "reciprocal":
        return 1 / evaluate(node.args[0], env, exp)
    if isinstance(node, ex.Call) and exp is not None and node.func in ("exp", "log"):
        return getattr(mpmath, node.func)(evaluate(node.args[0], env, exp))
    raise AssertionError(f"unexpected node in a traced rule: {node!r}")


@pytest.mark.parametrize("framework, module", [("jax", "jax_functions"),
                         ("torch", "torch_functions"), ("tensorflow", "tensorflow_functions")])  # fmt: skip
def test_the_custom_divisions_reverse_rule_is_traced_as_the_user_wrote_it(framework, module):
    if framework == "tensorflow":
        pytest.importorskip("tensorflow")
    traced = harness.trace(example(module).ratio, framework, POINTS)
    assert traced.text == "(-(a / b))" and traced.note == ""
    (gradient,) = [traced.rules[k] for k in traced.rules if k == "gradient"]
    assert set(gradient) == {"a", "b"}
    for a, b, dy in [(Fraction(1, 2), Fraction(1, 4), 1), (Fraction(3), Fraction(-7), 5)]:
        env = {"a": a, "b": b, "dy": Fraction(dy)}
        # f = -a/b: df/da = -1/b, df/db = a/b**2, each times the upstream gradient.
        assert evaluate(gradient["a"], env) == -dy / b
        assert evaluate(gradient["b"], env) == dy * a / b**2
    # The seed's rule, (1/b, -(a/b)/b), is a reverse rule only: no forward rule traced.
    assert "tangent" not in traced.rules


@pytest.mark.parametrize(
    "framework, kinds", [("jax", {"tangent"}), ("torch", {"gradient", "tangent"})]
)
def test_the_documented_log1pexp_rule_is_traced_forward_and_reverse(framework, kinds):
    module = example(f"{framework}_functions")
    traced = harness.trace(module.log1pexp, framework, {"x": [-3.0, 1.0, 100.0]})
    assert set(traced.rules) == kinds
    with mpmath.workdps(50):
        for kind in kinds:
            seed = "dx" if kind == "tangent" else "dy"
            for x in (mpmath.mpf("0.5"), mpmath.mpf(-3)):
                got = evaluate(traced.rules[kind]["x"], {"x": x, seed: mpmath.mpf(2)}, exp=True)
                # 1 - 1/(1 + e**x) is the logistic function: exactly, times the seed 2.
                assert abs(got - 2 / (1 + mpmath.exp(-x))) < mpmath.mpf(10) ** -45


def test_a_function_without_a_custom_rule_has_none_traced():
    traced = harness.trace(example("jax_functions").naive_log1pexp, "jax", {"x": [1.0]})
    assert traced.rules == {} and traced.note == ""


class _Inner(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return 1 - 1 / (1 + torch.exp(x))

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (1 - torch.exp(x))  # seed 004's second order: not the derivative


class _Outer(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return torch.log(1 + torch.exp(x))

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * _Inner.apply(x)


def _nested_torch(x):
    return _Outer.apply(x)


def _nested_jax():
    import jax.numpy as jnp

    @jax.custom_jvp
    def inner(x):
        return 1 - 1 / (1 + jnp.exp(x))

    inner.defjvp(lambda p, t: (inner(p[0]), t[0] * (1 - jnp.exp(p[0]))))

    @jax.custom_jvp
    def outer(x):
        return jnp.log(1 + jnp.exp(x))

    outer.defjvp(lambda p, t: (outer(p[0]), t[0] * inner(p[0])))
    return outer


def _composed_jax(x):
    f = example("jax_functions").log1pexp
    return f(f(x))  # two calls of one rule: not a nested rule


def test_a_nested_rule_is_not_traced_and_said_so_a_composed_one_is():
    cases = [("jax", _nested_jax()), ("torch", _nested_torch)]
    if _has_tensorflow():
        cases.append(("tensorflow", example("tensorflow_functions").log1pexp2))
    for framework, fn in cases:
        traced = harness.trace(fn, framework, {"x": [1.0, 2.0]})
        assert traced.rules == {}, framework
        assert "a nested rule" in traced.note and "not traced" in traced.note, framework
    composed = harness.trace(_composed_jax, "jax", {"x": [1.0, 2.0]})
    assert set(composed.rules) == {"tangent"} and composed.note == ""
    with mpmath.workdps(50):
        x = mpmath.mpf(1)
        got = evaluate(composed.rules["tangent"]["x"], {"x": x, "dx": mpmath.mpf(1)}, exp=True)
        inner = mpmath.log(1 + mpmath.exp(x))
        # d/dx softplus(softplus(x)) = sigmoid(softplus(x)) * sigmoid(x).
        want = 1 / (1 + mpmath.exp(-inner)) / (1 + mpmath.exp(-x))
        assert abs(got - want) < mpmath.mpf(10) ** -45


def _has_tensorflow() -> bool:
    try:
        import tensorflow  # noqa: F401
    except ImportError:
        return False
    return True


def _forgot_dx():
    import jax.numpy as jnp

    @jax.custom_jvp
    def forgot_dx(x):
        return jnp.log(1 + jnp.exp(x))

    # The tutorial's rule with the input's tangent left out.
    forgot_dx.defjvp(lambda p, t: (forgot_dx(p[0]), 1 - 1 / (1 + jnp.exp(p[0]))))
    return forgot_dx


@pytest.mark.slow
def test_a_custom_rule_that_is_not_the_derivative_is_a_rule_root_cause(tmp_path):
    fn = _forgot_dx()
    result = harness.check(fn, "jax", {"x": [-3.0, 2.0]}, orders=(1,), dtypes=("float64",))
    (rule,) = result.root_causes[result.root_causes["kind"] == "rule"].itertuples()
    # The rule gives sigmoid(x) whatever dx is; at dx = 2 the derivative times dx is
    # twice sigmoid(x), computed here in mpmath.
    assert "forward rule forgot_dx for d/dx is not the derivative" in rule.text
    found = re.search(
        r"at x = (\S+) with dx = 2 it gives (\S+) where dx times the derivative is (\S+)\.",
        rule.text,
    )
    assert found, rule.text
    x, gives, truth = (float(v) for v in found.groups())
    sigmoid = mpmath.mpf(1) / (1 + mpmath.exp(-mpmath.mpf(x)))
    assert x in (-3.0, 2.0)
    assert gives == pytest.approx(float(sigmoid), rel=1e-8)
    assert truth == pytest.approx(float(2 * sigmoid), rel=1e-8)
    forward = result.rows[(result.rows["method"] == "forward") & (result.rows["x"] == 2.0)]
    assert (forward["order"] == 1).any()
    # The case the check writes has the traced rule: any process can rerun it.
    path = tmp_path / "cases" / "forgot_dx.yaml"
    path.parent.mkdir()
    path.write_text(result.to_case())
    impl = load_case(path).implementation("forgot_dx")
    assert impl.registered is None and impl.kind == "custom_tangent"
    assert ex.unparse(impl.tangent["x"]) == ex.unparse(result.traced.rules["tangent"]["x"])


@pytest.mark.slow
def test_a_torch_backward_that_forgets_the_upstream_gradient_is_a_rule_root_cause():
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(u):
            return u * u

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, g):
            (u,) = ctx.saved_tensors
            return 2 * u  # dy forgotten: right where dy = 1 only

    def twice(x):
        return Square.apply(Square.apply(x))

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the rule is traced: nothing to warn about
        result = harness.check(
            twice, "torch", {"x": [2.0, 3.0]}, orders=(1,), dtypes=("float64",),
            methods=("reverse",),
        )  # fmt: skip
    reverse = result.rows[(result.rows["order"] == 1) & (result.rows["x"] == 2.0)]
    # x**4's derivative at 2 is 32; the chain of rules without dy gives the inner 2x = 4.
    assert list(reverse["value"]) == [4.0]
    kinds = set(result.root_causes["kind"])
    assert "rule" in kinds
    (rule,) = result.root_causes[result.root_causes["kind"] == "rule"].itertuples()
    assert "is not the derivative" in rule.text
