"""Certified reference values: an Arb ball per partial, narrow enough to decide every dtype.

:func:`certify_point` evaluates the case's reference over ball jets
(:mod:`harness.reference.balls`) at doubling precisions, 128 bits up to
:data:`MAX_BITS`, until every partial's ball rounds to one value in every format
(``round(lower) == round(upper)``: the value, or 0, or ±inf, certainly) or the
precision runs out. The ball's bounds are kept exactly (as mpf). A case whose reference
is a registered implementation (an ODE, a solver) is not certified here: its own
verification stands.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import mpmath
from flint import arb

from harness.cases.model import Case, Partial
from harness.numerics.floats import FORMATS, round_mpf
from harness.reference import balls
from harness.reference.jets import space_for
from harness.reference.series import evaluate_series

__all__ = ["MAX_BITS", "UNDEFINED", "Ball", "certify_point", "decides", "mpf_of"]

#: Reasons no precision would change: no value exists, or no kernel to compute one.
_FINAL = ("not defined here", "no derivative exists here", "Arb: no Arb kernel")
#: Reasons that say the true value does not exist (these rows are not to be certified).
UNDEFINED = _FINAL[:2]

#: The highest precision tried, in bits (the doubling starts at 128).
MAX_BITS = 4096
_START_BITS = 128


@dataclass(frozen=True)
class Ball:
    """The interval ``[lower, upper]`` (exact mpf bounds) that holds the true value; or,
    where none was found, ``lower is None`` and ``reason`` says why."""

    lower: mpmath.mpf | None
    upper: mpmath.mpf | None
    bits: int
    reason: str = ""

    def contains(self, value) -> bool:
        return self.lower is not None and self.lower <= value <= self.upper

    def centre(self) -> mpmath.mpf:
        """The midpoint, exactly."""
        return mpmath.ldexp(mpmath.fadd(self.lower, self.upper, exact=True), -1)


def mpf_of(x: arb) -> mpmath.mpf:
    """An exact arb (zero radius) as an exact mpf."""
    man, exp = x.man_exp()
    return mpmath.mp.make_mpf(mpmath.libmp.from_man_exp(int(man), int(exp)))


def decides(ball: Ball, fmt) -> bool:
    """Whether every value in the ball rounds to the same value of ``fmt``."""
    if ball.lower is None:
        return False
    return round_mpf(ball.lower, fmt) == round_mpf(ball.upper, fmt)


def certify_point(
    case: Case,
    point: dict[str, float],
    partials: Sequence[Partial],
    formats: Sequence[str] = tuple(FORMATS),
) -> dict[Partial, Ball]:
    """A ball per partial at ``point`` (the inputs as the dtype holds them, exactly)."""
    spec = case.reference
    if spec.registered:
        reason = "a registered reference: verified by its own method, not certified"
        return {p: Ball(None, None, 0, reason) for p in partials}
    fmts = [FORMATS[f] for f in formats]
    names = case.input_names
    jet_partials = tuple(p for p in partials if p not in spec.derivatives)
    space = space_for(jet_partials or ((),), names)
    value_space = space_for(((),), names)
    done: dict[Partial, Ball] = {}
    last: dict[Partial, Ball] = {}
    bits = _START_BITS
    while len(done) < len(partials) and bits <= MAX_BITS:
        with balls.working_bits(bits):
            pt = {k: arb(float(v)) for k, v in point.items()}
            found = _evaluate(case, pt, partials, jet_partials, space, value_space, bits)
        for p in partials:
            if p in done:
                continue
            ball = found[p]
            last[p] = ball
            if ball.lower is not None and all(decides(ball, f) for f in fmts):
                done[p] = ball
            elif ball.lower is None and ball.reason.startswith(_FINAL):
                done[p] = ball  # nothing a higher precision would change
        bits *= 2
    for p in partials:
        if p not in done:
            ball = last[p]
            reason = ball.reason or f"the ball is still too wide at {MAX_BITS} bits"
            done[p] = Ball(ball.lower, ball.upper, ball.bits, reason)
    return done


def _evaluate(case, pt, partials, jet_partials, space, value_space, bits) -> dict:
    out: dict[Partial, Ball] = {}
    spec = case.reference
    if jet_partials:
        moving = [v for v, d in zip(space.names, space.max_degree) if d]
        try:
            if len(moving) == 1:
                # One variable: flint's power series, one C call per operation.
                coeffs = evaluate_series(spec.expression, pt, moving[0], space.total)
                for p in jet_partials:
                    out[p] = _ball(coeffs[len(p)] * math.factorial(len(p)), bits)
            else:
                jet = balls.evaluate(spec.expression, pt, space)
                for p in jet_partials:
                    out[p] = _ball(jet.derivative(p), bits)
        except balls.Undefined as exc:
            out.update({p: Ball(None, None, bits, str(exc)) for p in jet_partials})
        except balls.Unsupported as exc:
            out.update({p: Ball(None, None, bits, f"Arb: {exc}") for p in jet_partials})
    for p in partials:
        if p in jet_partials:
            continue
        try:
            out[p] = _ball(balls.evaluate(spec.derivatives[p], pt, value_space).value, bits)
        except balls.Undefined as exc:
            out[p] = Ball(None, None, bits, str(exc))
        except balls.Unsupported as exc:
            out[p] = Ball(None, None, bits, f"Arb: {exc}")
    return out


def _ball(x: arb, bits: int) -> Ball:
    if x.is_nan():
        return Ball(None, None, bits, "no derivative exists here (a kink or a switch point)")
    if not x.is_finite():
        return Ball(None, None, bits, "")
    return Ball(mpf_of(x.lower()), mpf_of(x.upper()), bits)
