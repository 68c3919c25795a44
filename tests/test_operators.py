"""The operator table: every operator complete (rules, a kernel or a reason in every back
end), wired to the right mathematics, and read by the parser, the references and the
back ends alike.

The expected values come from mpmath written out here, one independent formula per
operator (``sigmoid`` as ``1 / (1 + exp(-x))``, ``gelu`` as ``x Φ(x)`` by ``erfc``), never
from the table's own rules."""

from __future__ import annotations

import importlib
import math

import mpmath
import numpy as np
import pytest
from flint import arb

from harness.backends import catalogue as backends
from harness.backends.interface import NotApplicable
from harness.backends.walker import resolve_kernel
from harness.cases import expressions as ex
from harness.operators import OPERATORS, Kernel, NoKernel, Operator
from harness.reference.balls import pointwise_coefficients

mp = mpmath.mp
_SELU_SCALE, _SELU_ALPHA = "1.0507009873554804934193349852946", "1.6732632423543772848170429916717"


def _softplus(x):
    return mpmath.log1p(mpmath.exp(x))


#: Each operator's value, written independently of the table's rules.
TRUTH = {
    "exp": mpmath.exp,
    "expm1": mpmath.expm1,
    "log": mpmath.log,
    "log1p": mpmath.log1p,
    "sqrt": mpmath.sqrt,
    "sin": mpmath.sin,
    "cos": mpmath.cos,
    "tan": mpmath.tan,
    "sinh": mpmath.sinh,
    "cosh": mpmath.cosh,
    "tanh": mpmath.tanh,
    "atan": mpmath.atan,
    "asinh": mpmath.asinh,
    "acosh": mpmath.acosh,
    "atanh": mpmath.atanh,
    "sigmoid": lambda x: 1 / (1 + mpmath.exp(-x)),
    "softplus": _softplus,
    "log_sigmoid": lambda x: -_softplus(-x),
    "elu": lambda x: x if x > 0 else mpmath.expm1(x),
    "selu": lambda x: (
        mpmath.mpf(_SELU_SCALE) * (x if x > 0 else mpmath.mpf(_SELU_ALPHA) * mpmath.expm1(x))
    ),
    "gelu": lambda x: x * mpmath.erfc(-x / mpmath.sqrt(2)) / 2,
    "gelu_tanh": lambda x: (
        x * (1 + mpmath.tanh(mpmath.sqrt(2 / mpmath.pi) * (x + mpmath.mpf("0.044715") * x**3))) / 2
    ),
    "erf": mpmath.erf,
    "erfc": mpmath.erfc,
    "lgamma": lambda x: mpmath.log(abs(mpmath.gamma(x))),
    "digamma": mpmath.digamma,
    "abs": abs,
    "maximum": max,
    "minimum": min,
    "atan2": mpmath.atan2,
    "xlogy": lambda x, y: x * mpmath.log(y),
    "xlog1py": lambda x, y: x * mpmath.log1p(y),
    "pow": mpmath.power,
    "logsumexp": lambda *a: mpmath.log(mpmath.fsum(mpmath.exp(v) for v in a)),
    "log_softmax": lambda *a: a[0] - mpmath.log(mpmath.fsum(mpmath.exp(v) for v in a)),
    "exp2": lambda x: mpmath.mpf(2) ** x,
    "log2": lambda x: mpmath.log(x, 2),
    "square": lambda x: x * x,
    "reciprocal": lambda x: 1 / x,
    "rsqrt": lambda x: 1 / mpmath.sqrt(x),
    "sinc": lambda x: mpmath.sincpi(x),
    "silu": lambda x: x / (1 + mpmath.exp(-x)),
    "mish": lambda x: x * mpmath.tanh(_softplus(x)),
    "softsign": lambda x: x / (1 + abs(x)),
    "erfinv": mpmath.erfinv,
    "hypot": lambda x, y: mpmath.sqrt(x * x + y * y),
    "logaddexp": lambda x, y: mpmath.log(mpmath.exp(x) + mpmath.exp(y)),
}


