"""The certified (Arb) rules of the operators, checked where they are hardest: tiny and
huge arguments, left of the poles of Γ, at kinks, on branch cuts, with exponentials that
would overflow a float. Expected values come from mpmath, independently of the rules:
``mpmath.taylor`` of a textbook formula written here (one-argument operators), and the
mpmath jet rules at 60 digits (several arguments: mixed partials to order 4)."""

from __future__ import annotations

import mpmath
import pytest
from flint import arb

from harness.cases import expressions as ex
from harness.operators import OPERATORS
from harness.operators.arb import Undefined
from harness.reference import balls, jets
from harness.reference.balls import pointwise_coefficients, working_bits
from harness.reference.series import evaluate_series

_SCALE, _ALPHA = "1.0507009873554804934193349852946", "1.6732632423543772848170429916717"

#: Textbook formulas, independent of the operator table's rules.
FORMULA = {
    "asinh": lambda x: mpmath.log(x + mpmath.sqrt(x * x + 1)),
    "acosh": lambda x: mpmath.log(x + mpmath.sqrt(x * x - 1)),
    "atanh": lambda x: mpmath.log((1 + x) / (1 - x)) / 2,
    "elu": lambda x: x if x > 0 else mpmath.exp(x) - 1,
    "selu": lambda x: (
        mpmath.mpf(_SCALE) * (x if x > 0 else mpmath.mpf(_ALPHA) * (mpmath.exp(x) - 1))
    ),
    "gelu": lambda x: x * (1 + mpmath.erf(x / mpmath.sqrt(2))) / 2,
    "gelu_tanh": lambda x: (
        x * (1 + mpmath.tanh(mpmath.sqrt(2 / mpmath.pi) * (x + mpmath.mpf("0.044715") * x**3))) / 2
    ),
    "lgamma": lambda x: mpmath.log(abs(mpmath.gamma(x))),
    "digamma": lambda x: mpmath.diff(lambda t: mpmath.log(abs(mpmath.gamma(t))), x),
    "exp2": lambda x: mpmath.exp(x * mpmath.log(2)),
    "log2": lambda x: mpmath.log(x) / mpmath.log(2),
    "square": lambda x: x**2,
    "reciprocal": lambda x: x**-1,
    "rsqrt": lambda x: x ** mpmath.mpf(-0.5),
    "silu": lambda x: x * mpmath.exp(x) / (1 + mpmath.exp(x)),
    "mish": lambda x: x * mpmath.tanh(mpmath.log(1 + mpmath.exp(x))),
    "softsign": lambda x: x / (1 - x) if x < 0 else x / (1 + x),
    "sinc": lambda x: mpmath.sin(mpmath.pi * x) / (mpmath.pi * x) if x else mpmath.mpf(1),
    # erf's inverse by Newton's method from mpmath's own, an independent route
    "erfinv": lambda x: mpmath.findroot(lambda y: mpmath.erf(y) - x, mpmath.erfinv(x)),
}

#: Points (exact binary fractions) where each rule has to work hardest.
POINTS = {
    "asinh": ["0.75", "-0.375", "0.0009765625", "-1048576.5"],
    "acosh": ["1.25", "3.5", "1.0009765625", "1048576.5"],
    "atanh": ["0.75", "-0.375", "0.9990234375", "-0.0009765625"],
    "elu": ["0.75", "-0.375", "-40.5"],
    "selu": ["0.75", "-0.375", "-40.5"],
    "gelu": ["0.75", "-0.375", "-12.5", "6.5"],
    "gelu_tanh": ["0.75", "-0.375", "-12.5", "6.5"],
    "lgamma": ["0.75", "1", "2", "-0.375", "-2.5", "-7.75", "0.0009765625", "1024.5"],
    "digamma": ["0.75", "-0.375", "-2.5", "-7.75", "0.0009765625", "1024.5"],
    "exp2": ["0.75", "-0.375", "-60.5", "100.25"],
    "log2": ["0.75", "1", "3.5", "1048576.5"],
    "square": ["0.75", "-1048576.5"],
    "reciprocal": ["0.75", "-0.375", "0.0009765625"],
    "rsqrt": ["0.75", "3.5", "0.0009765625"],
    "silu": ["0.75", "-0.375", "-40.5"],
    "mish": ["0.75", "-0.375", "-40.5", "12.5"],
    "softsign": ["0.75", "-0.375", "-1048576.5"],
    # sinc near 0 by its series there, elsewhere a quotient; 0.375 is close to the switch
    "sinc": ["0.375", "-0.0009765625", "0.5", "-1.25", "1024.75"],
    "erfinv": ["0.75", "-0.375", "0.0009765625", "0.9990234375"],
}


