"""Certified reference values: an Arb ball per partial, narrow enough to decide every dtype.

:func:`certify_points` evaluates the case's reference in ball arithmetic (partials in
one variable by a flint power series per variable, :mod:`harness.reference.series`;
mixed partials by ball jets over the variables they mix, :mod:`harness.reference.balls`)
at doubling precisions, 128 bits up to
:data:`MAX_BITS`, until every partial's ball rounds to one value in every format
(``round(lower) == round(upper)``: the value, or 0, or ±inf, certainly) or the
precision runs out. The points go through together, one precision at a time, and most
balls are decided at once by float64 arithmetic (:func:`_decided_fast`, a sufficient
test); only what it leaves goes through exact integer rounding (:func:`decides`). A
case whose reference is a registered implementation (an ODE, a solver) is not certified
here: its own verification stands.
"""

from __future__ import annotations

import contextlib
import gc
import math
from collections.abc import Sequence

import mpmath
import numpy as np
from flint import arb

from harness.cases.model import Case, Partial
from harness.numerics.floats import FORMATS, round_mpf, to_format
from harness.operators.arb import Undefined, Unsupported, take_notes
from harness.reference import balls
from harness.reference.jets import space_for
from harness.reference.series import evaluate_series

__all__ = [
    "MAX_BITS",
    "UNDEFINED",
    "Ball",
    "certify_point",
    "certify_points",
    "decides",
    "mpf_of",
    "no_cyclic_gc",
]

#: Reasons no precision would change: no value exists, or no kernel to compute one.
_FINAL = ("not defined here", "no derivative exists here", "Arb: no Arb kernel")
#: Reasons that say the true value does not exist (these rows are not to be certified).
UNDEFINED = _FINAL[:2]

#: The highest precision tried, in bits (the doubling starts at 128).
MAX_BITS = 4096
_START_BITS = 128
#: What an indeterminate Arb result (a NaN midpoint) says: a kink or switch point has no
#: derivative. Arb also gives one where an intermediate overflows its working precision
#: (``sinh`` at 6e280 is NaN at 128 and 256 bits, a 510-bit ball at 512), so it is final only at
#: a precision beyond the point's magnitude (:func:`_magnitude_bits`).
_INDETERMINATE = "no derivative exists here (a kink or a switch point)"
#: How far beyond the inputs' binary exponents an indeterminate result is believed.
_MAGNITUDE_MARGIN = 64


class Ball:
    """The interval ``[lower, upper]`` (exact bounds) that holds the true value; or, where
    none was found, ``lower is None`` and ``reason`` says why.

    The bounds are given as mpf, or as exact ``arb`` (converted to mpf when first read:
    most balls are only ever rounded to floats and cached).
    """

    __slots__ = ("_lo", "_hi", "bits", "reason", "lo64", "hi64")

    def __init__(self, lower, upper, bits: int, reason: str = ""):
        self._lo, self._hi = lower, upper
        self.bits, self.reason = bits, reason
        #: Bounds given as arb, rounded to float64 (flint: to nearest); NaN otherwise
        #: (mpmath's float() of an mpf truncates).
        self.lo64 = self.hi64 = math.nan
        if isinstance(lower, arb):
            self.lo64, self.hi64 = float(lower), float(upper)

    @property
    def bounded(self) -> bool:
        """Whether there is a ball (``lower``/``upper``), without converting it."""
        return self._lo is not None

    @property
    def settled(self) -> bool:
        """Whether the ball decides every format: :func:`certify_points` gives a ball that
        does not a reason."""
        return self._lo is not None and not self.reason

    def exact_bounds(self) -> tuple:
        """The bounds as given (exact arb or mpf), without converting them."""
        return self._lo, self._hi

    @property
    def lower(self) -> mpmath.mpf | None:
        if isinstance(self._lo, arb):
            self._lo = mpf_of(self._lo)
        return self._lo

    @property
    def upper(self) -> mpmath.mpf | None:
        if isinstance(self._hi, arb):
            self._hi = mpf_of(self._hi)
        return self._hi

    def contains(self, value) -> bool:
        return self.lower is not None and self.lower <= value <= self.upper

    def centre(self) -> mpmath.mpf:
        """The midpoint, exactly."""
        return mpmath.ldexp(mpmath.fadd(self.lower, self.upper, exact=True), -1)

    def __repr__(self) -> str:
        return f"Ball({self.lower!r}, {self.upper!r}, {self.bits}, {self.reason!r})"


