"""The stages of an experiment case (reference, evaluate, compare).

Experiments are cases whose quantities are not partials of one scalar expression.

Some questions of the seeds are about *estimators built from derivatives* rather than
about one derivative: the Hessian's norm from finite differences of gradients along
random probes, or the mixed second-derivative block of a matrix function and the
"trace trick" that contracts it. A case file says ``experiment: NAME`` and gives that
experiment's ``parameters`` (data, validated against the experiment's JSON Schema); the
code lives in this package, registered by name, exactly like ``registered:``
implementations. The file is still one YAML file with ``title``, ``source`` and
``notes``, and it runs through the same three stages:

- ``reference`` (mpmath, no TensorFlow): every quantity exactly, computed twice at two
  precisions; a value is ``reliable`` when the two agree to ``verify_digits``; rounded
  to each dtype once. Facts that are not judged (the exact norm a Monte-Carlo estimate
  approaches) go into the table's provenance under ``facts``.
- ``evaluate`` (each back end the experiment has an evaluation for, given the framework's
  module as its back end sets it up): the experiment's rows per dtype and mode.
- ``compare``: the same judgement as every case (:func:`harness.judge.compare.judge`), into an
  errors table with the standard columns, so the summary, the index and the stable
  domains treat experiments like any case. Each quantity is one ``partial`` label
  (``YY``, ``frobenius_norm``); the experiment's own inputs (``n``, ``h``, ``entry``)
  are the input columns.

"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np
import pandas as pd

from harness.cases.experiment_kinds import ExperimentCase
from harness.experiments.catalogue import get

__all__ = ["compare_experiment", "evaluate_experiment", "reference_experiment"]


def reference_experiment(
    case: ExperimentCase, params: dict, dtypes: Sequence[str], precision: int, verify_digits: int
) -> tuple[pd.DataFrame, dict]:
    """The reference table (one row per dtype and reference key) and the facts."""
    import mpmath

    from harness.numerics.floats import FORMATS, is_subnormal, round_mpf
    from harness.reference.verify import DECIMAL_DIGITS, agree_digits

    exp = get(case.experiment)
    keys = list(exp.reference_keys)
    with mpmath.workdps(precision):
        rows, facts = exp.reference(params, precision)
    check_dps = precision + max(20, precision // 2)
    with mpmath.workdps(check_dps):
        check, _ = exp.reference(params, check_dps)
    checked = {tuple(r[k] for k in keys): r["value"] for r in check}
    out = []
    for r in rows:
        key = tuple(r[k] for k in keys)
        with mpmath.workdps(check_dps + 10):
            digits = agree_digits(r["value"], checked[key])
        reliable = digits >= verify_digits
        for dtype in dtypes:
            fmt = FORMATS[dtype]
            with mpmath.workdps(check_dps + 10):
                value = checked[key]
                man, e = mpmath.frexp(value)
                rounded = round_mpf(value, fmt) if reliable else math.nan
                decimal = mpmath.nstr(value, DECIMAL_DIGITS) if reliable else ""
            out.append(
                {
                    "dtype": dtype,
                    **{k: r[k] for k in keys},
                    "subnormal": bool(reliable and is_subnormal(np.array([rounded]), fmt)[0]),
                    "reference": decimal,
                    "reference_mantissa": float(man) if reliable else math.nan,
                    "reference_exponent": int(e) if reliable else 0,
                    "reference_rounded": rounded,
                    "reliable": reliable,
                    "digits": float(min(digits, 1e6)),
                    "message": ""
                    if reliable
                    else (
                        f"the reference agreed to only {digits:.1f} digits at {precision} "
                        f"and {check_dps} digits"
                    ),
                }
            )
    return pd.DataFrame(out), facts


def evaluate_experiment(
    case: ExperimentCase,
    params: dict,
    dtypes: Sequence[str],
    modes: Sequence[str],
    backend: str,
    framework,
) -> tuple[pd.DataFrame, dict]:
    """The evaluations table of an experiment in one back end, with the framework's
    module as the back end set it up (:attr:`harness.backends.interface.Backend.framework`)."""
    evaluate = get(case.experiment).evaluation(backend)

    def run(params, dtype, mode):
        return evaluate(framework, params, dtype, mode)

    rows = []
    seconds = {}
    for dtype in dtypes:
        for mode in modes:
            t0 = time.perf_counter()
            for r in run(params, dtype, mode):
                rows.append({"mode": mode, "dtype": dtype, **r})
            seconds[f"{dtype}/{mode}"] = round(time.perf_counter() - t0, 3)
    exp_inputs = list(get(case.experiment).inputs)
    columns = ["mode", "dtype", "implementation", "method", "partial", "order", *exp_inputs]
    frame = pd.DataFrame(rows, columns=None if rows else [*columns, "value"])
    if "status" not in frame:
        frame["status"] = "value"
    frame["status"] = frame["status"].fillna("value")
    if "message" not in frame:
        frame["message"] = ""
    frame["message"] = frame["message"].fillna("")
    frame["value"] = frame["value"].astype(np.float64)
    frame["point"] = frame.groupby(
        ["implementation", "method", "mode", "dtype", "partial"], sort=False
    ).cumcount()
    return frame, {"seconds_per_run": seconds}


def compare_experiment(
    case: ExperimentCase, evaluations: pd.DataFrame, reference: pd.DataFrame, tolerance
) -> pd.DataFrame:
    """The errors table, with the standard columns (see :mod:`harness.judge.compare`)."""
    from harness.judge.compare import errors_table

    exp = get(case.experiment)
    keys = ["dtype", *exp.reference_keys]
    ref = reference.rename(columns={"message": "reference_message"})
    frame = evaluations.merge(ref, on=keys, how="left", validate="many_to_one")
    if frame["reliable"].isna().any():
        raise ValueError("evaluations hold quantities the reference does not (stale reference?)")
    return errors_table(frame, case, exp.inputs, tolerance)
