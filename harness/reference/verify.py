"""The reference stage: verified mpmath values of every partial at every point, per dtype.

For each distinct input point (the inputs *as represented in a dtype*, so each dtype is
judged on exactly the inputs it received) the case's reference expression is evaluated
over Taylor jets (:mod:`harness.reference.jets`), which gives every partial at once and exactly up
to the working precision.

Verification. A value is trusted only when a second, independent computation at a much
higher precision agrees with it: the jets are evaluated at ``precision`` digits and again
at twice that; where the two agree to ``verify_digits`` significant digits the
higher-precision value is kept. Where they do not (cancellation inside the expression,
such as ``log(1 + exp(x))`` at x = 1000), the precision doubles again, up to
``max_precision``; a partial that never settles, or that is not finite or not defined
(``abs`` at 0), is ``reliable = False`` and kept out of every verdict.

Rounding. The verified value is rounded *directly* to each dtype
(:func:`harness.numerics.floats.round_mpf`): correctly, with the dtype's subnormals, and to ±inf
when the true value overflows it.

Cache. A value depends only on the function and reference of the case, the precision
settings, the exact input values and the partial, so values are cached per case in a
Parquet file named by a hash of the first three and holding one row per (point,
partial); a rerun computes only the (point, partial) pairs it has not seen, so editing
a case's implementations or expectations, thinning its points or narrowing its orders
reuses every value. TensorFlow is
never imported here.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import mpmath

from harness.cases.model import Case, Partial
from harness.reference.jets import cancelled_bits, evaluate, space_for
from harness.registered import catalogue as registry

__all__ = [
    "DECIMAL_DIGITS",
    "BUDGET_SECONDS",
    "REFERENCE_VERSION",
    "ReferenceSettings",
    "Verified",
    "agree_digits",
    "estimate_point",
    "evaluator",
    "verify_point",
]

#: Bump when the reference arithmetic changes, so cached values are recomputed.
REFERENCE_VERSION = 5
#: Significant digits of the decimal string kept for people (>= 25 by the design).
DECIMAL_DIGITS = 30


@dataclass(frozen=True)
class ReferenceSettings:
    precision: int = 50
    verify_digits: int = 25
    max_precision: int = 2000
    #: Where Arb settles the reference, mpmath cross-checks one point of the case's own
    #: in this many (0: none; 1: every point). Not part of the cache key: a cache with
    #: fewer cross-checks gains the missing ones when a run asks for more.
    cross_check: int = 8

    @classmethod
    def of(cls, settings) -> ReferenceSettings:
        """The reference's part of a study's settings (:class:`harness.config.Settings`)."""
        return cls(settings.precision, settings.verify_digits, settings.max_precision)


#: CPU seconds one point may take before its unverified partials are given up as
#: unreliable (checked between precisions; every evaluation is bounded by the precision
#: and the kernels' exponent guards). Not a setting of the study: no point of the seed
#: cases comes near it.
BUDGET_SECONDS = 120.0


@dataclass(frozen=True)
class Verified:
    """One partial at one point."""

    value: mpmath.mpf | None  # None: unreliable
    digits: float  # significant digits on which the last two precisions agree
    precision: int  # digits of the precision that verified it (or the last tried)
    message: str = ""


def agree_digits(a, b) -> float:
    """Decimal digits on which ``a`` and ``b`` agree (inf when equal, 0 when either is
    not finite)."""
    if a == b:
        return math.inf
    if not (mpmath.isfinite(a) and mpmath.isfinite(b)):
        return 0.0
    scale = max(abs(a), abs(b))
    return float(-mpmath.log10(abs(a - b) / scale))


Values = dict  # {partial: mpf}
Evaluator = Callable[[dict, int], tuple[Values, dict]]


def evaluator(case: Case, partials: Sequence[Partial] | None = None) -> Evaluator:
    """``fn(point, dps) -> ({partial: value}, {partial: bits lost to cancellation})`` for
    ``partials`` (default: the case's).

    The partials taken from one Taylor jet share its count (the jet tracks cancellation
    as a whole); each closed-form derivative of ``reference.derivatives`` has its own, so
    an exactly-zero derivative (a symmetric point) does not take the others down with it.
    """
    partials = tuple(case.partials if partials is None else partials)
    names = case.input_names
    spec = case.reference
    if spec.registered:
        fn = registry.get_reference(spec.registered).factory

        def registered(point: dict, dps: int) -> tuple[Values, dict]:
            with mpmath.workdps(dps):
                return fn(point, partials, dps), {}

        return registered
    jet_partials = tuple(p for p in partials if p not in spec.derivatives)
    closed = {p: node for p, node in spec.derivatives.items() if p in partials}
    space = space_for(jet_partials or ((),), names)
    value_space = space_for(((),), names)

    def by_jets(point: dict, dps: int) -> tuple[Values, dict]:
        with mpmath.workdps(dps):
            pt = {k: mpmath.mpf(v) for k, v in point.items()}
            out: Values = {}
            lost: dict = {}
            if jet_partials:
                jet = evaluate(spec.expression, pt, space)
                jet_lost = cancelled_bits()
                for p in jet_partials:
                    out[p] = +space.derivative(jet, p)
                    lost[p] = jet_lost
            for p, node in closed.items():
                out[p] = +evaluate(node, pt, value_space).value
                lost[p] = cancelled_bits()
        return out, lost

    return by_jets


def _bits(digits: float) -> int:
    return int(math.ceil(digits * math.log2(10)))


def verify_point(
    fn: Evaluator,
    point: dict[str, float],
    partials: Sequence[Partial],
    settings: ReferenceSettings,
    budget_seconds: float = BUDGET_SECONDS,
) -> dict[Partial, Verified]:
    """Evaluate at doubling precisions until two consecutive ones agree, partial by partial.

    A precision counts only if cancellation left at least ``verify_digits`` + 10 digits
    of it intact; otherwise (a total cancellation gives the same exact 0 at every
    precision below its depth) the next precision is tried.
    """
    guard = _bits(settings.verify_digits + 10)

    cancelled = f"cancellation left too few digits by {settings.max_precision} digits of precision"

    def level(dps: int) -> dict | str:
        """Values at ``dps``, a partial's failure as its message, or one message for all."""
        try:
            values, lost = fn(point, dps)
        except (ArithmeticError, ValueError) as exc:
            return f"reference raised {type(exc).__name__}: {exc}"
        except MemoryError:
            return f"the reference ran out of memory at {dps} digits"
        limit = _bits(dps) - guard
        return {p: (cancelled if lost.get(p, 0) > limit else v) for p, v in values.items()}

    start = time.process_time()
    dps = settings.precision
    previous = level(dps)
    done: dict[Partial, Verified] = {}
    digits = dict.fromkeys(partials, 0.0)
    pending = list(partials)
    while pending:
        higher = min(2 * dps, settings.max_precision)
        spent = time.process_time() - start
        if spent > budget_seconds:
            for p in pending:
                message = (
                    f"the reference's budget of {budget_seconds:g} CPU seconds per "
                    f"point ran out ({spent:.0f} s) by {dps} digits of working precision"
                )
                done[p] = Verified(None, digits[p], dps, message)
            break
        if higher <= dps:
            for p in pending:
                failed = previous if isinstance(previous, str) else previous[p]
                message = (
                    failed
                    if isinstance(failed, str)
                    else (
                        f"did not verify to {settings.verify_digits} digits by "
                        f"{settings.max_precision} digits of working precision"
                    )
                )
                done[p] = Verified(None, digits[p], dps, message)
            break
        current = level(higher)
        still = []
        for p in pending:
            if isinstance(current, str) or isinstance(current[p], str):
                still.append(p)
                continue
            b = current[p]
            if not mpmath.isfinite(b):
                done[p] = Verified(None, 0.0, higher, _undefined(current, p))
            elif isinstance(previous, str) or isinstance(previous[p], str):
                still.append(p)
            else:
                digits[p] = agree_digits(previous[p], b)
                if digits[p] >= settings.verify_digits:
                    done[p] = Verified(b, digits[p], higher)
                else:
                    still.append(p)
        pending = still
        previous, dps = current, higher
    return done


def estimate_point(
    fn: Evaluator,
    point: dict[str, float],
    partials: Sequence[Partial],
    settings: ReferenceSettings,
) -> dict[Partial, Verified]:
    """One evaluation at the working precision, not verified: a guide where a value only
    steers a search (:mod:`harness.edges.bisection`) and is verified before it is reported.
    A value that cancellation left with too few digits, or that is not finite, is
    ``None``."""
    dps = settings.precision
    try:
        values, lost = fn(point, dps)
    except (ArithmeticError, ValueError) as exc:
        return {
            p: Verified(None, 0.0, dps, f"reference raised {type(exc).__name__}") for p in partials
        }
    limit = _bits(dps) - _bits(settings.verify_digits + 10)
    out = {}
    for p in partials:
        v = values[p]
        if lost.get(p, 0) > limit or not mpmath.isfinite(v):
            out[p] = Verified(None, 0.0, dps, "not estimated")
        else:
            out[p] = Verified(v, 0.0, dps)
    return out


def _undefined(values: Values, p: Partial) -> str:
    value = values.get(())
    if value is not None and not isinstance(value, str) and not mpmath.isfinite(value):
        return "the function is not defined (or is singular) at this input"
    if mpmath.isnan(values[p]):
        return "not differentiable here (no derivative exists at this point)"
    return "the derivative is infinite here"
