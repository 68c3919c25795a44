"""Exact edges: where an outcome starts and stops, as adjacent floats of the dtype.

A sweep samples an input at, say, 200 points; a failure that starts between two of them
is known only to lie in that gap. This module narrows every such gap down to two
*adjacent* floats of the dtype, the last input with one outcome and the first with the
next, by multisection over the dtype's values (their ordinals, :mod:`harness.numerics.floats`):
each round evaluates a few inputs inside each bracket, judges them exactly as the
compare stage judges any point (the same reference store, error model and flush), and
keeps the part of the bracket where the outcome changes.

It runs inside the evaluation stage, right after each (dtype, method) is evaluated, so it
reuses the functions that were just traced: the batch keeps the evaluation's shape
(unused slots repeat a sample), so nothing is traced again. The first mode searches;
every other mode, and every later method, first *verifies* the edge already found for
the same bracket (two inputs) and searches only where the outcome differs there.

Only cases with one swept input (ties count as one) are bisected; a grid or an
experiment keeps its sampled points (:mod:`harness.edges.finder` runs it in the evaluation
stage). No TensorFlow here: the caller passes a function that evaluates a batch.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from harness.edges.brackets import (
    EDGE_COLUMNS,
    Search,
    episode_searches,
    guide_at,
    guide_magnitude,
    guide_text,
    guides_at,
    mirror,
    without_reference,
)
from harness.numerics.floats import FORMATS, from_ordinal, is_subnormal, ordinal, to_format
from harness.numerics.flush import apply_flush

__all__ = ["EDGE_COLUMNS", "MAX_SAMPLES", "Bisector"]


#: Inputs per bracket and round, at most (more rounds cost TensorFlow calls, more inputs
#: per round cost reference evaluations; 7 splits a bracket in 8 per round).
MAX_SAMPLES = 7

Evaluator = Callable[[str, dict[str, np.ndarray]], dict[str, dict]]


#: Inputs per call in the eager mode of methods whose cost per call hardly depends on the
#: batch (reverse mode and finite differences; forward mode's per-op helpers are traced
#: per shape), in a framework whose eager calls compile nothing per shape (``eager_wide``).
WIDE = 2048

#: Inputs per eager call, at least, where eager calls compile per shape (JAX): a sweep's
#: batch when it is larger (no new shape), else this many, compiled once per dtype. A
#: sweep of a few points kept as the batch halved brackets one by one: softplus at 6
#: points a sign took 422 calls and 82 s of JAX's eager time, 18 s at 256 inputs a call.
NARROW = 256


def _width(mode: str, method: str, batch: int, wide: bool = True) -> int:
    if wide and mode == "eager" and method in ("reverse", "finite_difference"):
        return max(batch, WIDE)
    if mode == "eager":
        return max(batch, NARROW)
    return batch


class Bisector:
    """Finds the exact edges of every run of one outcome along a 1-D case's input.

    ``judge(rows) -> rows`` judges evaluation rows at new inputs (columns of the
    evaluations table plus the inputs) and returns them with ``outcome``,
    ``reference``; ``base`` holds the case's other inputs (constant along the sweep).
    """

    def __init__(
        self,
        axis: str,
        tied: Sequence[str],
        base: Mapping[str, float],
        segments: Sequence[Sequence[float]] | None,
        judge: Callable[[pd.DataFrame], pd.DataFrame],
        tolerance: Callable[[str, int], tuple[float, str]],
        flushes: Callable[[str, str], bool] = lambda dtype, mode: False,
        flushed_input: Callable[[str, str, dict, str], tuple[float, bool] | None] = (
            lambda dtype, mode, inputs, partial: None
        ),
        wide: bool = True,
    ):
        self.axis, self.tied, self.base = axis, list(tied), dict(base)
        self.wide = wide  # the framework's eager calls cost the same at any batch
        self.segments = [list(s) for s in segments] if segments else None
        self.judge = judge
        self.tolerance = tolerance
        self.flushes = flushes  # (dtype, mode) -> are subnormal results written as 0?
        # (dtype, mode, inputs, partial) -> the reference where subnormal inputs read as 0,
        # rounded, and whether it is defined; None where inputs are not flushed.
        self.flushed_input = flushed_input
        self._judged: dict[tuple, tuple] = {}  # memo of exact judgements
        self.found: dict[tuple, tuple[float, float, str]] = {}  # key -> (inside, outside, outcome)
        # Edges found per (implementation, partial, side, outcomes), whatever the bracket.
        self.near: dict[tuple, list[float]] = {}
        self.stats = {"calls": 0, "points": 0, "edges": 0, "verified": 0, "misled": 0}
        # Seconds inside TensorFlow's calls, per method and mode (the rest of the
        # bisection's time is judging: references, rounding, the error model).
        self.stats["tensorflow_seconds"] = {}

    # -- evaluation -----------------------------------------------------------------
    def _evaluate(
        self,
        evaluate: Evaluator,
        mode: str,
        method: str,
        dtype: str,
        fmt,
        wanted: list[tuple[Search, int]],
        batch: int,
    ) -> None:
        """Evaluate each (search, ordinal), ``batch`` inputs per call; the evaluation rows
        go into the searches (``rows``)."""
        for start in range(0, len(wanted), batch):
            chunk = wanted[start : start + batch]
            ords = np.array([o for _, o in chunk], dtype=np.int64)
            x = from_ordinal(ords, fmt)
            for j in np.flatnonzero(ords == 0):  # a zero with the sweep's sign
                x[j] = chunk[j][0].zero()
            padded = np.concatenate([x, np.full(batch - len(x), x[0])])
            inputs = {n: np.full(batch, v) for n, v in self.base.items()}
            for n in (self.axis, *self.tied):
                inputs[n] = padded
            t0 = time.perf_counter()
            results = evaluate(mode, inputs)
            spent = self.stats["tensorflow_seconds"]
            where = f"{method} {mode}"
            spent[where] = spent.get(where, 0.0) + time.perf_counter() - t0
            self.stats["calls"] += 1
            self.stats["points"] += len(chunk)
            for j, (s, o) in enumerate(chunk):
                got = results[s.impl].get(s.partial)
                if isinstance(got, str):
                    value, status, message = math.nan, "error", got
                elif got is None:
                    value, status, message = math.nan, "missing", "the framework returned None"
                else:
                    value, status, message = float(got[j]), "value", ""
                # Kept compact; a row for the tables is made only where one is judged
                # against verified references (see _row).
                s.rows[o] = (method, mode, dtype, float(padded[j]), value, status, message)

    def _row(self, s: Search, o: int) -> dict:
        """The evaluation row of (search, ordinal), as the evaluations table has it."""
        method, mode, dtype, x, value, status, message = s.rows[o]
        return {
            "implementation": s.impl,
            "method": method,
            "mode": mode,
            "dtype": dtype,
            "partial": s.partial,
            "point": 0,
            **self.base,
            **dict.fromkeys((self.axis, *self.tied), x),
            "value": value,
            "status": status,
            "message": message,
        }

    def _exact(self, wanted: list[tuple[Search, int]], fmt) -> dict:
        """``{(id(search), ordinal): (outcome, value, reference)}`` against verified
        references, for evaluated (search, ordinal) pairs: one judging for all. The same
        value at the same input is judged the same way in another mode or method (same
        reference, budget and flush), so it is judged once."""
        keys = [self._memo_key(s, s.rows[o]) for s, o in wanted]
        first: dict[tuple, int] = {}
        for i, k in enumerate(keys):
            if k not in self._judged:
                first.setdefault(k, i)
        if first:
            fresh = self._judge_exact([wanted[i] for i in first.values()], fmt)
            self._judged.update(zip(first, fresh))
        return {(id(s), o): self._judged[k] for (s, o), k in zip(wanted, keys)}

    def _memo_key(self, s: Search, row: tuple) -> tuple:
        method, mode, dtype, x, value, status, _ = row
        return (
            s.impl,
            s.partial,
            dtype,
            method == "finite_difference",
            self.flushes(dtype, mode),
            x,
            math.copysign(1.0, x),  # -0.0 and 0.0 compare (and hash) equal
            status,
            "nan" if math.isnan(value) else value,
        )

    def _judge_exact(self, wanted: list[tuple[Search, int]], fmt) -> list[tuple]:
        """``(outcome, value, reference)`` of each evaluated (search, ordinal)."""
        frame = pd.DataFrame([self._row(s, o) for s, o in wanted])
        # A finite difference is judged against its error model interpolated over the
        # bracket (the model is an estimate; its inputs vary smoothly with x).
        x = frame[self.axis].to_numpy(np.float64)
        guided = [guide_at(s.guide, xi) for (s, _), xi in zip(wanted, x)]
        frame["fd_tolerance"] = [g[2] for g in guided]
        # Outcomes that need no reference: an exception, no gradient, a NaN where no
        # input is subnormal (NaN is `nan` whatever the truth; the bracketing sweep points
        # were judged, so the truth is defined here), and a 0 or an infinity where the
        # truth is, by the bracket's verified ends, a normal number far from 0 and from
        # overflow. Only the rest needs mpmath.
        quick = without_reference(frame, self.axis, fmt)
        value = frame["value"].to_numpy(np.float64)
        for i, (m, e, _) in enumerate(guided):
            if quick.iloc[i] is not None or is_subnormal(x[i : i + 1], fmt)[0]:
                continue
            both = wanted[i][0].guide
            same_sign = both[1][1] * both[2][1] > 0
            size = abs(guide_magnitude(m, e))
            clear = same_sign and 16 * fmt.smallest_normal < size < fmt.max_finite / 16
            if clear and value[i] == 0:
                quick.iloc[i] = "zero"
            elif clear and np.isinf(value[i]):
                quick.iloc[i] = "inf"
        needs = quick.isna().to_numpy()
        outcome = quick.to_numpy(object, copy=True)
        reference = np.array([f"~{guide_text(m, e)}" for m, e, _ in guided], dtype=object)
        if needs.any():
            judged = self.judge(frame[needs].reset_index(drop=True))
            outcome[needs] = judged["outcome"].astype(str).to_numpy()
            reference[needs] = judged["reference"].astype(str).to_numpy()
        return [(str(c), float(v), str(r)) for c, v, r in zip(outcome, frame["value"], reference)]

    def _guided(self, wanted: list[tuple[Search, int]], fmt) -> list[str]:
        """Outcomes of evaluated (search, ordinal) pairs against each search's guide (its
        bracket's verified references interpolated, see :func:`harness.edges.brackets.guide_at`:
        no mpmath). Where the platform reads a subnormal input as 0, the reference there
        (one per search's side of 0, verified) is the flush's, as the compare stage
        applies it (:func:`harness.numerics.flush.flush_columns`); the final pair of
        every search is judged exactly in any case (:meth:`_settle`)."""
        from harness.judge.compare import judge

        rows = [s.rows[o] for s, o in wanted]
        x = np.array([r[3] for r in rows], dtype=np.float64)
        value = np.array([r[4] for r in rows], dtype=np.float64)
        status = np.array([r[5] for r in rows], dtype=object)
        mantissa, exponent, tol_abs = guides_at([s.guide for s, _ in wanted], x)
        budget = np.array([self.tolerance(fmt.name, s.guide[0])[0] for s, _ in wanted])
        with np.errstate(over="ignore", under="ignore"):
            truth = np.ldexp(mantissa, exponent.clip(-10000, 10000))
        rounded = to_format(truth, fmt)
        # The platform's flush: of subnormal results, and of subnormal inputs where it
        # reads them as 0 (against the reference there, one per search's side of 0).
        results = np.array([self.flushes(fmt.name, r[1]) for r in rows], dtype=bool)
        read_as_zero = np.zeros(len(rows), dtype=bool)
        at_zero = np.full(len(rows), np.nan)
        at_zero_defined = np.ones(len(rows), dtype=bool)
        for i in np.flatnonzero(is_subnormal(x, fmt)):
            inputs = {**self.base, **dict.fromkeys((self.axis, *self.tied), float(x[i]))}
            read = self.flushed_input(fmt.name, rows[i][1], inputs, wanted[i][0].partial)
            if read is not None:  # None: inputs not flushed, a subnormal like any other
                read_as_zero[i] = True
                at_zero[i], at_zero_defined[i] = read
        flush_rounded, flush_defined = apply_flush(
            rounded, read_as_zero, at_zero, at_zero_defined, results, fmt
        )
        measures = judge(
            value,
            status,
            rounded,
            mantissa,
            exponent,
            np.ones(len(rows), dtype=bool),
            fmt.name,
            budget,
            tolerance_abs=tol_abs,
            flush_rounded=flush_rounded,
            flush_defined=flush_defined,
        )
        return [str(c) for c in measures["outcome"]]

    def _nearby(self, s: Search, fmt) -> int | None:
        """The ordinal of an edge another mode or method found for the same run inside
        this search's bracket (its sweep points differ, say by XLA's rounding), if any:
        where the search starts looking."""
        inside = [x for x in self.near.get(s.key[:4], ()) if math.isfinite(x)]
        if not inside:
            return None
        ords = ordinal(np.array(inside), fmt)
        within = [int(o) for o in ords if s.lo < o < s.hi]
        return within[0] if within else None

    @staticmethod
    def _pair(s: Search) -> tuple[int, int]:
        """The (inside, outside) ordinals of a closed bracket."""
        return (s.lo, s.hi) if s.side == "end" else (s.hi, s.lo)

    def _verify(self, groups: dict, evaluate, method, dtype, fmt, batch) -> dict:
        """Check, in every mode of ``groups`` ({mode: searches}), the edges already found
        for the same brackets (two inputs each, one judging for all); returns {mode:
        searches that still need a search}."""
        todo: dict[str, list[Search]] = {}
        wanted = []
        for mode, searches in groups.items():
            # A bracket between -0.0 and 0.0 is its own edge (one ordinal: nothing to
            # evaluate, the sweep judged both).
            known = [s for s in searches if s.exact and s.key in self.found and not s.zeros]
            todo[mode] = [s for s in searches if s.exact and s.key not in self.found]
            for s in todo[mode]:
                s.hint = self._nearby(s, fmt)
            pairs = []
            for s in known:
                inside, outside, _ = self.found[s.key]
                o_in, o_out = (int(v) for v in ordinal(np.array([inside, outside]), fmt))
                pairs += [(s, o_in), (s, o_out)]
            self._evaluate(evaluate, mode, method, dtype, fmt, pairs, batch)
            wanted += pairs
        got = self._exact(wanted, fmt)
        for mode, searches in groups.items():
            for s in searches:
                if not s.exact or s.key not in self.found or s.zeros:
                    continue
                inside, outside, outside_outcome = self.found[s.key]
                o_in, o_out = (int(v) for v in ordinal(np.array([inside, outside]), fmt))
                (c_in, v_in, r_in), (c_out, v_out, r_out) = got[(id(s), o_in)], got[(id(s), o_out)]
                if c_in in s.members and c_out == outside_outcome:
                    s.lo, s.hi = min(o_in, o_out), max(o_in, o_out)
                    s.outside_outcome, s.verified = c_out, True
                    s.values = {o_in: (v_in, r_in), o_out: (v_out, r_out)}
                    self.stats["verified"] += 1
                else:
                    # Not here: search, starting next to where the other way's edge was.
                    s.hint = o_in
                    todo[mode].append(s)
        return todo

    def _search(self, searches, evaluate, mode, method, dtype, fmt, batch, exact=False) -> None:
        """Narrow every bracket to adjacent floats, each round judged against the guide
        (or verified references, ``exact``)."""
        batch = _width(mode, method, batch, self.wide)
        active = [s for s in searches if not s.done]
        while active:
            # Guided rounds cost no mpmath: fill the batch. Verified ones cost a reference
            # per input: a few per bracket.
            k = max(1, min(MAX_SAMPLES if exact else 255, batch // len(active)))
            wanted = [(s, o) for s in active[:batch] for o in s.samples(k)][: 4 * batch]
            self._evaluate(evaluate, mode, method, dtype, fmt, wanted, batch)
            if exact:
                got = self._exact(wanted, fmt)
                outcomes = [got[(id(s), o)][0] for s, o in wanted]
            else:
                outcomes = self._guided(wanted, fmt)
            by_search: dict[int, list] = {}
            for (s, o), c in zip(wanted, outcomes):
                by_search.setdefault(id(s), []).append((o, c))
            for s in active[:batch]:
                s.update(by_search.get(id(s), []))
            active = [s for s in active if not s.done]

    def _settle(self, groups: dict, evaluate, method, dtype, fmt, batch) -> None:
        """Search every unverified edge in the modes of ``groups`` ({mode: searches}),
        guided; judge the final pairs against verified references (one judging for all
        modes); search again, verified, where the guide misled."""
        for mode, searches in groups.items():
            self._search(searches, evaluate, mode, method, dtype, fmt, batch)
        searched = [s for searches in groups.values() for s in searches if s.exact]
        wanted = [(s, o) for s in searched for o in self._pair(s) if o in s.rows]
        got = self._exact(wanted, fmt)
        for mode, searches in groups.items():
            misled = []
            for s in searches:
                o_in, o_out = self._pair(s)
                c_in = got.get((id(s), o_in), (None,))[0]
                c_out = got.get((id(s), o_out), (None,))[0]
                if (c_in is not None and c_in not in s.members) or (
                    c_out is not None and c_out in s.members
                ):
                    # Verified from here on, in the part of the bracket the exact
                    # outcomes at the guide's pair leave, next to where the guide led.
                    s.restart(c_in, c_out)
                    misled.append(s)
                    continue
                for o in (o_in, o_out):
                    if (id(s), o) in got:
                        s.values[o] = got[(id(s), o)][1:]
                if c_out is not None:
                    s.outside_outcome = c_out
            self.stats["misled"] += len(misled)
            self._search(misled, evaluate, mode, method, dtype, fmt, batch, exact=True)
            for s in misled:
                o_in, o_out = self._pair(s)
                got_pair = self._exact([(s, o) for o in (o_in, o_out) if o in s.rows], fmt)
                for (_, o), v in got_pair.items():
                    s.values[o] = v[1:]
                if (id(s), o_out) in got_pair:
                    s.outside_outcome = got_pair[(id(s), o_out)][0]

    # -- the stage's entry point ----------------------------------------------------
    def bisect(
        self,
        judged: pd.DataFrame,
        method: str,
        dtype: str,
        modes: Sequence[str],
        evaluate: Evaluator,
        batch: int,
    ) -> list[dict]:
        """Edges of every run in ``judged`` (this method and dtype, every mode, judged
        rows of the sweep), searched with ``evaluate(mode, inputs) -> {impl: {partial:
        values | None | message}}`` in batches of ``batch`` inputs. The first mode
        searches; the others verify its edges and search only where they differ."""
        fmt = FORMATS[dtype]
        groups = {}
        for mode in modes:
            part = judged[judged["mode"] == mode]
            if not part.empty:
                groups[mode] = episode_searches(self.axis, self.segments, part, fmt)
        rows = []
        lead = list(groups)[:1]
        for chosen in (lead, list(groups)[1:]):
            stage = {m: groups[m] for m in chosen}
            if not stage:
                continue
            todo = self._verify(stage, evaluate, method, dtype, fmt, batch)
            self._settle(todo, evaluate, method, dtype, fmt, batch)
            for mode in chosen:
                mirror(groups[mode])
                for s in groups[mode]:
                    rows.append(self._edge(s, method, mode, dtype, fmt))
        self.stats["edges"] += len(rows)
        return rows

    def _edge(self, s: Search, method: str, mode: str, dtype: str, fmt) -> dict:
        row = s.edge(method, mode, dtype, fmt)
        if s.exact:
            self.found.setdefault(s.key, (row["inside"], row["outside"], s.outside_outcome))
            self.near.setdefault(s.key[:4], []).append(row["inside"])
        return row
