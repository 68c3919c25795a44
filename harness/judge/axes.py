"""Which of a case's inputs vary across its errors table, gathered part by part.

A finding and a stable domain are stated along the inputs that vary: one swept input
(inputs tied to it, ``a = b = t``, are the same axis) or a grid of several. Whether an
input varies, or equals another at every row, is a fact of the whole errors table, not
of one dtype's part of it, so the compare stage, which judges a case one dtype at a time
(:mod:`harness.stages.compare`), gathers it from every part (:meth:`Axes.add`) before it
states anything; a whole table gives the same answer (:meth:`Axes.of`).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd

__all__ = ["Axes"]


class Axes:
    """The inputs ``names`` as the rows seen so far have them."""

    def __init__(self, names: Sequence[str]):
        self.names = list(names)
        self._values: dict[str, list] = {n: [] for n in self.names}  # up to two distinct
        pairs = list(combinations(self.names, 2))
        self._equal = dict.fromkeys(pairs, True)  # equal at every row (NaN unequal)
        self._equal_nan = dict.fromkeys(pairs, True)  # the same, NaN equal to NaN

    @classmethod
    def of(cls, errors: pd.DataFrame, names: Sequence[str]) -> Axes:
        axes = cls(names)
        axes.add(errors)
        return axes

    def add(self, errors: pd.DataFrame) -> None:
        """Take in one part of the errors table."""
        columns = {n: errors[n].to_numpy() for n in self.names}
        for name, seen in self._values.items():
            if len(seen) < 2:
                for v in pd.unique(pd.Series(columns[name]).dropna())[:2].tolist():
                    if v not in seen and len(seen) < 2:
                        seen.append(v)
        for a, b in self._equal:
            if self._equal_nan[(a, b)]:
                x, y = columns[a], columns[b]
                self._equal[(a, b)] &= bool(np.array_equal(x, y))
                self._equal_nan[(a, b)] = bool(np.array_equal(x, y, equal_nan=True))

    def varies(self, name: str) -> bool:
        """Whether ``name`` takes more than one value (NaN apart: ``Series.nunique``)."""
        return len(self._values[name]) > 1

    def same(self, a: str, b: str, equal_nan: bool = False) -> bool:
        """Whether inputs ``a`` and ``b`` are equal at every row."""
        if a == b:
            return True
        key = (a, b) if (a, b) in self._equal else (b, a)
        return (self._equal_nan if equal_nan else self._equal)[key]

    def free(self) -> list[str]:
        """The inputs that vary, in the case's order."""
        return [n for n in self.names if self.varies(n)]

    def one_axis(self) -> bool:
        """Whether the inputs that vary are one swept input (the others tied to it)."""
        free = self.free()
        return bool(free) and all(self.same(n, free[0]) for n in free[1:])

    def independent(self) -> list[str]:
        """The inputs that vary independently: an input equal to an earlier one (a tie,
        NaN equal to NaN) and one with a single value dropped; the first input if none."""
        out: list[str] = []
        for name in self.names:
            if any(self.same(name, f, equal_nan=True) for f in out):
                continue
            if self.varies(name):
                out.append(name)
        return out or self.names[:1]
