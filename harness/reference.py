"""The reference stage: verified mpmath values of every partial at every point, per dtype.

For each distinct input point (the inputs *as represented in a dtype*, so each dtype is
judged on exactly the inputs it received) the case's reference expression is evaluated
over Taylor jets (:mod:`harness.jets`), which gives every partial at once and exactly up
to the working precision.

Verification. A value is trusted only when a second, independent computation at a much
higher precision agrees with it: the jets are evaluated at ``precision`` digits and again
at twice that; where the two agree to ``verify_digits`` significant digits the
higher-precision value is kept. Where they do not (cancellation inside the expression,
such as ``log(1 + exp(x))`` at x = 1000), the precision doubles again, up to
``max_precision``; a partial that never settles, or that is not finite or not defined
(``abs`` at 0), is ``reliable = False`` and kept out of every verdict.

Rounding. The verified value is rounded *directly* to each dtype
(:func:`harness.floats.round_mpf`): correctly, with the dtype's subnormals, and to ±inf
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

import hashlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import mpmath
import numpy as np
import pandas as pd

from . import registry
from .cases import Case, Partial
from .floats import FORMATS, round_mpf
from .jets import cancelled_bits, evaluate, space_for
from .results import read_table, write_table

__all__ = [
    "REFERENCE_VERSION",
    "ReferenceSettings",
    "ReferenceStore",
    "reference_rows",
    "Verified",
    "compute_reference",
    "verify_point",
]

#: Bump when the reference arithmetic changes, so cached values are recomputed.
REFERENCE_VERSION = 2
#: Significant digits of the decimal string kept for people (>= 25 by the design).
DECIMAL_DIGITS = 30


@dataclass(frozen=True)
class ReferenceSettings:
    precision: int = 50
    verify_digits: int = 25
    max_precision: int = 2000


@dataclass(frozen=True)
class Verified:
    """One partial at one point."""

    value: mpmath.mpf | None  # None: unreliable
    digits: float  # significant digits on which the last two precisions agree
    precision: int  # digits of the precision that verified it (or the last tried)
    message: str = ""


def _agree_digits(a, b) -> float:
    if a == b:
        return math.inf
    if not (mpmath.isfinite(a) and mpmath.isfinite(b)):
        return 0.0
    scale = max(abs(a), abs(b))
    return float(-mpmath.log10(abs(a - b) / scale))


Values = dict  # {partial: mpf}
Evaluator = Callable[[dict, int], tuple[Values, dict]]


def _evaluator(case: Case, partials: Sequence[Partial] | None = None) -> Evaluator:
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
        limit = _bits(dps) - guard
        return {p: (cancelled if lost.get(p, 0) > limit else v) for p, v in values.items()}

    dps = settings.precision
    previous = level(dps)
    done: dict[Partial, Verified] = {}
    digits = dict.fromkeys(partials, 0.0)
    pending = list(partials)
    while pending:
        higher = min(2 * dps, settings.max_precision)
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
                digits[p] = _agree_digits(previous[p], b)
                if digits[p] >= settings.verify_digits:
                    done[p] = Verified(b, digits[p], higher)
                else:
                    still.append(p)
        pending = still
        previous, dps = current, higher
    return done


def _undefined(values: Values, p: Partial) -> str:
    value = values.get(())
    if value is not None and not isinstance(value, str) and not mpmath.isfinite(value):
        return "the function is not defined (or is singular) at this input"
    if mpmath.isnan(values[p]):
        return "not differentiable here (no derivative exists at this point)"
    return "the derivative is infinite here"


def cache_key(case: Case, settings: ReferenceSettings) -> str:
    """What a cached value depends on besides its point and partial."""
    blob = json.dumps(
        {
            "function": case.raw.get("function"),
            "reference": case.raw.get("reference"),
            "inputs": list(case.input_names),
            "precision": settings.precision,
            "verify": settings.verify_digits,
            "max": settings.max_precision,
            "version": REFERENCE_VERSION,
        },
        sort_keys=True,
    ).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


class ReferenceStore:
    """Verified values of one case at any points, through the per-case cache.

    ``ensure`` verifies what the cache lacks; ``value`` reads a verified value back at
    high precision (``None``: unreliable, with its message in ``entry``).
    """

    def __init__(self, case: Case, settings: ReferenceSettings, cache_dir: Path | None):
        self.case, self.settings, self.cache_dir = case, settings, cache_dir
        self.names = list(case.input_names)
        self.cache = _load_cache(cache_dir, case, settings)
        self.computed = 0

    def ensure(
        self,
        keys: Sequence[tuple[float, ...]],
        partials: Sequence[Partial],
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Verify ``partials`` at every point in ``keys`` the cache lacks; returns how many
        points were computed."""
        labels = {p: self.case.label(p) for p in partials}
        wanted = set(labels.values())
        missing = [k for k in dict.fromkeys(keys) if not wanted <= set(self.cache.get(k, ()))]
        fn = _evaluator(self.case, partials)
        for i, key in enumerate(missing):
            verified = verify_point(fn, dict(zip(self.names, key)), partials, self.settings)
            entry = self.cache.setdefault(key, {})
            entry.update({labels[p]: _encode(v) for p, v in verified.items()})
            if progress:
                progress(i + 1, len(missing))
        self.computed += len(missing)
        return len(missing)

    def entry(self, key: tuple[float, ...], partial: Partial) -> tuple[str, float, int, str]:
        return self.cache[key][self.case.label(partial)]

    def value(self, key: tuple[float, ...], partial: Partial):
        """The verified value as an mpf (read back far above every format's precision),
        or ``None`` where it did not verify."""
        text = self.entry(key, partial)[0]
        if not text:
            return None
        with mpmath.workdps(_KEEP_DIGITS + 5):
            return mpmath.mpf(text)

    def save(self) -> None:
        if self.computed and self.cache_dir is not None:
            _save_cache(self.cache_dir, self.case, self.settings, self.cache)


