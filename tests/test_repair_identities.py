"""The repair's rule set (:mod:`harness.repair.identities`): every identity is in the case
language, holds by the certified reference (Arb jets to order 4) and, independently, by
mpmath's own functions and numerical derivatives; the check catches a wrong identity,
also one wrong only in a derivative."""

from __future__ import annotations

import ast

import mpmath
import pytest

from harness.operators import OPERATORS
from harness.repair.identities import IDENTITIES, Identity, check_identity, parsed, sample
from tests.mp_eval import mp_value as _mp

IDS = [i.name for i in IDENTITIES]


def test_every_identity_is_in_the_case_language_over_the_operator_table():
    assert len(set(IDS)) == len(IDS)  # each written once
    for identity in IDENTITIES:
        parsed(identity)  # raises for text outside the language or an undeclared name
        for side in (identity.lhs, identity.rhs):
            calls = {n.func.id for n in ast.walk(ast.parse(side)) if isinstance(n, ast.Call)}
            assert calls <= set(OPERATORS), (identity.name, calls - set(OPERATORS))
        assert identity.why, identity.name


@pytest.mark.parametrize("identity", IDENTITIES, ids=IDS)
def test_each_identity_holds_by_the_certified_reference_to_order_4(identity):
    found = check_identity(identity)
    assert found.apart == (), found.apart
    # Not vacuous: most points decided (a ball straddling nothing, narrow enough to tell).
    assert found.decided >= 20, (found.decided, found.undecided[:3])


@pytest.mark.parametrize("identity", IDENTITIES, ids=IDS)
def test_each_identity_holds_by_mpmath_s_own_functions_and_derivatives(identity):
    names = identity.names
    with mpmath.workdps(60):
        for point in sample(identity.domain, 4, seed=7):
            at = {n: mpmath.mpf(v) for n, v in point.items()}
            value = abs(_mp(identity.lhs, at))
            for order in (0, 1, 2):
                for name in names:

                    def side(text, name=name, at=at):
                        return lambda t: _mp(text, {**at, name: t})

                    left = mpmath.diff(side(identity.lhs), at[name], order)
                    right = mpmath.diff(side(identity.rhs), at[name], order)
                    # mpmath.diff's noise is relative to the function's own size.
                    scale = max(abs(left), abs(right), value, mpmath.mpf(10) ** -300)
                    assert abs(left - right) <= mpmath.mpf(10) ** -20 * scale, (
                        identity.name,
                        point,
                        order,
                        name,
                        left,
                        right,
                    )


def test_the_check_catches_a_wrong_identity_and_one_wrong_in_a_derivative_only():
    wrong = Identity(
        "log_of_sum", "log(a + b)", "log(a) + log(b)", {"a": (1e-3, 1e3), "b": (1e-3, 1e3)}
    )
    found = check_identity(wrong)
    assert not found.holds and len(found.apart) >= 20
    assert "value lhs" in found.apart[0]
    flipped = Identity("sigmoid_flipped", "sigmoid(-x)", "sigmoid(x)", {"x": (1e-3, 10.0)})
    assert not check_identity(flipped).holds
    # exp and its Taylor polynomial of order 4 agree near 0 to x^5/120 (below 1e-56 for
    # x < 1e-11: the same 160-bit balls), but not their derivatives (the second: e^x and
    # 1 + x, apart by x^2/2): apart where only the jets can tell.
    taylor = Identity("exp_taylor", "exp(x)", "1 + x + x**2/2 + x**3/6 + x**4/24",
                      {"x": (1e-12, 1e-11)})  # fmt: skip
    found = check_identity(taylor)
    assert not found.holds and found.apart
    assert all("d^" in text for text in found.apart), found.apart[:2]


def test_the_sample_is_seeded_and_keeps_to_the_domain():
    domain = {"x": (-0.99, 1e6), "y": (1e-8, 5.0)}
    first, again = sample(domain, 32, 3), sample(domain, 32, 3)
    assert first == again and sample(domain, 32, 4) != first
    assert all(-0.99 <= p["x"] <= 1e6 and 1e-8 <= p["y"] <= 5.0 for p in first)
    assert sum(p["x"] < 0 for p in first) == 16  # both sides of 0, half each
