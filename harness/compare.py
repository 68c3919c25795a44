"""The compare stage: judge every evaluated value against the rounded reference.

Measures (all per row, in the row's dtype):

- ``ulps``: the ordinal distance between the result and the reference rounded to the
  dtype (:func:`harness.floats.ulps_between`), defined across 0, subnormals and ±inf,
  counted exactly (a nullable unsigned 64-bit integer); missing when the result is NaN
  or there is no result;
- ``bits``: ``log2(1 + ulps)``, Herbie's bits of error; a NaN result counts as the
  dtype's width (16, 32 or 64: nothing right);
- ``rel_error``: ``|result - reference| / |reference|`` against the *exact* reference,
  computed from its mantissa and exponent so it never overflows (``inf`` when the
  reference is 0 and the result is not).

Outcome (first rule that applies):

==================  =============================================================
``error``           the framework raised; the message is kept
``missing``         the framework returned no gradient (``None``)
``ref_unreliable``  the reference did not verify; the row is kept out of verdicts
``nan``             the result is NaN
``inf``             ±inf where the rounded reference is finite
``zero``            0 where the rounded reference is not
``ok``              within the tolerance in ulps (an overflowing true value makes
                    ±inf the right answer; ±0 match each other)
``wrong``           finite, and the wrong sign or magnitude: off by a factor of 2
                    or more either way (relative error >= 1 above the reference,
                    >= 1/2 below it)
``inaccurate``      finite, beyond tolerance, right sign and magnitude
==================  =============================================================

An infinite result of the wrong sign where the reference overflows is ``wrong``.

Expectations. A case declares known failures; every row an expectation covers gets
``expected_outcome`` and ``expected`` = ``held`` (the outcome is the declared one) or
``broken`` (it is not: the failure did not happen, or something else did). Rows no
expectation covers have ``expected`` = ``""``. When several expectations cover a row,
the last one declared wins (put general ones first, exceptions after).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .cases import Case, Expectation
from .floats import FORMATS, bits_of_error, ulps_between

__all__ = [
    "ERROR_COLUMNS",
    "OUTCOMES",
    "apply_expectations",
    "compare",
    "covers",
    "errors_table",
    "input_columns",
    "judge",
    "judge_frame",
]

OUTCOMES = ("ok", "inaccurate", "wrong", "nan", "inf", "zero", "missing", "error", "ref_unreliable")

ERROR_COLUMNS = ["case", "implementation", "method", "mode", "dtype", "order", "partial"]

# The errors table: these columns, with the case's inputs between the two groups.
_BEFORE_INPUTS = (*ERROR_COLUMNS, "point")
_AFTER_INPUTS = (
    "subnormal",
    "value",
    "reference",
    "reference_rounded",
    "ulps",
    "bits",
    "rel_error",
    "outcome",
    "expected",
    "expected_outcome",
    "expectation_reason",
    "tolerance_ulps",
    "tolerance_reason",
    "message",
    "seconds",
)


def input_columns(errors: pd.DataFrame) -> list[str]:
    """The case's input columns of an errors table, in declaration order."""
    fixed = {*_BEFORE_INPUTS, *_AFTER_INPUTS}
    return [c for c in errors.columns if c not in fixed]


