"""The evaluation stage's bisection of edges (:mod:`harness.edges.bisection`): judge each
(dtype, method) of a case as soon as it is evaluated, while the functions TensorFlow
traced for it are still alive, and find the exact edges of its runs. No TensorFlow here:
the evaluation passes a function that evaluates a batch.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pandas as pd

from harness.edges.bisection import EDGE_COLUMNS, Bisector, Evaluator
from harness.numerics.floats import FORMATS, is_subnormal

__all__ = ["EdgeFinder", "free_axis"]


def free_axis(case, points: pd.DataFrame) -> tuple[str, list[str]] | None:
    """``(axis, tied)``: the one swept input of a 1-D case and the inputs tied to it, or
    ``None`` when more than one input varies (a grid)."""
    names = list(case.input_names)
    varying = [n for n in names if points[n].nunique() > 1]
    if not varying:
        return None
    axis = varying[0]
    tied = [n for n in varying[1:] if np.array_equal(points[n], points[axis])]
    if len(tied) != len(varying) - 1:
        return None
    return axis, tied


class EdgeFinder:
    """The evaluation stage's bisection: judges each (method, dtype) of a case as soon as
    it is evaluated and finds the exact edges of its runs (:class:`Bisector`), while the
    functions TensorFlow traced for it are still alive.

    ``reference`` is the case's reference table; ``store`` its
    :class:`harness.reference.table.ReferenceStore` (new inputs are verified and cached there);
    ``tolerance`` and ``flags`` judge as the compare stage will (the study's tolerance and
    the platform's flush probe). ``judged``, when set, is told each (method, dtype)'s
    judged sweep rows as soon as they are judged (``harness run`` prints them: the first
    verdicts, before the case is done).
    """

    judged = None

    def __init__(self, case, points, reference, store, tolerance, flags, segments, wide=True):
        self.case, self.points, self.reference = case, points, reference
        self.wide = wide  # the back end's ``eager_wide`` (harness.backends.spec)
        self.store, self.tolerance, self.flags = store, tolerance, flags
        self.segments = segments or {}
        self.by_label = {case.label(p): p for p in case.partials}
        self.bisectors: dict[str, Bisector | None] = {}
        self._flushed: dict[tuple, tuple[float, bool]] = {}
        self.rows: list[dict] = []

    def _bisector(self, dtype: str) -> Bisector | None:
        if dtype not in self.bisectors:
            pts = self.points[dtype]
            found = free_axis(self.case, pts) if len(pts) > 1 else None
            if found is None:
                self.bisectors[dtype] = None
            else:
                axis, tied = found
                others = [n for n in self.case.input_names if n not in (axis, *tied)]
                base = {n: float(pts[n].iloc[0]) for n in others}
                self.bisectors[dtype] = Bisector(
                    axis,
                    tied,
                    base,
                    self.segments.get(axis),
                    lambda rows, dtype=dtype: self.judge(rows, dtype),
                    self.tolerance,
                    lambda d, m: bool(self._flags(d, m).get("results")),
                    self.flushed_input,
                    self.wide,
                )
        return self.bisectors[dtype]

    def _flags(self, dtype: str, mode: str) -> dict:
        return ((self.flags or {}).get(dtype) or {}).get(mode) or {}

    def flushed_input(
        self, dtype: str, mode: str, inputs: dict[str, float], label: str
    ) -> tuple[float, bool] | None:
        """The reference of partial ``label`` at ``inputs`` as the platform's flush of
        subnormal inputs reads them (each 0, its sign kept), rounded to ``dtype``, and
        whether it is defined there; ``None`` where (dtype, mode) does not flush inputs."""
        if not self._flags(dtype, mode).get("inputs"):
            return None
        from harness.numerics.flush import flushed_key, rounded_at

        fmt = FORMATS[dtype]
        key = flushed_key(tuple(float(inputs[n]) for n in self.case.input_names), fmt)
        memo = (dtype, key, label)
        hit = self._flushed.get(memo)
        if hit is None:
            partial = self.by_label[label]
            self.store.ensure([key], [partial[:k] for k in range(len(partial) + 1)])
            hit = self._flushed[memo] = rounded_at(self.store, key, partial, fmt)
        return hit

    def judge(self, rows: pd.DataFrame, dtype: str) -> pd.DataFrame:
        """Judge evaluation rows at any inputs of ``dtype`` (the order is kept), against
        verified references (computed and cached as needed)."""
        store = self.store
        from harness.judge.compare import judge_frame
        from harness.numerics.fd_model import FD_COLUMNS
        from harness.numerics.flush import flush_columns
        from harness.reference.table import reference_rows

        names = list(self.case.input_names)
        fmt = FORMATS[dtype]
        pts = rows[names].drop_duplicates().reset_index(drop=True)
        pts.insert(0, "point", np.arange(len(pts), dtype=np.int64))
        pts["subnormal"] = np.zeros(len(pts), dtype=bool)
        for n in names:
            pts["subnormal"] |= is_subnormal(pts[n].to_numpy(np.float64), fmt)
        wanted = {self.by_label[p] for p in rows["partial"].unique()}
        partials = sorted({q[:k] for q in wanted for k in range(len(q) + 1)}, key=len)
        keys = list(pts[names].itertuples(index=False, name=None))
        store.ensure(keys, partials)
        # Reference rows for the rows' own derivatives alone (the lower ones are ensured
        # above, not judged; an error model fetches the derivatives it needs itself).
        narrowed = dataclasses.replace(self.case, partials=tuple(sorted(wanted, key=len)))
        ref = reference_rows(narrowed, {dtype: pts}, store, model="fd_tolerance" not in rows)
        if "fd_tolerance" in rows:  # given by the caller (the bracket's model, interpolated)
            ref = ref.drop(columns=list(FD_COLUMNS))
        ref = ref.drop(columns=[*names, "order"]).rename(columns={"message": "reference_message"})
        frame = rows.drop(columns=["point"]).merge(pts[[*names, "point"]], on=names, how="left")
        frame["order"] = [len(self.by_label[p]) for p in frame["partial"]]
        frame["seq"] = np.arange(len(frame))
        frame = frame.merge(ref, on=["dtype", "point", "partial"], how="left")
        frame["flush_rounded"], frame["flush_defined"] = flush_columns(frame, self.flags)
        return judge_frame(frame, self.tolerance).sort_values("seq").reset_index(drop=True)

    def after_method(
        self,
        method: str,
        dtype: str,
        rows: pd.DataFrame,
        modes: Sequence[str],
        evaluate: Evaluator,
        batch: int,
    ) -> None:
        """Judge the sweep rows of one (method, dtype) in ``modes`` and bisect their edges
        (a mode left out keeps its edges at the sweep's points)."""
        bisector = self._bisector(dtype)
        rows = rows[rows["mode"].isin(modes)]
        if bisector is None or rows.empty:
            return
        from harness.judge.compare import join_reference, judge_frame

        reference = self.reference[self.reference["dtype"] == dtype]
        frame = join_reference(self.case, rows, reference, self.flags)
        judged = judge_frame(frame, self.tolerance)
        if self.judged is not None:
            self.judged(method, dtype, judged)
        self.rows += bisector.bisect(judged, method, dtype, modes, evaluate, batch)

    def table(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=list(EDGE_COLUMNS))

    @property
    def stats(self) -> dict:
        total: dict = {"calls": 0, "points": 0, "edges": 0, "verified": 0, "misled": 0}
        spent: dict[str, float] = {}
        for b in self.bisectors.values():
            if b is not None:
                for k, v in b.stats.items():
                    if isinstance(v, dict):  # seconds per method and mode
                        for where, t in v.items():
                            spent[where] = spent.get(where, 0.0) + t
                    else:
                        total[k] += v
        total["tensorflow_seconds"] = {k: round(v, 3) for k, v in sorted(spent.items())}
        return total
