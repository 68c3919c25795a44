"""The reference table of a case, and the store of verified values behind it.

:func:`compute_reference` verifies every partial at every point (:mod:`harness.reference.verify`)
and lays out one row per (dtype, point, partial), with the finite-difference error model
(:mod:`harness.numerics.fd_model`) and the reference at inputs as the platform's flush reads them
(:mod:`harness.numerics.flush`). :class:`ReferenceStore` holds the verified values, cached per case
in a Parquet file named by a hash of what they depend on (the function, the reference,
the precision settings); a rerun computes only the (point, partial) pairs it has not
seen. No TensorFlow here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import mpmath
import numpy as np
import pandas as pd

from harness.cases.model import Case, Partial
from harness.numerics.floats import FORMATS, round_mpf
from harness.reference.cache import (
    BALL_SUFFIX,
    KEEP_BITS,
    cache_key,
    cache_path,
    decode_ball,
    decode_value,
    encode_ball,
    encode_verified,
    load_cache,
    read_cache,
    save_cache,
    shard_dir,
)
from harness.reference.certify import UNDEFINED, Ball, certify_point, decides
from harness.reference.verify import (
    DECIMAL_DIGITS,
    ReferenceSettings,
    estimate_point,
    evaluator,
    verify_point,
)

__all__ = ["ReferenceStore", "cache_key", "compute_reference", "reference_rows"]


class ReferenceStore:
    """Verified values of one case at any points, through the per-case cache.

    ``ensure`` verifies what the cache lacks; ``value`` reads a verified value back at
    high precision (``None``: unreliable, with its message in ``entry``).
    """

    def __init__(
        self,
        case: Case,
        settings: ReferenceSettings,
        cache_dir: Path | None,
        verify: bool = True,
        shard: str | None = None,
    ):
        self.case, self.settings, self.cache_dir = case, settings, cache_dir
        # A job that adds to a case's cache beside others (one evaluation piece) writes
        # what it computed to a shard of its own: two jobs never write the same file.
        self.shard = shard
        self.names = list(case.input_names)
        # An unverified store (one evaluation per point, see estimate_point) is a guide
        # for a search, never written to the cache of verified values.
        self.verify = verify
        self.cache = load_cache(cache_dir, case, settings) if verify else {}
        self.computed = 0
        self.balls_computed = 0  # points whose Arb balls were computed here
        self.added: set[tuple[float, ...]] = set()  # points verified here
        self._parsed: dict[str, mpmath.mpf] = {}
        self._rounded: dict[tuple, tuple] = {}
        #: Memoised derived values (the finite-difference model per dtype and point).
        self.memo: dict[tuple, object] = {}

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
        fn = evaluator(self.case, partials)
        compute = verify_point if self.verify else estimate_point
        for i, key in enumerate(missing):
            verified = compute(fn, dict(zip(self.names, key)), partials, self.settings)
            entry = self.cache.setdefault(key, {})
            entry.update({labels[p]: encode_verified(v) for p, v in verified.items()})
            self.added.add(key)
            if progress:
                progress(i + 1, len(missing))
        self.computed += len(missing)
        return len(missing)

    def certify(self, keys: Sequence[tuple[float, ...]], partials: Sequence[Partial]) -> int:
        """An Arb ball (:mod:`harness.reference.certify`) for ``partials`` at every point
        in ``keys`` the cache lacks one for; returns how many points were computed."""
        if not self.verify:
            return 0
        labels = {p: self.case.label(p) + BALL_SUFFIX for p in partials}
        wanted = set(labels.values())
        missing = [k for k in dict.fromkeys(keys) if not wanted <= set(self.cache.get(k, ()))]
        for key in missing:
            found = certify_point(self.case, dict(zip(self.names, key)), partials)
            entry = self.cache.setdefault(key, {})
            entry.update({labels[p]: encode_ball(b) for p, b in found.items()})
            self.added.add(key)
        self.balls_computed += len(missing)
        return len(missing)

    def ball(self, key: tuple[float, ...], partial: Partial) -> Ball | None:
        """The point's Arb ball, or ``None`` where none was computed (a point only the
        bisection of edges visited)."""
        entry = self.cache.get(key, {}).get(self.case.label(partial) + BALL_SUFFIX)
        return None if entry is None else decode_ball(entry)

    def entry(self, key: tuple[float, ...], partial: Partial) -> tuple[str, float, int, str]:
        return self.cache[key][self.case.label(partial)]

    def value(self, key: tuple[float, ...], partial: Partial):
        """The reference value as an mpf: mpmath's verified value (read back far above
        every format's precision), else the centre of an Arb ball that decides the value
        in float64 (an exact 0 that two precisions cannot verify), else ``None``."""
        hit = self.verified(key, partial)
        if hit is None:
            ball = self.ball(key, partial)
            if ball is not None and decides(ball, FORMATS["float64"]):
                hit = ball.centre()
        return hit

    def verified(self, key: tuple[float, ...], partial: Partial):
        """mpmath's verified value, or ``None`` where it did not verify."""
        text = self.entry(key, partial)[0]
        if not text:
            return None
        hit = self._parsed.get(text)
        if hit is None:
            hit = self._parsed[text] = decode_value(text)
        return hit

    def rounded(self, key: tuple[float, ...], partial: Partial, fmt) -> Rounded:
        """The reference of one row, rounded once, directly, to ``fmt``, with what the Arb
        ball says of it (memoised: the bisection of edges asks for the same inputs again
        and again)."""
        memo_key = (key, partial, fmt.name)
        hit = self._rounded.get(memo_key)
        if hit is None:
            hit = self._rounded[memo_key] = _judge_reference(
                self.verified(key, partial), self.ball(key, partial), fmt, self.entry(key, partial)
            )
        return hit

    def save(self) -> None:
        if not ((self.computed or self.balls_computed) and self.cache_dir and self.verify):
            return
        if self.shard is None:
            save_cache(
                cache_path(self.cache_dir, self.case, self.settings),
                self.case,
                self.settings,
                self.cache,
            )
        else:
            path = shard_dir(self.cache_dir, self.case, self.settings) / f"{self.shard}.parquet"
            mine = {k: self.cache[k] for k in sorted(self.added)}
            # What an earlier run of this piece verified stays in its shard.
            save_cache(path, self.case, self.settings, {**read_cache(path, self.case), **mine})