@pytest.mark.parametrize("name,point", [(n, p) for n, ps in POINTS.items() for p in ps])
def test_the_arb_ball_holds_the_textbook_taylor_coefficients(name, point):
    rule = OPERATORS[name].arb
    with working_bits(256):
        got = pointwise_coefficients(rule, arb(point), 4)
    with mpmath.workdps(160):  # the formulas cancel (1 + tanh z at z << 0): 100 spare digits
        want = mpmath.taylor(FORMULA[name], mpmath.mpf(point), 4)
    for k, (ball, c) in enumerate(zip(got, want)):
        slack = arb(mpmath.nstr(abs(c) * mpmath.mpf(10) ** -30 + mpmath.mpf(10) ** -40, 5))
        assert (ball - arb(mpmath.nstr(c, 50))).abs_lower() <= slack.upper(), (name, point, k)
        assert ball.rad() <= 1e-30 * abs(float(c)), (name, point, k)


@pytest.mark.parametrize(
    "name,point,want",
    [
        ("elu", "0", [0, 1, None, None, None]),  # expm1 and the identity share f, f'
        ("selu", "0", [0, None, None, None, None]),  # slopes scale·alpha and scale differ
        ("acosh", "1", [0, None, None, None, None]),  # the slope 1/sqrt(x² - 1) is infinite
        ("softsign", "0", [0, 1, None, None, None]),  # x/(1 - x) and x/(1 + x): f'' ±2
    ],
)
def test_at_a_kink_only_the_existing_orders_have_a_ball(name, point, want):
    """``None``: NaN, no derivative. Composed (``f(3 x)`` at the same point) the orders
    that exist keep their value, scaled by 3^k, and NaN stays where it was."""
    got = pointwise_coefficients(OPERATORS[name].arb, arb(point), 4)
    assert [None if b.is_nan() else int(b.unique_fmpz()) for b in got] == want
    inner = "1 + 3*x" if name == "acosh" else "3*x"  # the kink at x = 0 either way
    space = jets.JetSpace(("x",), {"x": 4}, 4)
    jet = balls.evaluate(ex.parse(f"{name}({inner})", {"x"}), {"x": arb(0)}, space)
    for k, w in enumerate(want):
        c = jet.c[space.position[(k,)]]
        assert c.is_nan() if w is None else c == w * 3**k, (name, k)


@pytest.mark.parametrize(
    "expression,point",
    [
        ("lgamma(x)", "0"),
        ("lgamma(x)", "-3"),
        ("digamma(x)", "-1"),
        ("atanh(x)", "1"),
        ("acosh(x)", "0.5"),
    ],
)
def test_where_no_value_exists_the_rule_says_so(expression, point):
    node = ex.parse(expression, {"x"})
    with pytest.raises(Undefined, match="not defined here"):
        balls.evaluate(node, {"x": arb(point)}, jets.JetSpace(("x",), {"x": 2}, 2))


NARY = [
    ("atan2(x, y)", [("0.75", "1.25"), ("1.5", "0.5"), ("-0.375", "-2.5"), ("0", "2")]),
    ("atan2(x, y)", [("0", "-1"), ("0", "0")]),  # the branch cut, the origin
    ("xlogy(x, y)", [("0.75", "1.25"), ("-2.5", "0.0009765625"), ("0", "0.5")]),
    ("xlogy(x, y)", [("0", "0"), ("0", "-1")]),  # x = 0: the value 0, no derivative
    ("xlog1py(x, y)", [("0.75", "0.25"), ("1.5", "-0.75"), ("0", "-0.5"), ("0", "-1")]),
    ("logsumexp(x, y)", [("0.75", "1.25"), ("1000.5", "-1000.5"), ("-0.375", "-0.375")]),
    ("logsumexp(x, y, 0.5)", [("0.75", "1.25"), ("-800.25", "700.5")]),
    ("hypot(x, y)", [("0.75", "1.25"), ("-1000.5", "0.0009765625"), ("0", "-2.5"), ("0", "0")]),
    ("logaddexp(x, y)", [("0.75", "1.25"), ("1000.5", "-1000.5")]),
    ("log_softmax(x, y, 0.5)", [("0.75", "1.25"), ("-800.25", "700.5"), ("30.5", "-2")]),
]


