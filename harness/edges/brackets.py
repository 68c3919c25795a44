"""Brackets of the bisection (:mod:`harness.edges.bisection`): one search for the exact edge of
a run between two sweep points, how it narrows, the interpolated reference that steers
it, and the outcomes that need no reference at all. No TensorFlow here."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from harness.cases.points import segment_index
from harness.judge.runs import runs
from harness.numerics.floats import from_ordinal, ordinal, sweep_order

__all__ = [
    "EDGE_COLUMNS",
    "Search",
    "episode_searches",
    "guide_at",
    "guide_magnitude",
    "guide_text",
    "guides_at",
    "mirror",
    "without_reference",
]

#: What an edge records (one row per edge of a run of one outcome).
EDGE_COLUMNS = (
    "backend",
    "implementation",
    "method",
    "mode",
    "dtype",
    "partial",
    "side",  # "start": the run's first input; "end": its last
    "outcome",  # the run's outcome
    "coarse_inside",  # the sweep point at the run's edge
    "coarse_outside",  # its neighbour in the sweep, with another outcome
    "inside",  # the exact float: the run's first (start) or last (end) input
    "outside",  # the adjacent float, with another outcome
    "outside_outcome",
    "value_inside",
    "value_outside",
    "reference_inside",
    "reference_outside",
    "rounds",
    "verified",  # True: an edge found by an earlier mode or method, checked here
    "exact",  # False: left at the sweep points (accuracy drifting across the tolerance)
)


@dataclasses.dataclass
class Search:
    impl: str
    partial: str
    side: str  # "end": the run holds at lo; "start": it holds at hi
    outcome: str
    members: frozenset  # the outcomes inside the run (several for a mixed one)
    lo: int
    hi: int
    coarse_inside: float
    coarse_outside: float
    rounds: int = 0
    outside_outcome: str = ""
    values: dict = dataclasses.field(default_factory=dict)  # ordinal -> (value, ref)
    verified: bool = False
    rows: dict = dataclasses.field(default_factory=dict)  # ordinal -> evaluation row
    coarse: tuple = ()  # the bracket it started from
    # The bracket's verified references and tolerances, interpolated to steer the search.
    guide: tuple = ()
    exact: bool = True  # False: left at the sweep points (see _searches)
    hint: int | None = None  # the ordinal of an edge found for this bracket elsewhere
    mirrored: bool = False  # True: the neighbouring run's edge
    # The sweep's (value, reference) at its inside and outside points: -0.0 and 0.0 share
    # an ordinal, so a bracket between the two zeros keeps each one's here.
    ends: tuple = ()

    @property
    def mixed(self) -> bool:
        return len(self.members) > 1

    @property
    def key(self) -> tuple:
        return (
            self.impl,
            self.partial,
            self.side,
            self.members,
            self.coarse_inside,
            self.coarse_outside,
        )

    @property
    def done(self) -> bool:
        return self.hi - self.lo <= 1 or not self.exact

    @property
    def zeros(self) -> bool:
        """Whether the sweep's bracket is -0.0 and 0.0: adjacent, nothing to search."""
        return bool(self.coarse) and self.coarse[0] == self.coarse[1]

    def samples(self, k: int) -> list[int]:
        """The next round's inputs (ordinals): ``k`` evenly inside the bracket, or, in the
        first round of a search with a ``hint`` (the edge another mode or method found
        here), the inputs 1, 2, 4, 8, ... ordinals either side of it (at most 2 x 64):
        an edge a few ulps away is bracketed tightly at once, one far away to within a
        factor of 2 of its distance."""
        if self.hint is not None and self.rounds == 0:
            picks = {self.hint}
            for j in range(64):
                for o in (self.hint - (1 << j), self.hint + (1 << j)):
                    if self.lo < o < self.hi:
                        picks.add(o)
            return sorted(picks)
        gap = self.hi - self.lo
        picks = {self.lo + math.ceil(j * gap / (k + 1)) for j in range(1, k + 1)}
        return sorted(o for o in picks if self.lo < o < self.hi)

    def zero(self) -> float:
        """The input to evaluate at ordinal 0: the sweep's own zero where an end of its
        bracket is one (-0.0 and 0.0 share the ordinal, which reads back as 0.0), else
        0.0."""
        if self.coarse:
            c_in, c_out = self.coarse if self.side == "end" else self.coarse[::-1]
            if c_in == 0:
                return self.coarse_inside
            if c_out == 0:
                return self.coarse_outside
        return 0.0

    def edge(self, method: str, mode: str, dtype: str, fmt) -> dict:
        """The edge this search found, as a row of :data:`EDGE_COLUMNS`."""
        if self.exact:
            o_in, o_out = (self.lo, self.hi) if self.side == "end" else (self.hi, self.lo)
        else:
            o_in, o_out = self.coarse if self.side == "end" else self.coarse[::-1]
        inside, outside = (float(v) for v in from_ordinal(np.array([o_in, o_out]), fmt))
        # A zero at an end of the sweep's bracket is the sweep's point there, with its
        # sign (ordinal 0 reads back as 0.0); between the two zeros, each its own.
        if self.zeros:
            inside, outside = self.coarse_inside, self.coarse_outside
        else:
            inside = self.zero() if o_in == 0 else inside
            outside = self.zero() if o_out == 0 else outside
        v_in, r_in = self.values.get(o_in, (math.nan, ""))
        v_out, r_out = self.values.get(o_out, (math.nan, ""))
        if self.zeros and self.ends:
            (v_in, r_in), (v_out, r_out) = self.ends
        return {
            "implementation": self.impl,
            "method": method,
            "mode": mode,
            "dtype": dtype,
            "partial": self.partial,
            "side": self.side,
            "outcome": self.outcome,
            "coarse_inside": self.coarse_inside,
            "coarse_outside": self.coarse_outside,
            "inside": inside,
            "outside": outside,
            "outside_outcome": self.outside_outcome,
            "value_inside": v_in,
            "value_outside": v_out,
            "reference_inside": r_in,
            "reference_outside": r_out,
            "rounds": self.rounds,
            "verified": self.verified,
            "exact": self.exact,
        }

    def restart(self, inside: str | None, outside: str | None) -> None:
        """Search again from the bracket the sweep gave, where the guide misled: the
        outcomes ``inside`` and ``outside`` judged exactly at the guided pair (None: not
        evaluated) narrow it. Inside that pair is not in the run: the edge lies between
        the run's sweep point and there; outside it is still in the run: between there and
        the other sweep point. The search starts next to that end (:meth:`samples`). Only
        inputs strictly inside the sweep's bracket count: its ends are the sweep's points,
        judged there (-0.0 and 0.0 share an ordinal, one input to the search)."""
        o_in, o_out = (self.lo, self.hi) if self.side == "end" else (self.hi, self.lo)
        lo, hi = self.coarse
        end = self.side == "end"

        def within(o: int) -> bool:
            return self.coarse[0] < o < self.coarse[1]

        self.hint = o_in
        if inside is not None and inside not in self.members and within(o_in):
            lo, hi = (lo, o_in) if end else (o_in, hi)
        elif outside is not None and outside in self.members and within(o_out):
            lo, hi = (o_out, hi) if end else (lo, o_out)
            self.hint = o_out
        self.rows = {o: self.rows[o] for o in (lo, hi) if within(o) and o in self.rows}
        self.lo, self.hi, self.rounds = lo, hi, 0

    def update(self, judged: list[tuple[int, str]]) -> None:
        """Narrow the bracket with the outcomes at sampled ordinals (ascending)."""
        self.rounds += 1
        if self.side == "end":
            prev = self.lo
            for o, outcome in judged:
                if outcome not in self.members:
                    self.lo, self.hi, self.outside_outcome = prev, o, outcome
                    return
                prev = o
            self.lo = prev
        else:
            nxt = self.hi
            for o, outcome in reversed(judged):
                if outcome not in self.members:
                    self.lo, self.hi, self.outside_outcome = o, nxt, outcome
                    return
                nxt = o
            self.hi = nxt


