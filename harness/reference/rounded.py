"""One row's reference: the value rounded once to the dtype, and what the Arb ball and
mpmath's verification say of it (:func:`judge_reference`, used by
:class:`harness.reference.table.ReferenceStore`)."""

from __future__ import annotations

import math
from typing import NamedTuple

import mpmath

from harness.numerics.floats import round_mpf
from harness.reference.cache import KEEP_BITS
from harness.reference.certify import Ball, decides
from harness.reference.verify import DECIMAL_DIGITS

__all__ = ["NOT_RUN", "Rounded", "judge_reference"]

#: The mpmath entry of a (point, partial) where mpmath did not run.
NOT_RUN = ("", math.nan, 0, "")


class Rounded(NamedTuple):
    """One row's reference: ``oracle`` is ``arb`` where the ball decides the dtype's value,
    ``mpmath`` where only the two-precision verification stands (``ball_note`` says
    why), ``""`` where neither; ``cross_checked`` where mpmath verified the value too and
    it lies inside the ball."""

    reliable: bool
    mantissa: float
    exponent: int
    rounded: float
    decimal: str
    certified: bool = False
    oracle: str = ""
    ball_mid: str = ""
    ball_rad: str = ""
    ball_note: str = ""
    message: str = ""  # replaces the mpmath message where the ball changes the verdict
    cross_checked: bool = False


def judge_reference(value, ball: Ball | None, fmt, entry: tuple) -> Rounded:
    """The row's reference from mpmath's verified ``value`` (``None``: it did not verify,
    or did not run) and the Arb ``ball``."""
    note = "no Arb ball at this point" if ball is None else ball.reason
    mid = rad = ""
    ran = entry is not NOT_RUN
    if ball is not None and ball.bounded:
        centre = ball.centre()
        with mpmath.workprec(2 * KEEP_BITS + 16):
            mid = mpmath.nstr(centre, DECIMAL_DIGITS)
            rad = mpmath.nstr((ball.upper - ball.lower) / 2, 5)
        certified = ball.settled or decides(ball, fmt)
        if not certified:
            note = note or f"the ball does not decide the {fmt.name} value at {ball.bits} bits"
        if value is not None and _contradicts(ball, value, entry[1]):
            return Rounded(
                False, math.nan, 0, math.nan, "", False, "", mid, rad, note,
                f"reference bug: the mpmath value {mpmath.nstr(value, 20)} lies outside the "
                f"Arb ball [{mpmath.nstr(ball.lower, 20)}, {mpmath.nstr(ball.upper, 20)}]",
            )  # fmt: skip
        if certified:
            # Arb is the oracle; mpmath, where it ran, agreed (or could not verify: an
            # exact 0 by symmetry that two precisions cannot decide).
            message = (
                f"certified by Arb at {ball.bits} bits; mpmath: {entry[3]}"
                if (ran and value is None)
                else ""
            )
            # A certified ball's reason is a note on it (a one-sided limit), not a doubt.
            note = ball.reason
            if centre != 0 and ball.contains(0):
                # Every value in the ball rounds to 0 in the dtype and Arb cannot tell the
                # truth from 0 (a cancellation: d3/dx3 of logsumexp(x, x)): the reference
                # is 0, judged as an exact zero is, not the midpoint's sign and digits.
                centre = mpmath.mpf(0)
                note = "; ".join(filter(None, [note, f"the ball holds 0 (radius {rad})"]))
            return _rounded(centre, fmt, True, mid, rad, message, note, value is not None)
    if value is None:
        message = "" if ran else note
        return Rounded(False, math.nan, 0, math.nan, "", False, "", mid, rad, note, message)
    return _rounded(value, fmt, False, mid, rad, "", note)


def _contradicts(ball: Ball, value, digits: float) -> bool:
    """Whether the ball contradicts mpmath's claim: ``value`` right to the ``digits`` on
    which two precisions agreed, as the cache keeps it (:data:`KEEP_BITS`, rounded to
    odd). A ball narrower than that claim may exclude the value and still agree."""
    if ball.contains(value):
        return False
    with mpmath.workprec(2 * KEEP_BITS + 16):
        slack = abs(value) * max(
            mpmath.mpf(10) ** -min(digits, 1e6), mpmath.ldexp(1, 2 - KEEP_BITS)
        )
        return not (ball.lower - slack <= value <= ball.upper + slack)


#: The binary exponents a table stores (int64): a true value beyond 2**(2**62), such as
#: exp(1e308) or its derivatives, is stored at this bound. Every measure saturates long
#: before it (ulps at 2**64 - 1, relative errors at 2**100000): the verdict is the same.
_EXPONENT_BOUND = 2**62


def _rounded(value, fmt, certified, mid, rad, message, note="", checked=False) -> Rounded:
    with mpmath.workprec(2 * KEEP_BITS + 16):
        man, exp = mpmath.frexp(value)
        exp = max(-_EXPONENT_BOUND, min(int(exp), _EXPONENT_BOUND))
        return Rounded(
            True, float(man), exp, round_mpf(value, fmt), mpmath.nstr(value, DECIMAL_DIGITS),
            certified, "arb" if certified else "mpmath", mid, rad, note, message, checked,
        )  # fmt: skip