@pytest.mark.parametrize(
    "expression,point", [(e, p) for e, points in NARY for p in points], ids=str
)
def test_several_arguments_mixed_partials_hold_the_mpmath_jets(expression, point):
    """Every coefficient ∂^α f/α! with |α| <= 4 over (x, y): the ball (by multivariate ball
    jets) holds the mpmath jet rule's value at 60 digits, or both say no derivative."""
    node = ex.parse(expression, {"x", "y"})
    space = jets.JetSpace(("x", "y"), {"x": 4, "y": 4}, 4)
    with working_bits(256):
        got = balls.evaluate(node, {"x": arb(point[0]), "y": arb(point[1])}, space)
    with mpmath.workdps(60):
        want = jets.evaluate(node, {"x": mpmath.mpf(point[0]), "y": mpmath.mpf(point[1])}, space)
    _same(got.c, want.c, (expression, point))
    for name in ("x", "y"):  # the one-variable series path, where it applies
        with working_bits(256):
            line = evaluate_series(node, {"x": arb(point[0]), "y": arb(point[1])}, name, 4)
        want_line = [want.c[space.position[(k, 0) if name == "x" else (0, k)]] for k in range(5)]
        _same(line, want_line, (expression, point, name))


def _same(balls_, values, where) -> None:
    for i, (ball, c) in enumerate(zip(balls_, values)):
        if mpmath.isnan(c):
            assert ball.is_nan(), (where, i, ball)
            continue
        with mpmath.workdps(60):
            slack = abs(c) * mpmath.mpf(10) ** -40 + mpmath.mpf(10) ** -60
        assert (ball - arb(mpmath.nstr(c, 55))).abs_lower() <= arb(mpmath.nstr(slack, 5)).upper(), (
            where,
            i,
            ball,
            c,
        )
        # Tight, or (a coefficient that is 0: logsumexp's third at x = y) tiny.
        assert ball.rad() <= 1e-30 * abs(float(c)) + 1e-60, (where, i, ball)


def test_tanh_at_zero_has_every_order_the_finite_difference_model_asks_for():
    """t - t³/3 + 2t⁵/15 - 17t⁷/315 + 62t⁹/2835: to order 9 at exactly 0 (the census's
    tanh at 0 asked for order 6 and found the rule stopped at 5)."""
    exact = {1: (1, 1), 3: (-1, 3), 5: (2, 15), 7: (-17, 315), 9: (62, 2835)}
    with working_bits(128):
        balls = pointwise_coefficients(OPERATORS["tanh"].arb, arb(0), 9)
        for k, ball in enumerate(balls):
            if k in exact:
                p, q = exact[k]
                assert (ball - arb(p) / q).contains(0) and ball.rad() < 1e-30, k
            else:
                assert ball.is_exact() and ball.is_zero(), k


def test_erfinv_s_value_alone_and_near_one():
    """The census found erfinv's rule asked for its value alone (series reversion needs a
    linear term) and at 1 - 2^-53: both give balls holding mpmath's erfinv."""
    rule = OPERATORS["erfinv"].arb
    for point, n in (("0.75", 0), ("0.99999999999999988897769753748434595763683319091796875", 2)):
        with mpmath.workdps(80):
            want = mpmath.nstr(mpmath.erfinv(mpmath.mpf(point)), 70)
        with working_bits(256):
            got = pointwise_coefficients(rule, arb(point), n)
            assert len(got) == n + 1
            assert (got[0] - arb(want)).abs_upper() < 1e-60


