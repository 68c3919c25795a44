"""The compare stage: judge every evaluated value against the rounded reference.

Measures (all per row, in the row's dtype):

- ``ulps``: the ordinal distance between the result and the reference rounded to the
  dtype (:func:`harness.numerics.floats.ulps_between`), defined across 0, subnormals and ±inf,
  counted exactly (a nullable unsigned 64-bit integer); missing when the result is NaN
  or there is no result. Where the truth lies beyond the dtype's largest finite value
  and the result is finite, it is counted with the exponent range extended upwards
  (:func:`harness.numerics.floats.ulps_beyond_range`): the largest finite float32 is then about
  2**31 ulps from a true 1e300, not the one step to +inf that would make it look right;
- ``bits``: ``log2(1 + ulps)``, Herbie's bits of error; a NaN result counts as the
  dtype's width (16, 32 or 64: nothing right);
- ``rel_error``: ``|result - reference| / |reference|`` against the *exact* reference,
  computed from its mantissa and exponent so it never overflows; ``inf`` when the
  reference is exactly 0 and the result is not. Where the truth lies outside the dtype's
  range and the result is the dtype's best answer for it (the right infinity for an
  overflow, 0 for an underflow: the rounded reference itself), ``rel_error`` is 0, so a
  filter on it never shows a right answer as infinitely wrong.

Tolerance, per method (``tolerance``, ``tolerance_unit``, ``tolerance_reason`` per row):

- autodiff: the study's budget in ulps per dtype and order, overridable per case with a
  reason (``tolerance_unit`` = ``ulps``);
- finite differences: the error a correct central difference has at the step it used
  (:mod:`harness.numerics.stencils`, computed by the reference stage): ``ok`` within that
  absolute error (``tolerance_unit`` = ``absolute``) or within the autodiff budget;
- an exactly-zero reference (a structural zero: ``d⁴/dx⁴`` of a cubic; or an Arb ball
  that holds 0, :func:`harness.reference.rounded.judge_reference`) has no relative
  error to speak of: a result is ``ok`` when ``|result| <= budget * eps * S``, with ``S``
  the largest |reference| of the point's derivatives of the same or lower order, from
  the first (the scale at which the derivative's computation rounds; for the value, the
  value); otherwise the vocabulary applies (a nonzero result of the right magnitude
  class is ``wrong``, being infinitely far in relative terms).

Outcome: the first rule that applies, in the order of the table in ``cases/README.md``
(Outcomes), the one place the vocabulary is written (``docs/judging.md`` explains it;
``tests/test_compare.py`` checks it rule by rule). :func:`judge_frame` applies them.

Expectations. A case declares known failures; every row an expectation covers gets
``expected_outcome`` and ``expected`` = ``held`` (the outcome is the declared one) or
``broken`` (it is not: the failure did not happen, or something else did); a covered
row that is ``ref_unreliable`` or ``flushed`` is ``unjudged``. Rows no expectation
covers have ``expected`` = ``""``. When several expectations cover a row,
the last one declared wins (put general ones first, exceptions after).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from harness.cases.model import Case
from harness.cases.schema import DEFAULT_BACKEND
from harness.cases.schema import OUTCOMES as DECLARABLE_OUTCOMES
from harness.judge.expectations import apply_expectations, covers
from harness.numerics.fd_model import FD_COLUMNS
from harness.numerics.floats import FORMATS, bits_of_error, ulps_between, ulps_beyond_range
from harness.numerics.flush import FLUSH_COLUMNS, flush_columns
from harness.numerics.stencils import MODEL_FACTOR

__all__ = [
    "ERROR_COLUMNS",
    "NOT_JUDGED",
    "OUTCOMES",
    "apply_expectations",
    "compare",
    "covers",
    "errors_table",
    "input_columns",
    "join_reference",
    "judge",
    "judge_frame",
]

#: Every outcome: those an expectation may declare, ``flushed`` (a platform effect) and
#: ``not_applicable`` (the combination cannot be written in the back end's framework).
OUTCOMES = (*DECLARABLE_OUTCOMES, "flushed", "not_applicable")
#: The outcomes kept out of every verdict: neither right nor wrong.
NOT_JUDGED = ("ref_unreliable", "flushed", "not_applicable")

ERROR_COLUMNS = [
    "case",
    "backend",
    "implementation",
    "method",
    "mode",
    "dtype",
    "order",
    "partial",
]

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
    "tolerance",
    "tolerance_unit",
    "tolerance_reason",
    "message",
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


def _absolute_error(value: np.ndarray, mantissa: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """``|value - m 2^e|`` in float64 (inf where the exact reference is beyond float64)."""
    with np.errstate(all="ignore"):
        exact = np.ldexp(mantissa, exponent.astype(np.int64).clip(-100000, 100000))
        return np.abs(value - exact)


def judge(
    value: np.ndarray,
    status: np.ndarray,
    rounded: np.ndarray,
    mantissa: np.ndarray,
    exponent: np.ndarray,
    reliable: np.ndarray,
    dtype: str,
    tolerance_ulps: np.ndarray,
    tolerance_abs: np.ndarray | None = None,
    zero_scale: np.ndarray | None = None,
    flush_rounded: np.ndarray | None = None,
    flush_defined: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """``ulps bits rel_error outcome`` for rows of one dtype (vectorised).

    ``tolerance_abs`` (finite differences; NaN elsewhere): an absolute error at or below
    which the row is ``ok`` too, outranking ``zero``. ``zero_scale``: for a reference
    that is exactly 0, the magnitude of the point's lower-order references, which sets
    the absolute error an exact zero admits. ``flush_rounded``/``flush_defined``: the
    reference once the platform's subnormal flush is applied (NaN where the flush does
    not change it) and whether it is defined there (see the module docstring).
    """
    n = len(value)
    nan = np.full(n, np.nan)
    tolerance_abs = nan if tolerance_abs is None else tolerance_abs
    zero_scale = nan if zero_scale is None else zero_scale
    flush_rounded = nan if flush_rounded is None else flush_rounded
    flush_defined = np.ones(n, dtype=bool) if flush_defined is None else flush_defined
    fmt = FORMATS[dtype]
    has_value = status == "value"
    v = np.where(has_value, value, np.nan)
    judged = has_value & reliable
    ulps = ulps_between(np.where(judged, v, np.nan), np.where(judged, rounded, np.nan), fmt)
    # A finite result where the truth is beyond the dtype's range: counted in an
    # exponent range extended upwards, not as the one step from the largest finite to inf.
    beyond = judged & np.isinf(rounded) & np.isfinite(v)
    if beyond.any():
        ulps[beyond] = ulps_beyond_range(v[beyond], mantissa[beyond], exponent[beyond], fmt)
    bits = np.where(judged, bits_of_error(ulps, fmt), np.nan)
    rel = np.where(judged, _relative_error(v, mantissa, exponent), np.nan)
    # The dtype's best answer for a truth outside its range (an overflow returned as the
    # right infinity, an underflow as 0) is not "infinitely wrong".
    saturated = judged & (v == rounded) & (np.isinf(rounded) | (rounded == 0))
    rel = np.where(saturated, 0.0, rel)

    outcome = np.full(n, "inaccurate", dtype=object)
    finite = np.isfinite(v)
    with np.errstate(invalid="ignore"):
        sign_wrong = (np.sign(v) != np.sign(rounded)) & (v != 0) & (rounded != 0)
        budget = np.floor(np.clip(tolerance_ulps, 0, 2.0**63)).astype(np.uint64)
        within = (ulps <= budget).fillna(False).to_numpy(bool)
        within_abs = _absolute_error(v, mantissa, exponent) <= tolerance_abs
        # An exact zero: the noise of rounding at the scale of the point's lower orders.
        exact_zero = (mantissa == 0) & finite
        within_zero = exact_zero & (np.abs(v) <= tolerance_ulps * fmt.eps * zero_scale)
        # Off by a factor of 2 or more either way: relative error >= 1 above the
        # reference, >= 1/2 below it (4 for 1024 is not "right magnitude").
        too_small = (rel >= 0.5) & (np.abs(v) < np.abs(rounded))
        in_play = ~np.isnan(flush_rounded) | ~flush_defined
        flush_ulps = ulps_between(
            np.where(in_play & judged, v, np.nan), np.where(in_play, flush_rounded, np.nan), fmt
        )
        # A flushed input where the function or its derivative is not defined (0/0, abs
        # at 0: a kink) leaves nothing to judge the framework's value by: the platform
        # moved the point, whatever the framework then picks there.
        flushed = in_play & (
            ~flush_defined
            | (flush_ulps <= budget).fillna(False).to_numpy(bool)
            | (v == flush_rounded)
        )
    wrong = finite & ((rel >= 1) | sign_wrong | too_small)
    spurious_inf = np.isinf(v) & np.isfinite(rounded)
    spurious_zero = (v == 0) & (rounded != 0)
    ok = within_abs | ((within | within_zero) & ~spurious_inf & ~spurious_zero)
    rules = [
        (status == "not_applicable", "not_applicable"),
        (status == "error", "error"),
        # No gradient where no derivative exists (a kink: the reference has no value)
        # is not a failure: the point is out of every verdict, as any value there is.
        (~reliable & np.isnan(rounded), "ref_unreliable"),
        (status == "missing", "missing"),
        (~reliable, "ref_unreliable"),
        # Right once the platform's flush of subnormals is applied (and not right
        # without it): a platform effect, reported apart.
        (flushed & ~ok, "flushed"),
        (np.isnan(v), "nan"),
        # inf and zero outrank the ulps tolerance: a spurious 0 next to the smallest
        # subnormal is 1 ulp away, and still the failure the vocabulary names. A finite
        # difference within its predicted error is ok even at 0: the stencil cannot
        # resolve a value below its own error.
        (spurious_inf, "inf"),
        (within_abs, "ok"),
        (spurious_zero, "zero"),
        (within | within_zero, "ok"),
        (np.isinf(v), "wrong"),  # the opposite infinity to an overflowing reference
        (wrong, "wrong"),
    ]
    decided = np.zeros(n, dtype=bool)
    for mask, name in rules:
        mask = mask & ~decided
        outcome[mask] = name
        decided |= mask
    return {"ulps": ulps, "bits": bits, "rel_error": rel, "outcome": outcome}


def _zero_scale(frame: pd.DataFrame) -> np.ndarray:
    """Per row: the largest finite |reference| among the point's partials of the row's
    order or lower, the value itself only for the value (the scale an exactly-zero
    reference is judged on). A derivative's rounding noise is on the scale of the
    derivatives it is built from, not of the value: ``logaddexp(x, x)``'s d3/dx2dy is
    0, its lower derivatives 1/2 and 1/4, its value 3.4e38 at x = -3.4e38, where JAX
    returns 1.0 (its first derivative 1 in place of 1/2: the log 2 absorbed)."""
    if frame.empty:
        return np.zeros(0)
    point = frame["point"].to_numpy(np.int64)
    point = point - point.min()
    # One integer per (dtype, point), and per (dtype, point, partial).
    at = pd.factorize(frame["dtype"])[0].astype(np.int64) * (int(point.max()) + 1) + point
    partial = pd.factorize(frame["partial"])[0].astype(np.int64)
    _, first = np.unique(at * (int(partial.max()) + 1) + partial, return_index=True)
    size = np.abs(frame["reference_rounded"].to_numpy(np.float64)[first])
    reliable = frame["reliable"].to_numpy(bool)[first]
    size = np.where(reliable & np.isfinite(size), size, 0.0)
    order = frame["order"].to_numpy(np.int64)
    # One row per (dtype, point), one column per order: the largest size of each order,
    # then the running maximum over the orders from the first (the value's stays its own).
    points, where = np.unique(at[first], return_inverse=True)
    table = np.zeros((len(points), int(order.max()) + 1))
    np.maximum.at(table, (where, order[first]), size)
    np.maximum.accumulate(table[:, 1:], axis=1, out=table[:, 1:])
    return table[np.searchsorted(points, at), order]


def _tolerances(group: pd.DataFrame, ulps: float, reason: str, dtype: str, order: int):
    """``(tolerance_abs, tolerance, unit, reason)`` arrays for one (dtype, order) group."""
    n = len(group)
    # Order 0 by "finite differences" is the function itself: judged like any value.
    fd = (group["method"] == "finite_difference").to_numpy() & (order > 0)
    model = (
        group["fd_tolerance"].to_numpy(np.float64)
        if "fd_tolerance" in group
        else np.full(n, np.nan)
    )
    has_model = fd & ~np.isnan(model)
    table_reason = reason or f"{ulps:g} ulps: the study's budget for {dtype}, order {order}"
    reasons = np.full(n, table_reason, dtype=object)
    if has_model.any() and "fd_step" in group:
        g = group[has_model]
        reasons[has_model] = [
            f"finite difference at h = {h:.3g}: {MODEL_FACTOR:g} x (truncation {t:.3g} + "
            f"rounding {r:.3g}), or within {ulps:g} ulps"
            for h, t, r in zip(g["fd_step"], g["fd_truncation_error"], g["fd_rounding_error"])
        ]
    no_model = fd & ~has_model
    if no_model.any():
        notes = group["fd_note"].fillna("").to_numpy() if "fd_note" in group else np.full(n, "")
        reasons[no_model] = [
            f"finite difference without an error model ({note or 'none for this estimator'}): "
            f"{ulps:g} ulps"
            for note in notes[no_model]
        ]
    tolerance_abs = np.where(has_model, model, np.nan)
    tolerance = np.where(has_model, model, float(ulps))
    unit = np.where(has_model, "absolute", "ulps")
    return tolerance_abs, tolerance, unit, reasons


def judge_frame(frame: pd.DataFrame, tolerance) -> pd.DataFrame:
    """Evaluations joined to their reference (``value status reference_rounded
    reference_mantissa reference_exponent reliable reference_message``, and the
    finite-difference model's ``fd_*`` columns where the reference has them), judged per
    dtype and order with ``tolerance(dtype, order) -> (ulps, reason)`` for autodiff and
    the error model for finite differences (:mod:`harness.numerics.stencils`)."""
    frame = frame.assign(zero_scale=_zero_scale(frame))
    parts = []
    for (dtype, order), at in frame.groupby(["dtype", "order"], sort=False).indices.items():
        group = frame.iloc[at]
        ulps_budget, reason = tolerance(dtype, int(order))
        tol_abs, tol, unit, reasons = _tolerances(group, ulps_budget, reason, dtype, int(order))
        flush = group["flush_rounded"] if "flush_rounded" in group else None
        measures = judge(
            group["value"].to_numpy(np.float64),
            group["status"].to_numpy(),
            group["reference_rounded"].to_numpy(np.float64),
            group["reference_mantissa"].to_numpy(np.float64),
            group["reference_exponent"].to_numpy(np.int64),
            group["reliable"].to_numpy(bool),
            dtype,
            np.full(len(group), float(ulps_budget)),
            tolerance_abs=tol_abs,
            zero_scale=group["zero_scale"].to_numpy(np.float64),
            flush_rounded=None if flush is None else flush.to_numpy(np.float64),
            flush_defined=None if flush is None else group["flush_defined"].to_numpy(bool),
        )
        parts.append((at, {**measures, "tolerance": tol, "tolerance_unit": unit,
                           "tolerance_reason": reasons}))  # fmt: skip
    # The groups' rows in group order (as concatenating the groups laid them out), each
    # new column filled from its group's arrays.
    order = np.concatenate([at for at, _ in parts]) if parts else np.zeros(0, np.intp)
    out = frame.iloc[order].reset_index(drop=True)
    columns: dict[str, list] = {}
    for _, values in parts:
        for k, v in values.items():
            columns.setdefault(k, []).append(pd.Series(v))
    for k, chunks in columns.items():  # pandas' concatenation keeps nullable dtypes (ulps)
        out[k] = pd.concat(chunks, ignore_index=True)
    out["message"] = np.where(
        out["outcome"] == "ref_unreliable", out["reference_message"], out["message"]
    )
    return out


def errors_table(frame: pd.DataFrame, case, names: Sequence[str], tolerance) -> pd.DataFrame:
    """Judge ``frame`` (see :func:`judge_frame`), mark the case's expectations, and lay
    the errors table out: the standard columns with ``names`` (the inputs) in between,
    sorted; shared by expression and experiment cases."""
    out = judge_frame(frame, tolerance)
    if "backend" not in out:  # rows straight from a back end's evaluate_case
        out["backend"] = DEFAULT_BACKEND
    apply_expectations(out, case)
    out.insert(0, "case", case.id)
    columns = [*_BEFORE_INPUTS, *names, *_AFTER_INPUTS]
    out = (
        out[columns]
        .sort_values(
            ["backend", "implementation", "method", "mode", "dtype", "order", "partial", "point"],
            kind="stable",
        )
        .reset_index(drop=True)
    )
    out["outcome"] = pd.Categorical(out["outcome"], categories=OUTCOMES)
    return out


def compare(
    case: Case,
    evaluations: pd.DataFrame,
    reference: pd.DataFrame,
    tolerance,
    platform_flush: dict | None = None,
) -> pd.DataFrame:
    """The errors table: evaluations joined to the reference and judged.

    ``tolerance(dtype, order) -> (ulps, reason)`` gives the budget (see
    :meth:`harness.config.Settings.tolerance`); ``platform_flush`` is the evaluation's
    probe of the platform's subnormal flush (:func:`harness.numerics.flush.flush_columns`).
    """
    frame = join_reference(case, evaluations, reference, platform_flush)
    return errors_table(frame, case, list(case.input_names), tolerance)


def join_reference(
    case: Case,
    evaluations: pd.DataFrame,
    reference: pd.DataFrame,
    platform_flush: dict | None = None,
) -> pd.DataFrame:
    """Evaluations with their reference columns and the flushed reference
    (``flush_rounded``, ``flush_defined``): what :func:`judge_frame` judges."""
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
            *(c for c in (*FD_COLUMNS, *FLUSH_COLUMNS) if c in reference),
        ]
    ].rename(columns={"message": "reference_message"})
    frame = evaluations.merge(
        ref, on=["dtype", "point", "partial"], how="left", validate="many_to_one"
    )
    if frame["reference"].isna().any():
        raise ValueError("evaluations hold points the reference does not (stale reference?)")
    frame["flush_rounded"], frame["flush_defined"] = flush_columns(frame, platform_flush)
    return frame
