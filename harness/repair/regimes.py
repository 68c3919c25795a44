"""Regimes: where two forms are each right on a different part of the range, one
``where`` that takes each where it is right (Herbie's regime inference, for every
derivative order asked, not only the value).

After the first round of judging, each form of the expression (the original's among
them) is right or not at each input value: right where every judged row there is
(every back end, method, mode, dtype and order; the study's unjudged outcomes count
neither way). :func:`regimes` finds, for each pair of forms, the split of the sorted
input values (or of their magnitudes: a form right near 0 on both sides, the other far
from it) that makes the most values right with the first form below it and the second
above, and keeps the splits that beat both forms alone. The threshold is the
shortest decimal between the two values the split falls between (their geometric mean
where both have one sign, a guide to the search); the edges of the regime's own verdicts
are bisected by the second round's judging like any others. One input only: a split of
several inputs' space is not a threshold.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from harness.cases import expressions as ex
from harness.repair.candidates import Candidate, described

__all__ = ["regimes", "right_by_value", "threshold"]


def right_by_value(
    errors: pd.DataFrame,
    names: Sequence[str],
    skip: Sequence[str],
    unjudged: Sequence[str],
    magnitude: bool = False,
) -> pd.DataFrame:
    """One row per input value (float32-rounded, so that each dtype's point is one; with
    ``magnitude``, per absolute value, both signs together), one column per
    implementation: right at every judged row there."""
    (x,) = names
    rows = errors[~errors["method"].isin(skip)].copy()
    at = rows[x].to_numpy(dtype="float64").astype("float32").astype("float64")
    rows["at"] = abs(at) if magnitude else at
    outcome = rows["outcome"].astype(str)
    rows["fails"] = ~(outcome.eq("ok") | outcome.isin(unjudged))
    table = rows.groupby(["at", "implementation"], observed=True)["fails"].any().unstack()
    return ~table.sort_index().fillna(True).astype(bool)


def threshold(low: float, high: float) -> float:
    """A shortest decimal in ``(low, high]``: their geometric mean (arithmetic where
    their signs differ) or ``high``, rounded to the fewest digits that stay inside."""
    if low > 0 or high < 0:
        mid = math.copysign(math.sqrt(abs(low) * abs(high)), high)
    else:
        mid = (low + high) / 2
    for digits in range(1, 18):
        for near in (mid, high):
            t = float(f"{near:.{digits}g}")
            if low < t <= high:
                return t
    return high


def _best_split(a: np.ndarray, b: np.ndarray) -> tuple[int, int]:
    """``(s, count)``: ``a`` right at ``[:s]`` and ``b`` at ``[s:]`` make ``count``."""
    left = np.concatenate([[0], np.cumsum(a)])
    right = np.concatenate([np.cumsum(b[::-1])[::-1], [0]])
    total = left + right
    s = int(np.argmax(total[1:-1])) + 1 if len(a) > 1 else 0
    return s, int(total[s])


def regimes(
    errors: pd.DataFrame,
    original: dict,
    implementation: str,
    names: Sequence[str],
    forms: dict[str, str],
    first: int,
    skip: Sequence[str],
    unjudged: Sequence[str],
    most: int = 2,
) -> tuple[Candidate, ...]:
    """Up to ``most`` regime candidates (numbered from ``first``) from the first round's
    ``errors``: ``forms`` maps each implementation that may be a side (the original and
    the expression's rewrites) to its expression's text; ``original``: the original's
    mapping, whose rules a regime keeps."""
    if len(names) != 1 or len(forms) < 2:
        return ()
    (x,) = names
    found = []  # (count, lower side, upper side, what is split, threshold, values)
    # Split the input itself, or its magnitude (a form right near 0 on both sides, the
    # other far from it).
    for split, magnitude in ((x, False), (f"abs({x})", True)):
        right = right_by_value(errors, names, skip, unjudged, magnitude)
        sides = [n for n in forms if n in right.columns]
        at = right.index.to_numpy()
        for lower in sides:
            for upper in sides:
                if upper == lower:
                    continue
                a, b = right[lower].to_numpy(), right[upper].to_numpy()
                s, count = _best_split(a, b)
                if 0 < s < len(at) and count > max(a.sum(), b.sum()):
                    t = threshold(at[s - 1], at[s])
                    share = count / len(at)
                    found.append((share, lower, upper, split, t, f"{count} of {len(at)}"))
    found.sort(key=lambda r: (-r[0], r[3] != x, r[1], r[2]))  # the input itself on a tie
    out = []
    for _, lower, upper, split, t, count in found[:most]:
        text = f"where({split} > {t!r}, {forms[upper]}, {forms[lower]})"
        ex.parse(text, set(names))  # a form the case language holds
        mapping = {k: v for k, v in original.items() if k in ("gradient", "tangent")}
        mapping["expression"] = text
        part = f"regime ({lower} where {split} <= {t!r}, {upper} above: {count} values)"
        out.append(
            Candidate(
                implementation,
                first + len(out),
                part,
                text,
                described(mapping, implementation, part),
            )
        )
    return tuple(out)