def compute_reference(
    case: Case,
    points: dict[str, pd.DataFrame],
    settings: ReferenceSettings,
    cache_dir: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """The reference table: one row per (dtype, point, partial) (:func:`reference_rows`).

    ``points[dtype]`` holds the points as represented in that dtype (see
    :func:`harness.points.represent`). Returns the table and counts (``computed``,
    ``cached``: points of the case; ``stencil_points``: further points at which the
    error model or the flushed inputs needed the reference).
    """
    names = list(case.input_names)
    store = ReferenceStore(case, settings, cache_dir)
    unique: dict[tuple[float, ...], None] = {}
    for frame in points.values():
        for row in frame[names].itertuples(index=False, name=None):
            unique.setdefault(tuple(float(v) for v in row), None)
    computed = store.ensure(list(unique), list(case.partials), progress)
    table = reference_rows(case, points, store)
    store.save()
    counts = {
        "computed": computed,
        "cached": len(unique) - computed,
        "stencil_points": store.computed - computed,
    }
    return table, counts


def reference_rows(
    case: Case, points: dict[str, pd.DataFrame], store: ReferenceStore, model: bool = True
) -> pd.DataFrame:
    """One row per (dtype, point, partial of the case) from values verified in ``store``
    (the case's partials must be there already). Columns: ``dtype point <inputs>
    subnormal partial order reference reference_mantissa reference_exponent
    reference_rounded reliable digits precision message``; with ``model``, the
    finite-difference error model of every derivative
    (:func:`harness.fd_model.finite_difference_model`); and, at points with a subnormal
    input, the reference at the input as a flush reads it
    (:func:`harness.flush.flushed_reference`)."""
    from .fd_model import FD_COLUMNS, finite_difference_model
    from .flush import flushed_reference

    names = list(case.input_names)
    labels = {p: case.label(p) for p in case.partials}
    rows = []
    for dtype, frame in points.items():
        fmt = FORMATS[dtype]
        for rec in frame.to_dict("records"):
            key = tuple(float(rec[n]) for n in names)
            for p in case.partials:
                text, digits, precision, message = store.entry(key, p)
                reliable = bool(text)
                if reliable:
                    value = store.value(key, p)
                    with mpmath.workdps(_KEEP_DIGITS + 5):
                        man, exp = mpmath.frexp(value)
                        rounded = round_mpf(value, fmt)
                        decimal = mpmath.nstr(value, DECIMAL_DIGITS)
                else:
                    man, exp, rounded, decimal = math.nan, 0, math.nan, ""
                rows.append(
                    {
                        "dtype": dtype,
                        "point": int(rec["point"]),
                        **{n: rec[n] for n in names},
                        "subnormal": bool(rec.get("subnormal", False)),
                        "partial": labels[p],
                        "order": len(p),
                        "reference": decimal,
                        "reference_mantissa": float(man),
                        "reference_exponent": int(exp),
                        "reference_rounded": rounded,
                        "reliable": reliable,
                        "digits": digits,
                        "precision": precision,
                        "message": message,
                    }
                )
    table = pd.DataFrame(rows)
    keys = ["dtype", "point", "partial"]
    if model:
        table = table.merge(
            finite_difference_model(case, points, store), on=keys, how="left", validate="1:1"
        )
    else:
        for c in FD_COLUMNS:
            table[c] = np.nan if c != "fd_note" else ""
    flushed = flushed_reference(case, points, store)
    table = table.merge(flushed, on=keys, how="left", validate="one_to_one")
    table["flush_input_defined"] = table["flush_input_defined"].astype("boolean")
    table["flush_input_rounded"] = table["flush_input_rounded"].astype(np.float64)
    return table


# Cached values keep the full verified digits as a decimal string with enough digits to
# round-trip the verified value's meaningful part; rounding to a dtype reads it back at
# high precision, then rounds once.
_KEEP_DIGITS = 60


def _encode(v: Verified) -> tuple[str, float, int, str]:
    if v.value is None:
        return ("", float(v.digits), int(v.precision), v.message)
    with mpmath.workdps(_KEEP_DIGITS + 5):
        text = mpmath.nstr(v.value, _KEEP_DIGITS, strip_zeros=False, min_fixed=1, max_fixed=0)
    return (text, float(min(v.digits, 1e6)), int(v.precision), v.message)


def _cache_path(cache_dir: Path, case: Case, settings: ReferenceSettings) -> Path:
    return Path(cache_dir) / f"{case.id}-{cache_key(case, settings)}.parquet"


def _load_cache(cache_dir: Path | None, case: Case, settings: ReferenceSettings) -> dict:
    if cache_dir is None:
        return {}
    path = _cache_path(cache_dir, case, settings)
    if not path.exists():
        return {}
    frame = read_table(path)
    names = list(case.input_names)
    out: dict = {}
    for rec in frame.to_dict("records"):
        key = tuple(float(rec[n]) for n in names)
        out.setdefault(key, {})[rec["partial"]] = (
            rec["value"],
            float(rec["digits"]),
            int(rec["precision"]),
            rec["message"],
        )
    return out


def _save_cache(cache_dir: Path, case: Case, settings: ReferenceSettings, cache: dict) -> None:
    names = list(case.input_names)
    rows = []
    for key, entry in cache.items():
        for label, (text, digits, precision, message) in entry.items():
            rows.append(
                {
                    **dict(zip(names, key)),
                    "partial": label,
                    "value": text,
                    "digits": digits,
                    "precision": precision,
                    "message": message,
                }
            )
    frame = pd.DataFrame(rows)
    for n in names:
        frame[n] = frame[n].astype(np.float64)
    write_table(
        frame,
        _cache_path(cache_dir, case, settings),
        {"kind": "reference-cache", "case": case.id, "key": cache_key(case, settings)},
    )
