"""Runs of one outcome along a swept input: what a finding and a stable domain cover.

One definition, used by the bisection (which edges to find exactly), the findings
(which intervals to report) and the stable domains (where every point is ``ok``).
Along the points of one combination, sorted by the swept input:

- the sweep's pieces (:func:`harness.cases.points.segments`) are never bridged: nothing was
  evaluated between them;
- a point whose reference did not verify (``ref_unreliable``) ends every run: it was not
  judged, so nothing is known there;
- a ``flushed`` point (the platform's effect, reported apart) is left out: it neither
  ends nor extends a run;
- an **episode** is a maximal stretch of points with one failing outcome, where at most
  :data:`FLICKER` consecutive ``ok`` points between two of them do not end it: rounding
  noise near a tolerance flickers across it, and a reader wants one statement
  ("inaccurate at 14 of 17 points in [a, b]"), not seven;
- where failing outcomes *alternate* (wrong, zero, wrong, zero: a kernel returning
  garbage or 0 from one input to the next), the stretch from the first to the last run
  of a repeated outcome is one **mixed** episode, named by its most severe outcome,
  with the count of each;
- a **stable run** is a maximal stretch of ``ok`` points outside every episode.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

__all__ = ["FLICKER", "SEVERITY", "Run", "grid_runs", "runs"]

#: Consecutive ``ok`` points that may lie inside an episode of a failure without ending it.
FLICKER = 3

_NOT_JUDGED = ("ref_unreliable",)


@dataclasses.dataclass(frozen=True)
class Run:
    """Points ``first..last`` (indices into the sorted points) with ``outcome``: ``ok``
    for a stable run, else an episode of that failure holding ``hits`` of them."""

    outcome: str
    first: int
    last: int
    hits: int
    # The neighbours outside the run in the same piece (-1: none, the piece ends there
    # or an unreliable point does).
    before: int
    after: int
    # Points per outcome inside the run ((("wrong", 9), ("zero", 7)) for a mixed one).
    counts: tuple = ()

    @property
    def mixed(self) -> bool:
        return len(self.counts) > 1


def runs(outcomes: np.ndarray, pieces: np.ndarray) -> list[Run]:
    """Episodes and stable runs of sorted points (``outcomes`` as strings, ``pieces`` the
    piece of the sweep each point lies in); ``flushed`` points must be left out first."""
    outcomes = np.asarray(outcomes).astype(str)
    n = len(outcomes)
    out: list[Run] = []
    start = 0
    while start < n:
        # A block: one piece, no unreliable point inside.
        end = start
        while (
            end + 1 < n
            and pieces[end + 1] == pieces[start]
            and outcomes[end + 1] not in _NOT_JUDGED
        ):
            end += 1
        if outcomes[start] in _NOT_JUDGED:
            start += 1
            continue
        out += _block(outcomes, start, end)
        start = end + 1
    return out


#: Most severe first: the name of a mixed episode.
SEVERITY = ("wrong", "error", "nan", "inf", "missing", "zero", "inaccurate")


def _block(outcomes: np.ndarray, lo: int, hi: int) -> list[Run]:
    """Runs within points ``lo..hi`` (one piece, all judged)."""
    spans: list[list] = []  # [outcome, first, last, {outcome: hits}]
    i = lo
    while i <= hi:
        o = str(outcomes[i])
        j = i
        while j + 1 <= hi and outcomes[j + 1] == o:
            j += 1
        flicker = (
            o != "ok"
            and len(spans) >= 2
            and spans[-1][0] == "ok"
            and spans[-1][2] - spans[-1][1] < FLICKER
            and spans[-2][0] == o
        )
        if flicker:
            spans.pop()
            spans[-1][2] = j
            spans[-1][3][o] += j - i + 1
        else:
            spans.append([o, i, j, {o: j - i + 1}])
        i = j + 1
    return [
        Run(
            o,
            first,
            last,
            sum(hits.values()),
            first - 1 if first > lo else -1,
            last + 1 if last < hi else -1,
            tuple(sorted(hits.items())),
        )
        for o, first, last, hits in _mixed(spans)
    ]


def _mixed(spans: list[list]) -> list[list]:
    """Merge each stretch of adjacent failure spans in which an outcome repeats."""
    out: list[list] = []
    k = 0
    while k < len(spans):
        if spans[k][0] == "ok":
            out.append(spans[k])
            k += 1
            continue
        m = k
        while m + 1 < len(spans) and spans[m + 1][0] != "ok":
            m += 1
        stretch = spans[k : m + 1]  # adjacent failures, no ok between
        names = [s[0] for s in stretch]
        covered = [False] * len(stretch)
        for name in set(names):
            where = [i for i, n in enumerate(names) if n == name]
            if len(where) > 1:
                for i in range(where[0], where[-1] + 1):
                    covered[i] = True
        i = 0
        while i < len(stretch):
            if not covered[i]:
                out.append(stretch[i])
                i += 1
                continue
            j = i
            while j + 1 < len(stretch) and covered[j + 1]:
                j += 1
            hits: dict[str, int] = {}
            for s in stretch[i : j + 1]:
                for o, c in s[3].items():
                    hits[o] = hits.get(o, 0) + c
            worst = next(o for o in SEVERITY if o in hits)
            out.append([worst, stretch[i][1], stretch[j][2], hits])
            i = j + 1
        k = m + 1
    return out


def grid_runs(group, free) -> list[tuple]:
    """On a grid (``group``: one combination's rows; ``free``: its free inputs): one "run"
    per failing outcome, the set of its points, as :func:`harness.judge.findings.find`
    reads a run along an axis (the run, its bounds, its rows)."""
    out = []
    outcome = group["outcome"].astype(str)
    for name in sorted(set(outcome) - {"ok", "ref_unreliable", "flushed", "not_applicable"}):
        at = (outcome == name).to_numpy()
        rows = group.index.to_numpy()[at]
        x = group[free[0]].to_numpy(np.float64)[at]
        lo, hi = float(x.min()), float(x.max())
        run = Run(name, 0, len(rows) - 1, len(rows), -1, -1, ((name, len(rows)),))
        out.append((run, lo, hi, False, False, math.nan, math.nan, True, True, rows))
    return out