def _points(op: Operator) -> list[tuple[str, ...]]:
    """Points inside every operator's domain (decimal strings, exact in binary)."""
    if op.name == "acosh":
        return [("1.25",), ("3.5",)]
    if op.name in ("log", "sqrt", "log2", "rsqrt"):
        return [("0.75",), ("3.5",)]
    if op.arity[0] == 1:
        return [("0.75",), ("-0.375",)]
    if op.variadic:
        return [("0.75", "1.25", "-0.25")]
    return [("0.75", "1.25"), ("1.5", "0.5")]


def test_every_operator_has_its_rules_and_a_kernel_or_a_reason_in_every_back_end():
    assert set(TRUTH) == set(OPERATORS), "the truth table above lists every operator once"
    for name, op in OPERATORS.items():
        assert op.name == name and op.domain and callable(op.mpmath)
        assert 1 <= op.arity[0] <= op.arity[1]
        if op.arb is not None:
            if op.pointwise:
                assert callable(op.arb.series), name
            else:
                assert callable(op.arb.jet) and callable(op.arb.line), name
        for backend in backends.names():
            kernel = op.kernels.get(backend)
            assert isinstance(kernel, (Kernel, NoKernel)), f"{name} has nothing for {backend}"
            if isinstance(kernel, NoKernel):
                assert kernel.reason.strip(), f"{name} in {backend}: a reason is required"
            else:
                assert kernel.path.split(".")[0].isidentifier(), kernel.path


def test_the_parser_knows_exactly_the_table_s_operators_and_their_arities():
    names = {"x", "y", "z"}
    for name, op in OPERATORS.items():
        low, high = op.arity
        args = ", ".join(["x", "y", "z", "x", "y", "z", "x", "y"][:low])
        node = ex.parse(f"{name}({args})", names)
        assert node == ex.Call(name, tuple(ex.Var(a) for a in args.split(", ")))
        with pytest.raises(ex.ExpressionError):
            ex.parse(f"{name}({', '.join(['x'] * (high + 1))})", names)
    with pytest.raises(ex.ExpressionError, match="unknown function"):
        ex.parse("cbrt(x)", names)


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_the_mpmath_rule_is_the_operator_s_value_and_slope(name):
    """Order 0 against the formula above, order 1 against mpmath's own numerical
    derivative of it (at 50 digits, far from any kink)."""
    op = OPERATORS[name]
    from harness.reference.jets import evaluate, space_for

    for point in _points(op):
        names = ("x", "y", "z")[: len(point)]
        node = ex.parse(f"{name}({', '.join(names)})", set(names))
        with mpmath.workdps(50):
            xs = [mpmath.mpf(p) for p in point]
            partials = ((), ("x",))
            space = space_for(partials, names)
            jet = evaluate(node, dict(zip(names, xs)), space)
            value, slope = (space.derivative(jet, p) for p in partials)
            truth = TRUTH[name](*xs)
            rest = xs[1:]
            want = mpmath.diff(lambda t, rest=rest: TRUTH[name](t, *rest), xs[0])
            assert mpmath.almosteq(value, truth, rel_eps=mpmath.mpf(10) ** -45), (name, point)
            assert mpmath.almosteq(slope, want, rel_eps=mpmath.mpf(10) ** -30), (name, point)


@pytest.mark.parametrize(
    "name", sorted(n for n, op in OPERATORS.items() if op.arb and op.pointwise)
)
def test_the_arb_rule_contains_the_mpmath_coefficients(name):
    """Two libraries, two rules: every ball (orders 0-4) holds mpmath's coefficient."""
    op = OPERATORS[name]
    for (point,) in _points(op):
        with mpmath.workdps(60):
            exact = op.mpmath(mpmath.mpf(point), 4)
        balls = pointwise_coefficients(op.arb, arb(point), 4)
        for k, (ball, c) in enumerate(zip(balls, exact)):
            assert ball.rad() < 1e-10 * max(abs(float(c)), 1e-300) + 1e-290, (name, k)
            assert ball.contains(arb(mpmath.nstr(c, 60))) or (
                ball - arb(mpmath.nstr(c, 60))
            ).contains(0), (
                name,
                point,
                k,
            )