def guide_at(guide: tuple, x: float) -> tuple[float, int, float]:
    """``(mantissa, exponent, tolerance_abs)`` at ``x``, interpolated between the
    bracket's two verified references: linearly in log2|truth| where both have one sign
    (a truth varies smoothly over a bracket of a sweep), linearly in the truth otherwise.
    Only steers a search: every edge reported is judged against verified references."""
    _, (xa, ma, ea, ta), (xb, mb, eb, tb) = guide
    w = 0.0 if xb == xa else (x - xa) / (xb - xa)
    tol = math.nan
    if math.isfinite(ta) and math.isfinite(tb) and ta > 0 and tb > 0:
        tol = math.exp((1 - w) * math.log(ta) + w * math.log(tb))
    if ma != 0 and mb != 0 and (ma > 0) == (mb > 0):
        log2 = (1 - w) * (ea + math.log2(abs(ma))) + w * (eb + math.log2(abs(mb)))
        e = math.floor(log2) + 1
        return math.copysign(2.0 ** (log2 - e), ma), e, tol
    a = math.ldexp(ma, min(int(ea), 1000)) if ma else 0.0
    b = math.ldexp(mb, min(int(eb), 1000)) if mb else 0.0
    m, e = math.frexp((1 - w) * a + w * b)
    return m, e, tol


