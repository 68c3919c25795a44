"""The repair's rewrite search (:mod:`harness.repair.saturate`, egglog): the seeds' stable
forms found from their naive ones, every form found equal to the original by mpmath's own
functions, each limit reached said, what the search cannot take refused by name."""

from __future__ import annotations

import mpmath
import pytest

from harness.cases import expressions as ex
from harness.repair.saturate import saturate
from tests.mp_eval import mp_value


def _forms(text: str, names: set[str], **limits):
    found = saturate(ex.parse(text, names), **limits)
    return found, {ex.unparse(f) for f in found.forms}


def _same_function(original: str, forms, points):
    """Each form's value equals the original's at every point (mpmath, 50 digits)."""
    with mpmath.workdps(50):
        for form in forms:
            for point in points:
                at = {n: mpmath.mpf(v) for n, v in point.items()}
                want, got = mp_value(original, at), mp_value(ex.unparse(form), at)
                assert abs(got - want) <= mpmath.mpf(10) ** -40 * abs(want), (form, point)


def test_seed_000_s_square_in_the_denominator_becomes_the_answer_s_quotient():
    # explicit_square's rule for b, dy * a / b**2: the accepted answer's (a/b)/b.
    found, texts = _forms("dy * a / b**2", {"dy", "a", "b"})
    assert ex.unparse(ex.parse("dy * a / b / b", {"dy", "a", "b"})) in texts
    assert "((dy * a) / (b ** 2))" in texts  # the original is one of them
    assert found.stopped in {"saturated", "iterations"} and found.nodes > 0
    points = [{"dy": 1.0, "a": 3.5, "b": 0.25}, {"dy": 2.0, "a": 1e-3, "b": 7.0}]
    _same_function("dy * a / b**2", found.forms, points)


def test_seed_002_s_naive_softplus_reaches_the_kernel_and_its_stable_form():
    found, texts = _forms("log(1 + exp(x))", {"x"})
    assert {"softplus(x)", "log1p(exp(x))", "(maximum(x, 0) + log1p(exp((-abs(x)))))"} <= texts
    _same_function("log(1 + exp(x))", found.forms, [{"x": 100.0}, {"x": -3.25}, {"x": 0.5}])


def test_the_logistic_solution_s_exponential_form_reaches_the_reciprocal_form():
    # exp(r t) overflows in y0 exp(r t) / (1 - y0 + y0 exp(r t)); the reciprocal form
    # divides by it instead: 1 / (1 + (1/y0 - 1) / exp(r t)).
    original = "y0 * exp(r*t) / (1 - y0 + y0 * exp(r*t))"
    names = {"y0", "r", "t"}
    found, texts = _forms(original, names)
    wanted = {ex.unparse(ex.parse(f"{outer}(1 + ({inverse} - 1) / exp(r * t))", names))
              for inverse in ("1 / y0", "reciprocal(y0)")
              for outer in ("1 / ", "reciprocal")}  # fmt: skip
    assert wanted & texts, sorted(texts)
    # And the case's sigmoid form, sigmoid(r t - log(1/y0 - 1)), through the sigmoid of
    # a negated argument (1 / (1 + exp(u)) = sigmoid(-u)).
    sigmoid = ex.unparse(ex.parse("sigmoid(-(log(reciprocal(y0) - 1) - r * t))", names))
    assert sigmoid in texts, sorted(texts)
    points = [{"y0": 0.25, "r": 0.5, "t": 3.0}, {"y0": 0.9, "r": 2.0, "t": 0.125}]
    _same_function(original, found.forms, points)


def test_every_limit_reached_is_said():
    found, _ = _forms("log(1 + exp(x))", {"x"}, iterations=1)
    assert (found.iterations, found.stopped) == (1, "iterations")
    assert found.limits == {"iterations": 1, "nodes": 20_000, "seconds": 10.0}
    found, _ = _forms("log(1 + exp(x))", {"x"}, max_nodes=5)
    assert found.stopped == "nodes" and found.nodes >= 5
    found, _ = _forms("log(1 + exp(x))", {"x"}, seconds=0.0)
    assert found.stopped == "seconds" and found.iterations == 1
    found, _ = _forms("log(1 + exp(x))", {"x"}, alternatives=3)
    assert len(found.forms) == 3


def test_what_the_search_cannot_take_is_refused_by_name():
    node = ex.parse("logsumexp(x, x, x)", {"x"})
    with pytest.raises(ValueError, match=r"logsumexp\(x, x, x\)"):
        saturate(node)