def test_tanh_at_zero_is_its_taylor_series():
    """tanh t = t - t^3/3 + 2 t^5/15 - ...: the even coefficients exactly 0 (the series
    form cannot decide at 0, so the rule gives them exactly)."""
    balls = pointwise_coefficients(OPERATORS["tanh"].arb, arb(0), 5)
    assert all(b.is_exact() and b.is_zero() for b in balls[::2])
    assert balls[1] == arb(1)
    for ball, (p, q) in zip(balls[3::2], [(-1, 3), (2, 15)]):
        assert ball.contains(arb(p) / q) and ball.rad() < 1e-15


def test_a_kernel_is_written_and_resolved_from_one_text():
    gelu = Kernel("tf.nn.gelu", "approximate=False")
    assert gelu.source("S") == "(lambda x: tf.nn.gelu(x, approximate=False))"
    lse = Kernel("torch.logsumexp", "dim=0", stacked=True)
    assert lse.source("S(a)") == "(lambda *a: torch.logsumexp(S(a), dim=0))"
    first = Kernel("m.f", "axis=0", stacked=True, first=True)
    assert first.source("S") == "(lambda *a: m.f(S, axis=0)[0])"
    assert Kernel("tf.exp").source("S") == "tf.exp"

    modules = {"math": math, "np": np}
    assert resolve_kernel("exp", Kernel("math.exp"), modules, None) is math.exp
    rounded = resolve_kernel("round", Kernel("np.round", "decimals=2"), modules, None)
    assert rounded(1.23456) == 1.23
    stack = lambda *a: np.stack(a)  # noqa: E731
    total = resolve_kernel("sum", Kernel("np.sum", "axis=0", stacked=True), modules, stack)
    assert list(total(np.array([1.0, 2.0]), np.array([10.0, 20.0]))) == [11.0, 22.0]
    head = resolve_kernel(
        "cumsum", Kernel("np.cumsum", "axis=0", stacked=True, first=True), modules, stack
    )
    assert list(head(np.array([1.0, 2.0]), np.array([10.0, 20.0]))) == [1.0, 2.0]


def test_an_operator_without_a_kernel_is_not_applicable_with_its_reason():
    absent = resolve_kernel("erfinv", NoKernel("no such kernel in this framework"), {}, None)
    with pytest.raises(NotApplicable, match=r"erfinv\(\) has no kernel here: no such kernel"):
        absent(1.0)
    missing = resolve_kernel("fake", Kernel("math.no_such_function"), {"math": math}, None)
    with pytest.raises(
        NotApplicable, match="math.no_such_function is not in the installed version"
    ):
        missing(1.0)


@pytest.mark.slow
@pytest.mark.parametrize("backend", backends.names())
def test_each_framework_kernel_is_the_operator_it_is_listed_as(backend):
    """Every kernel the table names, called by the back end in float64, gives the value
    written above: a kernel listed under the wrong operator fails here. The tolerance is
    1e-6, not float64's: TensorFlow 2.21's ``tf.nn.gelu`` casts its Python-float constants
    (``0.7071067811865476``, ``0.044715``) to the dtype through float32, so its float64
    values are float32-accurate (0.5800294828183657 at 0.75, against 0.5800294857173488)."""
    spec = backends.get(backend)
    backends.load(backend)  # the back end's own set-up (JAX's 64-bit floats)
    build = importlib.import_module(spec.module.rsplit(".", 1)[0] + ".build")
    dtype = build.DTYPES["float64"] if hasattr(build, "DTYPES") else "float64"
    for name, op in OPERATORS.items():
        if not isinstance(op.kernels[backend], Kernel):
            continue
        for point in _points(op):
            names = ("x", "y", "z")[: len(point)]
            node = ex.parse(f"{name}({', '.join(names)})", set(names))
            env = {n: build.KERNELS.constant(float(p), dtype) for n, p in zip(names, point)}
            got = float(np.asarray(build.compile_expression(node, env, dtype)))
            with mpmath.workdps(30):
                truth = float(TRUTH[name](*(mpmath.mpf(p) for p in point)))
            assert math.isclose(got, truth, rel_tol=1e-6, abs_tol=1e-300), (backend, name, point)