def guides_at(guides: list[tuple], x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`guide_at` for many (guide, x) pairs at once: ``(mantissa, exponent,
    tolerance_abs)`` arrays."""
    a = np.array([g[1] for g in guides], dtype=np.float64).reshape(len(guides), 4)
    b = np.array([g[2] for g in guides], dtype=np.float64).reshape(len(guides), 4)
    xa, ma, ea, ta = a.T
    xb, mb, eb, tb = b.T
    with np.errstate(all="ignore"):
        w = np.where(xb == xa, 0.0, (x - xa) / (xb - xa))
        tol = np.where(
            np.isfinite(ta) & np.isfinite(tb) & (ta > 0) & (tb > 0),
            np.exp((1 - w) * np.log(ta) + w * np.log(tb)),
            np.nan,
        )
        same = (ma != 0) & (mb != 0) & (np.sign(ma) == np.sign(mb))
        log2 = (1 - w) * (ea + np.log2(np.abs(ma))) + w * (eb + np.log2(np.abs(mb)))
        e_log = np.floor(np.where(same, log2, 0.0)) + 1
        m_log = np.copysign(np.exp2(np.where(same, log2, 0.0) - e_log), ma)
        lin = (1 - w) * np.ldexp(ma, np.minimum(ea, 1000).astype(np.int64)) + w * np.ldexp(
            mb, np.minimum(eb, 1000).astype(np.int64)
        )
        m_lin, e_lin = np.frexp(np.where(same, 0.0, lin))
    mantissa = np.where(same, m_log, m_lin)
    exponent = np.where(same, e_log, e_lin).astype(np.int64)
    return mantissa, exponent, tol


def guide_magnitude(mantissa: float, exponent: int) -> float:
    """``mantissa * 2**exponent`` as a float: an infinity beyond the largest, 0 below the
    smallest (a truth such as exp(1000)'s, far past float64, guides a search too)."""
    with np.errstate(over="ignore", under="ignore"):
        return float(np.ldexp(mantissa, int(np.clip(exponent, -20000, 20000))))


def guide_text(mantissa: float, exponent: int) -> str:
    """The guide's truth in six digits, also where it lies beyond float64 (``1.61143e+357``)."""
    size = guide_magnitude(mantissa, exponent)
    if mantissa == 0 or (math.isfinite(size) and size != 0):
        return f"{size:.6g}"
    import mpmath

    return mpmath.nstr(mpmath.ldexp(mpmath.mpf(mantissa), int(exponent)), 6)


def mirror(searches: list[Search]) -> None:
    """An unsearched edge takes the exact edge its neighbouring run found from the other
    side (the end of an inaccurate run is the start of the zero run after it), where
    that run's search saw this run's outcome just outside it."""
    by_bracket = {
        (s.impl, s.partial, s.coarse_inside, s.coarse_outside): s for s in searches if s.exact
    }
    for s in searches:
        if s.exact:
            continue
        other = by_bracket.get((s.impl, s.partial, s.coarse_outside, s.coarse_inside))
        if other is not None and other.done and other.outside_outcome in s.members:
            s.lo, s.hi, s.exact = other.lo, other.hi, True
            s.outside_outcome = other.outcome if not other.mixed else s.outside_outcome
            s.values = dict(other.values)
            s.mirrored = True


def without_reference(frame: pd.DataFrame, axis: str, fmt) -> pd.Series:
    """The outcome of rows that need no reference (None elsewhere)."""
    from harness.numerics.floats import is_subnormal

    out = pd.Series([None] * len(frame), dtype=object)
    status = frame["status"].to_numpy()
    out[status == "error"] = "error"
    out[status == "missing"] = "missing"
    nan = (status == "value") & np.isnan(frame["value"].to_numpy(np.float64))
    nan &= ~is_subnormal(frame[axis].to_numpy(np.float64), fmt)
    out[nan] = "nan"
    return out


def episode_searches(axis: str, segments: list | None, judged: pd.DataFrame, fmt) -> list[Search]:
    """A search for each edge of each episode of a failure (:mod:`harness.judge.runs`) that
    has a judged neighbour in the same piece of the sweep."""
    out = []
    keys = ["implementation", "partial"]
    for (impl, partial), g in judged.groupby(keys, sort=False, observed=True):
        g = g[g["outcome"] != "flushed"]
        g = g.iloc[sweep_order(g[axis].to_numpy(np.float64))]
        x = g[axis].to_numpy(np.float64)
        outcome = g["outcome"].astype(str).to_numpy()
        value = g["value"].to_numpy(np.float64)
        ref = g["reference"].astype(str).to_numpy()
        mantissa = g["reference_mantissa"].to_numpy(np.float64)
        exponent = g["reference_exponent"].to_numpy(np.int64)
        tol_abs = np.where(
            g["tolerance_unit"].to_numpy() == "absolute",
            g["tolerance"].to_numpy(np.float64),
            np.nan,
        )
        order = int(g["order"].iloc[0])
        piece = segment_index(x, segments) if segments else np.zeros(len(x), int)
        for run in runs(outcome, piece):
            if run.outcome == "ok":
                continue
            for side, inside, outside in (
                ("start", run.first, run.before),
                ("end", run.last, run.after),
            ):
                if outside < 0:
                    continue
                a, b = sorted((inside, outside))
                lo, hi = (int(o) for o in ordinal(np.array([x[a], x[b]]), fmt))
                members = frozenset(o for o, _ in run.counts)
                search = Search(
                    impl,
                    partial,
                    side,
                    run.outcome,
                    members,
                    lo,
                    hi,
                    float(x[inside]),
                    float(x[outside]),
                    outside_outcome=outcome[outside],
                    values={lo: (value[a], ref[a]), hi: (value[b], ref[b])},
                    coarse=(lo, hi),
                    ends=((value[inside], ref[inside]), (value[outside], ref[outside])),
                    guide=(
                        order,
                        (x[a], mantissa[a], exponent[a], tol_abs[a]),
                        (x[b], mantissa[b], exponent[b], tol_abs[b]),
                    ),
                )
                # An inaccurate run is not searched: against ok, accuracy drifts
                # across the tolerance (rounding noise makes such an edge flicker,
                # and the tolerance it crosses is a convention), so its edge stays
                # at the sweep points; against another failure, that failure's own
                # search finds the edge (see :func:`harness.edges.brackets.mirror`). Telling ok from
                # inaccurate needs a verified reference at every input of a search.
                if "inaccurate" in members:
                    search.exact = False
                    search.lo = search.hi = lo if side == "end" else hi
                out.append(search)
    return out