def mpf_of(x: arb) -> mpmath.mpf:
    """An exact arb (zero radius) as an exact mpf."""
    man, exp = x.man_exp()
    return mpmath.mp.make_mpf(mpmath.libmp.from_man_exp(int(man), int(exp)))


def decides(ball: Ball, fmt) -> bool:
    """Whether every value in the ball rounds to the same value of ``fmt`` (exactly)."""
    if ball.lower is None:
        return False
    return round_mpf(ball.lower, fmt) == round_mpf(ball.upper, fmt)


def _decided_fast(found: Sequence[Ball], fmts) -> np.ndarray:
    """Which balls certainly decide every format in ``fmts``, by float64 arithmetic.

    A sufficient test: both bounds round to the same float64 ``v`` (flint rounds to
    nearest, ties to even, subnormals and overflow included), so the ball lies inside
    the float64 rounding interval of ``v``, strictly between ``v``'s float64 neighbours;
    and the neighbours round to the same value of every narrower format. Rounding is
    monotone, so every value between them rounds alike. A ``False`` is not a verdict:
    :func:`decides` settles it exactly (a value exactly on a narrower format's tie)."""
    lo = np.array([b.lo64 for b in found], dtype=np.float64)
    hi = np.array([b.hi64 for b in found], dtype=np.float64)
    ok = lo == hi  # NaN (no ball) compares unequal
    narrower = [f for f in fmts if f.name != "float64"]
    if narrower and ok.any():
        with np.errstate(invalid="ignore", over="ignore"):
            below, above = np.nextafter(lo, -np.inf), np.nextafter(lo, np.inf)
        for f in narrower:
            ok &= to_format(below, f) == to_format(above, f)
    return ok


def certify_point(
    case: Case,
    point: dict[str, float],
    partials: Sequence[Partial],
    formats: Sequence[str] = tuple(FORMATS),
) -> dict[Partial, Ball]:
    """A ball per partial at ``point`` (the inputs as the dtype holds them, exactly)."""
    return certify_points(case, [point], partials, formats)[0]


def certify_points(
    case: Case,
    points: Sequence[dict[str, float]],
    partials: Sequence[Partial],
    formats: Sequence[str] = tuple(FORMATS),
) -> list[dict[Partial, Ball]]:
    """A ball per partial at every point (the inputs as the dtype holds them, exactly):
    the points go through each precision together, and what a precision decides leaves
    the batch."""
    spec = case.reference
    if spec.registered:
        reason = "a registered reference: verified by its own method, not certified"
        return [{p: Ball(None, None, 0, reason) for p in partials} for _ in points]
    fmts = [FORMATS[f] for f in formats]
    names = case.input_names
    jet_partials = tuple(p for p in partials if p not in spec.derivatives)
    # Mixed partials need multivariate ball jets, over only what they differentiate; the
    # rest go by one power series per variable.
    mixed = tuple(p for p in jet_partials if len(set(p)) > 1)
    space = space_for(mixed, names) if mixed else None
    with no_cyclic_gc():
        return _certify(case, points, partials, fmts, jet_partials, space)