def compute_reference(
    case: Case,
    points: dict[str, pd.DataFrame],
    settings: ReferenceSettings,
    cache_dir: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """The reference table: one row per (dtype, point, partial) (:func:`reference_rows`).

    ``points[dtype]`` holds the points as represented in that dtype (see
    :func:`harness.cases.points.represent`). Returns the table and counts (``computed``,
    ``cached``: points of the case; ``stencil_points``: further points at which the
    error model or the flushed inputs needed the reference; ``rows``, ``certified`` and
    ``undefined``: the rows, those whose value an Arb ball decides, and those where it
    proves there is none).
    """
    names = list(case.input_names)
    store = ReferenceStore(case, settings, cache_dir)
    unique: dict[tuple[float, ...], None] = {}
    for frame in points.values():
        for row in frame[names].itertuples(index=False, name=None):
            unique.setdefault(tuple(float(v) for v in row), None)
    computed = store.ensure(list(unique), list(case.partials), progress)
    store.certify(list(unique), list(case.partials))
    table = reference_rows(case, points, store)
    store.save()
    counts = {
        "computed": computed,
        "cached": len(unique) - computed,
        "stencil_points": store.computed - computed,
        "rows": len(table),
        "certified": int(table["certified"].sum()),
        # Rows whose value certainly does not exist (0/0, a kink): nothing to certify.
        "undefined": int((~table["reliable"] & table["ball_note"].str.startswith(UNDEFINED)).sum()),
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
    (:func:`harness.numerics.fd_model.finite_difference_model`); and, at points with a subnormal
    input, the reference at the input as a flush reads it
    (:func:`harness.numerics.flush.flushed_reference`)."""
    from harness.numerics.fd_model import FD_COLUMNS, finite_difference_model
    from harness.numerics.flush import flushed_reference

    names = list(case.input_names)
    labels = {p: case.label(p) for p in case.partials}
    rows = []
    for dtype, frame in points.items():
        fmt = FORMATS[dtype]
        for rec in frame.to_dict("records"):
            key = tuple(float(rec[n]) for n in names)
            for p in case.partials:
                _, digits, precision, message = store.entry(key, p)
                ref = store.rounded(key, p, fmt)
                rows.append(
                    {
                        "dtype": dtype,
                        "point": int(rec["point"]),
                        **{n: rec[n] for n in names},
                        "subnormal": bool(rec.get("subnormal", False)),
                        "partial": labels[p],
                        "order": len(p),
                        "reference": ref.decimal,
                        "reference_mantissa": float(ref.mantissa),
                        "reference_exponent": int(ref.exponent),
                        "reference_rounded": ref.rounded,
                        "reliable": ref.reliable,
                        "digits": digits,
                        "precision": precision,
                        "message": ref.message or message,
                        "certified": ref.certified,
                        "oracle": ref.oracle,
                        "ball_mid": ref.ball_mid,
                        "ball_rad": ref.ball_rad,
                        "ball_note": ref.ball_note,
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


class Rounded(NamedTuple):
    """One row's reference: ``oracle`` is ``arb`` where the ball decides the dtype's value
    (the mpmath value, where verified, lies inside it), ``mpmath`` where only the
    two-precision verification stands (``ball_note`` says why), ``""`` where neither."""

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


def _judge_reference(value, ball: Ball | None, fmt, entry: tuple) -> Rounded:
    note = "no Arb ball at this point" if ball is None else ball.reason
    mid = rad = ""
    certified = False
    if ball is not None and ball.lower is not None:
        centre = ball.centre()
        with mpmath.workprec(2 * KEEP_BITS + 16):
            mid = mpmath.nstr(centre, DECIMAL_DIGITS)
            rad = mpmath.nstr((ball.upper - ball.lower) / 2, 5)
        certified = decides(ball, fmt)
        if not certified:
            note = note or f"the ball does not decide the {fmt.name} value at {ball.bits} bits"
        if value is not None and not ball.contains(value):
            return Rounded(
                False, math.nan, 0, math.nan, "", False, "", mid, rad, note,
                f"reference bug: the mpmath value {mpmath.nstr(value, 20)} lies outside the "
                f"Arb ball [{mpmath.nstr(ball.lower, 20)}, {mpmath.nstr(ball.upper, 20)}]",
            )  # fmt: skip
        if value is None and certified:
            # The ball decides what two precisions could not (an exact 0 by symmetry).
            value = centre
            message = f"certified by Arb at {ball.bits} bits; mpmath: {entry[3]}"
            return _rounded(value, fmt, True, mid, rad, message)
    if value is None:
        return Rounded(False, math.nan, 0, math.nan, "", False, "", mid, rad, note)
    if certified:
        return _rounded(value, fmt, True, mid, rad, "")
    return _rounded(value, fmt, False, mid, rad, "", note)


def _rounded(value, fmt, certified: bool, mid: str, rad: str, message: str, note: str = ""):
    with mpmath.workprec(2 * KEEP_BITS + 16):
        man, exp = mpmath.frexp(value)
        return Rounded(
            True, float(man), int(exp), round_mpf(value, fmt), mpmath.nstr(value, DECIMAL_DIGITS),
            certified, "arb" if certified else "mpmath", mid, rad, note, message,
        )  # fmt: skip
