"""The reference table of a case, and the store of reference values behind it.

:func:`compute_reference` settles every partial at every point and lays out one row per
(dtype, point, partial), with the finite-difference error model
(:mod:`harness.numerics.fd_model`) and the reference at inputs as the platform's flush
reads them (:mod:`harness.numerics.flush`). :class:`ReferenceStore` holds the values: Arb
balls first (:mod:`harness.reference.certify`), mpmath's two-precision verification
(:mod:`harness.reference.verify`) where no ball settles a value and on a cross-check
sample, cached per case in a Parquet file named by a hash of what they depend on (the
function, the reference, the precision settings); a rerun computes only the (point,
partial) pairs it has not seen. No TensorFlow here.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path

import mpmath
import numpy as np
import pandas as pd

from harness.cases.model import Case, Partial
from harness.numerics.floats import FORMATS
from harness.reference.cache import (
    BALL_SUFFIX,
    cache_key,
    cache_path,
    decode_ball,
    decode_value,
    encode_verified,
    load_cache,
    read_cache,
    save_cache,
    shard_dir,
)
from harness.reference.certify import UNDEFINED, Ball, certify_points, decides, no_cyclic_gc
from harness.reference.rounded import NOT_RUN, Rounded, judge_reference
from harness.reference.verify import (
    ReferenceSettings,
    estimate_point,
    evaluator,
    verify_point,
)

__all__ = ["ReferenceStore", "cache_key", "compute_reference", "reference_rows"]


def _settled(ball_entry: tuple | None) -> bool:
    """Whether a cached ball decides every format, or proves there is no value."""
    if ball_entry is None:
        return False
    text, _, _, reason = ball_entry
    return bool(text) and not reason or reason.startswith(UNDEFINED)


def _sampled(key: tuple[float, ...], every: int) -> bool:
    """One point in ``every``, chosen by a hash of its inputs' bits (the same points in
    every run and every job)."""
    return zlib.crc32(struct.pack(f"<{len(key)}d", *key)) % every == 0


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
        cross_check: bool = False,
    ) -> int:
        """Make ``partials`` known at every point in ``keys``; returns how many points were
        computed.

        Arb is the oracle of a closed-form reference (:meth:`certify`): a ball that
        decides every format settles the value. mpmath's two-precision verification runs
        only where no ball settles a partial (a function with no Arb kernel, a ball still
        too wide), for registered references, and, with ``cross_check``, at one point in
        ``settings.cross_check`` (by a hash of the inputs) as an independent check of the
        balls: an mpmath value outside its ball makes the row a reference bug."""
        keys = list(dict.fromkeys(keys))
        if not self.verify:
            return self._compute(keys, partials, estimate_point, progress)
        closed = not self.case.reference.registered
        certified = self.certify(keys, partials) if closed else []
        settled = {k for k, done in certified if done}
        every = self.settings.cross_check if cross_check else 0
        labels = [(p, self.case.label(p)) for p in partials]
        balls = [label + BALL_SUFFIX for _, label in labels]
        todo: dict[tuple[Partial, ...], list] = {}
        for key in keys:
            checked = every > 0 and _sampled(key, every)
            if not checked and key in settled:
                continue  # Arb settled every partial here just now: nothing for mpmath
            entry = self.cache.get(key, {})
            if closed and not checked and all(_settled(entry.get(b)) for b in balls):
                continue  # and here, from the cache
            need = tuple(
                p
                for (p, label), b in zip(labels, balls)
                if not (closed and not checked and _settled(entry.get(b))) and label not in entry
            )
            if need:
                todo.setdefault(need, []).append(key)
        done = 0
        total = sum(len(k) for k in todo.values())
        for need, some in todo.items():
            self._compute(some, need, verify_point, None)
            done += len(some)
            if progress:
                progress(done, total)
        computed = len({k for k, _ in certified} | {k for some in todo.values() for k in some})
        self.computed += computed
        return computed

    def _compute(self, keys, partials, compute, progress) -> int:
        """mpmath at ``keys`` for ``partials`` (verified, or one estimate each)."""
        labels = {p: self.case.label(p) for p in partials}
        wanted = set(labels.values())
        missing = [k for k in keys if not wanted <= set(self.cache.get(k, ()))]
        fn = evaluator(self.case, partials)
        for i, key in enumerate(missing):
            verified = compute(fn, dict(zip(self.names, key)), partials, self.settings)
            entry = self.cache.setdefault(key, {})
            entry.update({labels[p]: encode_verified(v) for p, v in verified.items()})
            self.added.add(key)
            if progress:
                progress(i + 1, len(missing))
        if not self.verify:
            self.computed += len(missing)
        return len(missing)

    def certify(self, keys: Sequence[tuple[float, ...]], partials: Sequence[Partial]) -> list:
        """An Arb ball (:mod:`harness.reference.certify`) for ``partials`` at every point
        in ``keys`` the cache lacks one for; returns the points computed, each with
        whether its balls settle every partial (decide every format, or prove there is
        no value)."""
        if not self.verify:
            return []
        labels = {p: self.case.label(p) + BALL_SUFFIX for p in partials}
        wanted = set(labels.values())
        missing = [k for k in dict.fromkeys(keys) if not wanted <= set(self.cache.get(k, ()))]
        names = self.names
        found = certify_points(self.case, [dict(zip(names, k)) for k in missing], partials)
        cache = self.cache
        out = []
        with no_cyclic_gc():
            for key, balls in zip(missing, found):
                entry = cache.get(key)
                if entry is None:
                    entry = cache[key] = {}
                # Balls stay objects until the cache is saved (encoding them costs more
                # than computing them); one without bounds is its reason.
                done = True
                for p, b in balls.items():
                    entry[labels[p]] = (b if b.bounded else "", 0.0, b.bits, b.reason)
                    done = done and _settled(entry[labels[p]])
                out.append((key, done))
        self.added.update(missing)
        self.balls_computed += len(missing)
        return out

    def ball(self, key: tuple[float, ...], partial: Partial) -> Ball | None:
        """The point's Arb ball, or ``None`` where none was computed (a point only the
        bisection of edges visited, a registered reference)."""
        entry = self.cache.get(key, {}).get(self.case.label(partial) + BALL_SUFFIX)
        if entry is None or isinstance(entry[0], Ball):
            return None if entry is None else entry[0]
        return decode_ball(entry)

    def entry(self, key: tuple[float, ...], partial: Partial) -> tuple[str, float, int, str]:
        """mpmath's ``(value, digits, precision, message)``; ``("", nan, 0, "")`` where
        mpmath did not run (a ball settled the value)."""
        return self.cache[key].get(self.case.label(partial), NOT_RUN)

    def value(self, key: tuple[float, ...], partial: Partial):
        """The reference value as an mpf: the centre of an Arb ball that decides every
        format, else mpmath's verified value (read back far above every format's
        precision), else the centre of a ball that decides float64, else ``None``."""
        ball = self.ball(key, partial)
        if ball is not None and ball.settled:
            return ball.centre()
        hit = self.verified(key, partial)
        if hit is None and ball is not None and decides(ball, FORMATS["float64"]):
            hit = ball.centre()
        return hit

    def verified(self, key: tuple[float, ...], partial: Partial):
        """mpmath's verified value, or ``None`` where it did not verify (or did not run)."""
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
            hit = self._rounded[memo_key] = judge_reference(
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
    computed = store.ensure(list(unique), list(case.partials), progress, cross_check=True)
    table = reference_rows(case, points, store)
    store.save()
    counts = {
        "computed": computed,
        "cached": len(unique) - computed,
        "stencil_points": store.computed - computed,
        "rows": len(table),
        "certified": int(table["certified"].sum()),
        "cross_checked": int(table["cross_checked"].sum()),
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
                        "cross_checked": ref.cross_checked,
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