ZERO_BASE = [
    # (expression, point, {partial: value or None}) from the closed forms written here:
    # ∂a^i a^y = y(y-1)...(y-i+1) a^(y-i); each ∂y brings a factor log a.
    ("x ** 2.5", {"x": "0"}, {(): 0, ("x",): 0, ("x", "x"): 0, ("x",) * 3: None}),
    ("pow(a, y)", {"a": "0", "y": "1"}, {(): 0, ("a",): 1, ("y",): 0, ("a", "y"): None,
                                          ("a", "a"): 0, ("y", "y"): 0}),
    ("pow(a, y)", {"a": "0", "y": "2"}, {("a", "a"): 2, ("a", "y"): 0, ("a", "a", "y"): None,
                                          ("a", "a", "a"): 0}),
    ("pow(a, y)", {"a": "0", "y": "0.5"}, {(): 0, ("y",): 0, ("a",): None}),
    ("pow(0, y)", {"y": "1.5"}, {(): 0, ("y",): 0, ("y", "y", "y"): 0}),
]  # fmt: skip


@pytest.mark.parametrize("expression,point,want", ZERO_BASE, ids=lambda v: str(v)[:20])
def test_a_real_power_at_a_zero_base_has_its_one_sided_limits(expression, point, want):
    """Issue 27: ``x ** 2.5`` at 0 and ``a ** y`` at ``a = 0`` have a value (0) and the
    derivatives that exist as limits from above (``∂a = 1`` at ``y = 1``, every ``∂y`` 0);
    the others are NaN (no derivative), in both engines alike. The pure-``a`` values are
    also mpmath's one-sided numerical derivatives of the power."""
    names = tuple(sorted(point))
    node = ex.parse(expression, set(names))
    space = jets.JetSpace(names, {n: 3 for n in names}, 3)
    got = balls.evaluate(node, {k: arb(v) for k, v in point.items()}, space)
    with mpmath.workdps(40):
        mp = jets.evaluate(node, {k: mpmath.mpf(v) for k, v in point.items()}, space)
    for partial, value in want.items():
        ball, coefficient = got.derivative(partial), space.derivative(mp, partial)
        if value is None:
            assert ball.is_nan() and mpmath.isnan(coefficient), partial
        else:
            assert ball == value and coefficient == value, (partial, ball, coefficient)
    base = next((n for n in names if n in ("x", "a")), None)
    if base is None:
        return
    y0 = mpmath.mpf(point.get("y", "2.5"))
    for k in range(1, 3):
        partial = (base,) * k
        if want.get(partial) is None:
            continue
        with mpmath.workdps(40):
            one_sided = mpmath.diff(lambda t: mpmath.power(t, y0), 0, k, direction=1)
        assert abs(one_sided - want[partial]) < 1e-6, (partial, one_sided)


def test_no_value_for_zero_to_a_power_that_is_not_positive():
    space = jets.JetSpace(("a", "y"), {"a": 1, "y": 1}, 1)
    for y in ("0", "-1.5"):
        with pytest.raises(Undefined, match="0 to the power"):
            balls.evaluate(ex.parse("pow(a, y)", {"a", "y"}), {"a": arb(0), "y": arb(y)}, space)


def test_the_reference_row_says_a_zero_base_s_derivatives_are_one_sided(tmp_path):
    """``x ** 2.5`` at 0 through the reference stage: f, f', f'' certified 0 with the note
    that they are limits from above; f''' has no value ("no derivative exists")."""
    import pandas as pd

    from harness.cli import main

    from .conftest import write_case

    path = write_case(
        tmp_path,
        "zero_power",
        """\
        title: a real power at a zero base
        source: test
        inputs:
          x: {values: [0.0, 4.0]}
        function: x ** 2.5
        derivatives: {wrt: x, orders: [1, 2, 3]}
        implementations:
          plain: {expression: x ** 2.5}
        dtypes: [float64]
        """,
    )
    assert main(["reference", str(path), "--results", str(tmp_path / "results")]) == 0
    table = pd.read_parquet(tmp_path / "results" / "zero_power" / "reference.parquet")
    at_zero = table[table.x == 0].set_index("partial")
    for partial in ("", "x", "xx"):
        row = at_zero.loc[partial]
        assert row.certified and row.reference_rounded == 0.0
        assert row.ball_note.startswith("one-sided"), row.ball_note
    assert not at_zero.loc["xxx"].reliable
    assert "no derivative exists" in at_zero.loc["xxx"].message
    away = table[table.x == 4].set_index("partial")
    assert (away.ball_note == "").all() and away.certified.all()
    assert away.loc["x"].reference_rounded == 2.5 * 4**1.5  # 20, exactly