def _relative_error(value: np.ndarray, mantissa: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """``|value - m 2^e| / |m 2^e|`` as ``|value 2^-e - m| / |m|``: no overflow."""
    with np.errstate(all="ignore"):
        scaled = np.ldexp(value, -exponent.astype(np.int64).clip(-100000, 100000))
        rel = np.abs(scaled - mantissa) / np.abs(mantissa)
        zero_ref = mantissa == 0
        rel = np.where(zero_ref, np.where(value == 0, 0.0, np.inf), rel)
    return rel


def judge(
    value: np.ndarray,
    status: np.ndarray,
    rounded: np.ndarray,
    mantissa: np.ndarray,
    exponent: np.ndarray,
    reliable: np.ndarray,
    dtype: str,
    tolerance_ulps: np.ndarray,
) -> dict[str, np.ndarray]:
    """``ulps bits rel_error outcome`` for rows of one dtype (vectorised)."""
    fmt = FORMATS[dtype]
    has_value = status == "value"
    v = np.where(has_value, value, np.nan)
    judged = has_value & reliable
    ulps = ulps_between(np.where(judged, v, np.nan), np.where(judged, rounded, np.nan), fmt)
    bits = np.where(judged, bits_of_error(ulps, fmt), np.nan)
    rel = np.where(judged, _relative_error(v, mantissa, exponent), np.nan)

    outcome = np.full(len(v), "inaccurate", dtype=object)
    finite = np.isfinite(v)
    with np.errstate(invalid="ignore"):
        sign_wrong = (np.sign(v) != np.sign(rounded)) & (v != 0) & (rounded != 0)
        budget = np.floor(np.clip(tolerance_ulps, 0, 2.0**63)).astype(np.uint64)
        within = (ulps <= budget).fillna(False).to_numpy(bool)
        # Off by a factor of 2 or more either way: relative error >= 1 above the
        # reference, >= 1/2 below it (4 for 1024 is not "right magnitude").
        too_small = (rel >= 0.5) & (np.abs(v) < np.abs(rounded))
    wrong = finite & ((rel >= 1) | sign_wrong | too_small)
    rules = [
        (status == "error", "error"),
        (status == "missing", "missing"),
        (~reliable, "ref_unreliable"),
        (np.isnan(v), "nan"),
        # inf and zero outrank the tolerance: a spurious 0 next to the smallest
        # subnormal is 1 ulp away, and still the failure the vocabulary names.
        (np.isinf(v) & np.isfinite(rounded), "inf"),
        ((v == 0) & (rounded != 0), "zero"),
        (within, "ok"),
        (np.isinf(v), "wrong"),  # the opposite infinity to an overflowing reference
        (wrong, "wrong"),
    ]
    decided = np.zeros(len(v), dtype=bool)
    for mask, name in rules:
        mask = mask & ~decided
        outcome[mask] = name
        decided |= mask
    return {"ulps": ulps, "bits": bits, "rel_error": rel, "outcome": outcome}


def covers(e: Expectation, frame: pd.DataFrame, case: Case) -> np.ndarray:
    """Rows of ``frame`` (errors or evaluations) that expectation ``e`` covers."""
    mask = frame["implementation"].isin(e.implementations).to_numpy().copy()
    for column, allowed in (
        ("method", e.methods),
        ("mode", e.modes),
        ("dtype", e.dtypes),
        ("order", e.orders),
    ):
        if allowed is not None:
            mask &= frame[column].isin(allowed).to_numpy()
    if e.partial is not None:
        mask &= (frame["partial"] == case.label(e.partial)).to_numpy()
    for name, (lo, hi) in e.where.items():
        x = frame[name].to_numpy(np.float64)
        mask &= (x >= lo) & (x <= hi)
    return mask


def judge_frame(frame: pd.DataFrame, tolerance) -> pd.DataFrame:
    """Evaluations joined to their reference (``value status reference_rounded
    reference_mantissa reference_exponent reliable reference_message``), judged per dtype
    and order with ``tolerance(dtype, order) -> (ulps, reason)``."""
    parts = []
    for (dtype, order), group in frame.groupby(["dtype", "order"], sort=False):
        ulps_budget, reason = tolerance(dtype, int(order))
        measures = judge(
            group["value"].to_numpy(np.float64),
            group["status"].to_numpy(),
            group["reference_rounded"].to_numpy(np.float64),
            group["reference_mantissa"].to_numpy(np.float64),
            group["reference_exponent"].to_numpy(np.int64),
            group["reliable"].to_numpy(bool),
            dtype,
            np.full(len(group), float(ulps_budget)),
        )
        g = group.copy()
        for k, v in measures.items():
            g[k] = v
        g["tolerance_ulps"] = float(ulps_budget)
        g["tolerance_reason"] = reason
        parts.append(g)
    out = pd.concat(parts, ignore_index=True)
    out["message"] = np.where(
        out["outcome"] == "ref_unreliable", out["reference_message"], out["message"]
    )
    return out


def errors_table(frame: pd.DataFrame, case, names: Sequence[str], tolerance) -> pd.DataFrame:
    """Judge ``frame`` (see :func:`judge_frame`), mark the case's expectations, and lay
    the errors table out: the standard columns with ``names`` (the inputs) in between,
    sorted; shared by expression and experiment cases."""
    out = judge_frame(frame, tolerance)
    apply_expectations(out, case)
    if "seconds" not in out:
        out["seconds"] = np.nan
    out.insert(0, "case", case.id)
    columns = [*_BEFORE_INPUTS, *names, *_AFTER_INPUTS]
    out = (
        out[columns]
        .sort_values(
            ["implementation", "method", "mode", "dtype", "order", "partial", "point"],
            kind="stable",
        )
        .reset_index(drop=True)
    )
    out["outcome"] = pd.Categorical(out["outcome"], categories=OUTCOMES)
    return out


def apply_expectations(out: pd.DataFrame, case) -> None:
    """Set ``expected_outcome``, ``expectation_reason`` and ``expected`` (in place)."""
    out["expected_outcome"] = ""
    out["expectation_reason"] = ""
    for e in case.expectations:
        mask = covers(e, out, case)
        out.loc[mask, "expected_outcome"] = e.outcome
        out.loc[mask, "expectation_reason"] = e.reason
    covered = out["expected_outcome"] != ""
    judged = covered & (out["outcome"] != "ref_unreliable")
    out["expected"] = np.where(
        judged,
        np.where(out["outcome"] == out["expected_outcome"], "held", "broken"),
        np.where(covered, "unjudged", ""),
    )


def compare(
    case: Case,
    evaluations: pd.DataFrame,
    reference: pd.DataFrame,
    tolerance,
) -> pd.DataFrame:
    """The errors table: evaluations joined to the reference and judged.

    ``tolerance(dtype, order) -> (ulps, reason)`` gives the budget (see
    :meth:`harness.config.Settings.tolerance`).
    """
    names = list(case.input_names)
    ref = reference[
        [
            "dtype",
            "point",
            "partial",
            *names,
            "subnormal",
            "reference",
            "reference_mantissa",
            "reference_exponent",
            "reference_rounded",
            "reliable",
            "message",
        ]
    ].rename(columns={"message": "reference_message"})
    frame = evaluations.merge(
        ref, on=["dtype", "point", "partial"], how="left", validate="many_to_one"
    )
    if frame["reference"].isna().any():
        raise ValueError("evaluations hold points the reference does not (stale reference?)")
    return errors_table(frame, case, names, tolerance)
