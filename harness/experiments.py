"""Experiments: cases whose quantities are not partials of one scalar expression.

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
- ``evaluate`` (TensorFlow): the experiment's rows per dtype and mode.
- ``compare``: the same judgement as every case (:func:`harness.compare.judge`), into an
  errors table with the standard columns, so the summary, the index and the stable
  domains treat experiments like any case. Each quantity is one ``partial`` label
  (``YY``, ``frobenius_norm``); the experiment's own inputs (``n``, ``h``, ``entry``)
  are the input columns.

An experiment module registers an :class:`Experiment`; it must not import TensorFlow at
import time (TensorFlow is passed to ``evaluate``).
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "Experiment",
    "ExperimentCase",
    "compare_experiment",
    "evaluate_experiment",
    "experiment",
    "get",
    "names",
    "reference_experiment",
    "run_in_mode",
]


@dataclasses.dataclass(frozen=True)
class Experiment:
    """A registered experiment.

    ``reference(params, dps) -> (rows, facts)``: rows are dicts holding the
    ``reference_keys`` and ``value`` (an mpf), computed at ``dps`` digits.
    ``evaluate(tf, params, dtype, mode) -> rows``: dicts holding ``implementation
    method partial order``, every input, and ``value`` (a float) or ``status``
    (``missing``/``error``) with ``message``.
    ``page(errors, facts) -> html``: the experiment's own figures and explanation.
    """

    name: str
    description: str
    parameters: dict[str, Any]  # JSON Schema of the `parameters` mapping
    inputs: tuple[str, ...]
    reference_keys: tuple[str, ...]
    implementations: tuple[str, ...]  # the values of its `implementation` column
    quantities: tuple[str, ...]  # the values of its `partial` column
    reference: Callable[..., tuple[list[dict], dict]]
    evaluate: Callable[..., list[dict]]
    page: Callable[[pd.DataFrame, dict], str]


_EXPERIMENTS: dict[str, Experiment] = {}


def experiment(exp: Experiment) -> Experiment:
    if exp.name in _EXPERIMENTS:
        raise ValueError(f"experiment {exp.name!r} registered twice")
    _EXPERIMENTS[exp.name] = exp
    return exp


def _load() -> None:
    from . import hessian_norm, matrix_partials  # noqa: F401  (register on import)


def names() -> list[str]:
    _load()
    return sorted(_EXPERIMENTS)


def get(name: str) -> Experiment:
    _load()
    return _EXPERIMENTS[name]


@dataclasses.dataclass(frozen=True)
class ExperimentCase:
    """A validated experiment case file. The fields :func:`harness.config.settings_for`
    reads are here too (no methods list, no tolerance overrides); the ``quick`` setting
    applies the ``quick`` narrowing (dtypes, methods, modes) and ``quick_parameters``."""

    id: str
    path: str
    title: str
    source: str
    notes: str
    experiment: str
    parameters: dict[str, Any]
    quick_parameters: dict[str, Any]
    dtypes: tuple[str, ...] | None
    modes: tuple[str, ...] | None
    raw: dict[str, Any]
    quick: Any = None  # a harness.cases.Narrowing, or None
    methods: None = None
    expectations: tuple = ()  # harness.cases.Expectation, partial = a quantity name
    tolerances: tuple = ()
    implementations: tuple = ()
    partials: tuple = ()

    def label(self, partial: str) -> str:
        return partial

    @property
    def reference(self):  # what settings_for reads: no per-case precision
        return _NoPrecision

    @property
    def input_names(self) -> tuple[str, ...]:
        return get(self.experiment).inputs

    @property
    def content_hash(self) -> str:
        blob = json.dumps(self.raw, sort_keys=True, default=str).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

    def params(self, setting: str) -> dict[str, Any]:
        """The parameters of ``setting``: ``quick`` applies ``quick_parameters`` on top."""
        out = copy.deepcopy(self.parameters)
        if setting == "quick":
            out.update(copy.deepcopy(self.quick_parameters))
        return out


class _NoPrecision:
    precision = None


def case_schema(base: dict[str, Any], experiment_name: str | None) -> dict[str, Any]:
    """The schema of an experiment case file: ``base`` with the named experiment's
    parameter schema in place (``quick_parameters``: the same keys, none required)."""
    schema = copy.deepcopy(base)
    props = schema["properties"]
    props["experiment"] = {"enum": names()}
    if experiment_name in _EXPERIMENTS:
        params = copy.deepcopy(_EXPERIMENTS[experiment_name].parameters)
        props["parameters"] = params
        quick = copy.deepcopy(params)
        quick.pop("required", None)
        props["quick_parameters"] = quick
    return schema


# -- stages -------------------------------------------------------------------------------


def reference_experiment(
    case: ExperimentCase, params: dict, dtypes: Sequence[str], precision: int, verify_digits: int
) -> tuple[pd.DataFrame, dict]:
    """The reference table (one row per dtype and reference key) and the facts."""
    import mpmath

    from .floats import FORMATS, is_subnormal, round_mpf
    from .reference import DECIMAL_DIGITS, agree_digits

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


def run_in_mode(tf, fn: Callable, mode: str) -> Callable:
    """``fn`` as the mode runs it: as is (eager), traced once (function), or compiled (xla)."""
    if mode == "eager":
        return fn
    return tf.function(fn, jit_compile=(mode == "xla"))


def evaluate_experiment(
    case: ExperimentCase, params: dict, dtypes: Sequence[str], modes: Sequence[str]
) -> tuple[pd.DataFrame, dict]:
    """The evaluations table of an experiment; TensorFlow starts here."""
    from .tfimport import tf

    exp = get(case.experiment)
    rows = []
    seconds = {}
    for dtype in dtypes:
        for mode in modes:
            t0 = time.perf_counter()
            for r in exp.evaluate(tf, params, dtype, mode):
                rows.append({"mode": mode, "dtype": dtype, **r})
            seconds[f"{dtype}/{mode}"] = round(time.perf_counter() - t0, 3)
    frame = pd.DataFrame(rows)
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
    """The errors table, with the standard columns (see :mod:`harness.compare`)."""
    from .compare import errors_table

    exp = get(case.experiment)
    keys = ["dtype", *exp.reference_keys]
    ref = reference.rename(columns={"message": "reference_message"})
    frame = evaluations.merge(ref, on=keys, how="left", validate="many_to_one")
    if frame["reliable"].isna().any():
        raise ValueError("evaluations hold quantities the reference does not (stale reference?)")
    return errors_table(frame, case, exp.inputs, tolerance)


# -- helpers the experiment modules share ------------------------------------------------


def exact_grid(rng: np.random.Generator, shape, scale: float, step: float = 1 / 64) -> np.ndarray:
    """Gaussian samples times ``scale``, rounded to multiples of ``step``: every dtype
    holds them exactly, so one mpmath reference serves float16 to float64."""
    return np.round(rng.standard_normal(shape) * scale / step) * step
