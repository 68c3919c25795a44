"""The experiment registry and the helpers experiment modules share.

An experiment (:mod:`harness.experiments.hessian_norm`,
:mod:`harness.experiments.matrix_partials`) pairs its declaration
(:class:`harness.cases.experiment_kinds.ExperimentSpec`) with its code: the mpmath
reference, its evaluation in each framework it is written for and its report page. It
imports no framework: the back end passes its module to the evaluation.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from harness.cases.experiment_kinds import ExperimentSpec

__all__ = ["EXPERIMENTS", "Experiment", "exact_grid", "experiment", "run_in_mode"]


@dataclasses.dataclass(frozen=True)
class Experiment:
    """A registered experiment.

    ``reference(params, dps) -> (rows, facts)``: rows are dicts holding the
    ``reference_keys`` and ``value`` (an mpf), computed at ``dps`` digits.
    ``evaluations``: by back-end name, ``evaluate(framework, params, dtype, mode) ->
    rows`` with the framework's module as its back end set it up
    (:attr:`harness.backends.interface.Backend.framework`): dicts holding
    ``implementation method partial order``, every input, and ``value`` (a float) or
    ``status`` (``missing``/``error``) with ``message``.
    ``page``: the module whose ``page(errors, facts) -> html`` draws the experiment's own
    figures and explanation (:meth:`render_page`); only the report stage imports it, so
    the other stages' jobs do not depend on the report's code.
    """

    spec: ExperimentSpec
    reference: Callable[..., tuple[list[dict], dict]]
    evaluations: Mapping[str, Callable[..., list[dict]]]
    page: str

    def render_page(self, errors: pd.DataFrame, facts: dict) -> str:
        """The experiment's own part of its case page (its ``page`` module's ``page``)."""
        return importlib.import_module(self.page).page(errors, facts)

    def evaluation(self, backend: str) -> Callable[..., list[dict]]:
        """``evaluate(framework, params, dtype, mode) -> rows`` in ``backend``."""
        if backend not in self.evaluations:
            raise ValueError(f"experiment {self.name!r} has no {backend} evaluation")
        return self.evaluations[backend]

    # The declaration's fields, read through the experiment.
    name = property(lambda self: self.spec.name)
    description = property(lambda self: self.spec.description)
    parameters = property(lambda self: self.spec.parameters)
    inputs = property(lambda self: self.spec.inputs)
    reference_keys = property(lambda self: self.spec.reference_keys)
    implementations = property(lambda self: self.spec.implementations)
    quantities = property(lambda self: self.spec.quantities)


#: The registered experiments by name.
EXPERIMENTS: dict[str, Experiment] = {}


def experiment(exp: Experiment) -> Experiment:
    if exp.name in EXPERIMENTS:
        raise ValueError(f"experiment {exp.name!r} registered twice")
    EXPERIMENTS[exp.name] = exp
    return exp


def run_in_mode(tf, fn: Callable, mode: str) -> Callable:
    """``fn`` as the mode runs it: as is (eager), traced once (function), or compiled (xla)."""
    if mode == "eager":
        return fn
    return tf.function(fn, jit_compile=(mode == "xla"))


# -- helpers the experiment modules share ------------------------------------------------


def exact_grid(rng: np.random.Generator, shape, scale: float, step: float = 1 / 64) -> np.ndarray:
    """Gaussian samples times ``scale``, rounded to multiples of ``step``: every dtype
    holds them exactly, so one mpmath reference serves float16 to float64."""
    return np.round(rng.standard_normal(shape) * scale / step) * step