@contextlib.contextmanager
def no_cyclic_gc():
    """Pause the cyclic garbage collector for a batch: its many small objects trigger
    full scans of everything the caller holds (a store's cache), which doubled the time
    of a batch inside the harness. Reference counting frees the values; the only cycles
    (the two closures of each evaluation, their memo cleared) wait for the next
    collection."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _certify(case, points, partials, fmts, jet_partials, space) -> list:
    done: list[dict[Partial, Ball]] = [{} for _ in points]
    pending = list(range(len(points)))
    believed = [_magnitude_bits(pt) + _MAGNITUDE_MARGIN for pt in points]
    bits = _START_BITS
    while pending and bits <= MAX_BITS:
        with balls.working_bits(bits):
            found = {
                i: _evaluate(
                    case,
                    {k: arb(float(v)) for k, v in points[i].items()},
                    partials,
                    jet_partials,
                    space,
                    bits,
                )
                for i in pending
            }
        flat = [(i, p, found[i][p]) for i in pending for p in partials if p not in done[i]]
        fast = _decided_fast([b for _, _, b in flat], fmts)
        last = bits * 2 > MAX_BITS
        for (i, p, ball), quick in zip(flat, fast):
            if quick or (ball.bounded and all(decides(ball, f) for f in fmts)):
                done[i][p] = ball
            elif (
                not ball.bounded
                and ball.reason.startswith(_FINAL)
                and (ball.reason != _INDETERMINATE or bits > believed[i])
            ):
                done[i][p] = ball  # nothing a higher precision would change
            elif last:
                reason = ball.reason or f"the ball is still too wide at {MAX_BITS} bits"
                done[i][p] = Ball(ball._lo, ball._hi, ball.bits, reason)
        pending = [i for i in pending if len(done[i]) < len(partials)]
        bits *= 2
    return done


def _magnitude_bits(point: dict[str, float]) -> int:
    """The largest binary exponent among the point's finite nonzero inputs (0 if none)."""
    return max(
        (math.frexp(v)[1] for v in map(float, point.values()) if math.isfinite(v) and v),
        default=0,
    )


def _evaluate(case, pt, partials, jet_partials, space, bits) -> dict:
    spec = case.reference
    names = case.input_names
    if space is None and len(jet_partials) == len(partials):  # the common case, directly
        return _settle(partials, bits, lambda: _unmixed(spec.expression, pt, names, partials))
    single = [p for p in jet_partials if len(set(p)) <= 1]
    mixed = [p for p in jet_partials if len(set(p)) > 1]
    out: dict[Partial, Ball] = {}
    if single:
        out.update(_settle(single, bits, lambda: _unmixed(spec.expression, pt, names, single)))
    if mixed:
        out.update(_settle(mixed, bits, lambda: _mixed(spec.expression, pt, space, mixed)))
    for p in partials:
        if p not in jet_partials:  # a closed-form derivative: its value
            node = spec.derivatives[p]
            out.update(_settle([p], bits, lambda: {p: _unmixed(node, pt, names, [()])[()]}))  # noqa: B023
    return out


def _settle(group, bits: int, compute) -> dict:
    """The balls ``compute()`` gives for ``group``; or, where it raises, the reason. What
    the rules noted of the evaluation (a one-sided limit) is each ball's reason."""
    take_notes()
    try:
        found = {p: _ball(x, bits) for p, x in compute().items()}
    except Undefined as exc:
        return {p: Ball(None, None, bits, str(exc)) for p in group}
    except Unsupported as exc:
        return {p: Ball(None, None, bits, f"Arb: {exc}") for p in group}
    note = take_notes()
    if note:
        for ball in found.values():
            ball.reason = ball.reason or note
    return found


def _mixed(node, pt, space, partials) -> dict:
    """Mixed partials by multivariate ball jets over the variables they differentiate."""
    jet = balls.evaluate(node, pt, space)
    return {p: jet.derivative(p) for p in partials}


def _unmixed(node, pt, names, partials) -> dict:
    """Partials in one variable each (or none: the value), by one power series per
    variable, to the highest order asked of it."""
    orders: dict[str, int] = {}
    for p in partials:
        if p:
            orders[p[0]] = max(orders.get(p[0], 0), len(p))
    series = {v: evaluate_series(node, pt, v, n) for v, n in orders.items()}
    value = next(iter(series.values()))[0] if series else evaluate_series(node, pt, names[0], 0)[0]
    return {p: series[p[0]][len(p)] * math.factorial(len(p)) if p else value for p in partials}


def _ball(x: arb, bits: int) -> Ball:
    if x.is_finite():
        lo, hi = x.lower(), x.upper()
        ball = Ball.__new__(Ball)  # Ball(lo, hi, bits), without its checks: the hot path
        ball._lo, ball._hi, ball.bits, ball.reason = lo, hi, bits, ""
        ball.lo64, ball.hi64 = float(lo), float(hi)
        return ball
    if x.is_nan():
        return Ball(None, None, bits, _INDETERMINATE)
    return Ball(None, None, bits, "")
