"""The experiments a case file can name (``experiment: NAME``): each one's declaration.

An experiment's declaration is data: its name and description, the JSON Schema of its
``parameters``, its input columns, the keys of its reference rows, the values of its
``implementation`` and ``partial`` columns. Case files are validated against it here,
without importing the experiment's code; the code (:mod:`harness.experiments`) registers
an :class:`harness.experiments.base.Experiment` for each declaration.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
from typing import Any, ClassVar

__all__ = [
    "HESSIAN_NORM",
    "HESSIAN_NORM_FUNCTIONS",
    "MATRIX_PARTIALS",
    "MATRIX_PARTIALS_QUANTITIES",
    "SPECS",
    "ExperimentCase",
    "ExperimentSpec",
    "case_schema",
]


@dataclasses.dataclass(frozen=True)
class ExperimentSpec:
    """What a case file and the stages know of an experiment before its code runs."""

    name: str
    description: str
    parameters: dict[str, Any]  # JSON Schema of the `parameters` mapping
    inputs: tuple[str, ...]
    reference_keys: tuple[str, ...]
    implementations: tuple[str, ...]  # the values of its `implementation` column
    quantities: tuple[str, ...]  # the values of its `partial` column
    # The frameworks its evaluation is written in (harness.backends.catalogue names).
    backends: tuple[str, ...] = ("tensorflow",)


HESSIAN_NORM_FUNCTIONS = ("rosenbrock", "log_sum_exp", "tanh_network")
MATRIX_PARTIALS_QUANTITIES = ("YY", "XY", "trace_trick_X", "trace_trick_Y")

_HESSIAN_NORM_PARAMETERS = {
    "type": "object",
    "additionalProperties": False,
    "required": ["functions", "dimensions", "steps", "probes", "power_iterations", "seed"],
    "properties": {
        "functions": {
            "type": "array",
            "items": {"enum": list(HESSIAN_NORM_FUNCTIONS)},
            "minItems": 1,
            "uniqueItems": True,
        },
        "dimensions": {
            "type": "array",
            "items": {"type": "integer", "minimum": 2, "maximum": 200},
            "minItems": 1,
            "uniqueItems": True,
        },
        "steps": {
            "type": "object",
            "additionalProperties": False,
            "required": ["from", "to", "count"],
            "properties": {
                "from": {"type": "number", "exclusiveMinimum": 0},
                "to": {"type": "number", "exclusiveMinimum": 0, "maximum": 10},
                "count": {"type": "integer", "minimum": 2, "maximum": 200},
            },
            "description": "Finite-difference steps h, log-spaced from..to.",
        },
        "probes": {
            "type": "array",
            "items": {"type": "integer", "minimum": 1, "maximum": 4096},
            "minItems": 1,
            "uniqueItems": True,
            "description": "Probe counts M of the Hutchinson estimate.",
        },
        "power_iterations": {"type": "integer", "minimum": 1, "maximum": 200},
        "seed": {"type": "integer", "minimum": 0},
    },
}


_MATRIX_PARTIALS_PARAMETERS = {
    "type": "object",
    "additionalProperties": False,
    "required": ["sizes", "samples", "seed"],
    "properties": {
        "sizes": {
            "type": "array",
            "items": {"type": "integer", "minimum": 1, "maximum": 6},
            "minItems": 1,
            "uniqueItems": True,
            "description": "Matrix sizes n.",
        },
        "samples": {
            "type": "integer",
            "minimum": 1,
            "maximum": 10,
            "description": "Random (X, Y) pairs per size.",
        },
        "seed": {"type": "integer", "minimum": 0, "description": "Seed of the samples."},
    },
}


HESSIAN_NORM = ExperimentSpec(
    name="hessian_norm",
    description="Hutchinson (Frobenius) and power-iteration (spectral) estimates of the "
    "Hessian norm from finite differences of gradients, forward-over-reverse HVPs and "
    "exact Hessians by nested tapes.",
    parameters=_HESSIAN_NORM_PARAMETERS,
    inputs=("n", "h", "probes"),
    reference_keys=("implementation", "partial", "n", "probes"),
    implementations=HESSIAN_NORM_FUNCTIONS,
    quantities=("frobenius_norm", "spectral_norm"),
)


MATRIX_PARTIALS = ExperimentSpec(
    name="matrix_mixed_partials",
    description="Second derivatives of ||X X Y||_F: d2loss/dY2, the mixed block and "
    "the trace trick, by nested jacobians, the seed's trace trick and HVPs.",
    parameters=_MATRIX_PARTIALS_PARAMETERS,
    inputs=("n", "sample", "entry"),
    reference_keys=("partial", "n", "sample", "entry"),
    implementations=("jacobian", "trace_trick", "hvp"),
    quantities=MATRIX_PARTIALS_QUANTITIES,
    backends=("tensorflow", "jax", "torch"),
)

#: Every declared experiment by name.
SPECS: dict[str, ExperimentSpec] = {s.name: s for s in (HESSIAN_NORM, MATRIX_PARTIALS)}


@dataclasses.dataclass(frozen=True)
class ExperimentCase:
    """A validated experiment case file. The fields :func:`harness.config.settings_for`
    reads are here too (no methods list, no tolerance overrides); the ``quick`` setting
    applies the ``quick`` narrowing (dtypes, methods, modes) and ``quick_parameters``."""

    #: Its kind (:mod:`harness.stages.kinds`): what each stage does with it.
    kind: ClassVar[str] = "experiment"
    #: No sampled points: it runs its own parameters, whole (as :class:`~harness.cases.model.Case`).
    sampled: ClassVar[bool] = False

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
    quick: Any = None  # a harness.cases.model.Narrowing, or None
    methods: None = None
    expectations: tuple = ()  # harness.cases.model.Expectation, partial = a quantity name
    tolerances: tuple = ()
    implementations: tuple = ()
    partials: tuple = ()
    backends: tuple[str, ...] | None = None

    def label(self, partial: str) -> str:
        return partial

    @property
    def reference(self):  # what settings_for reads: no per-case precision
        return _NoPrecision

    @property
    def spec(self) -> ExperimentSpec:
        return SPECS[self.experiment]

    @property
    def input_names(self) -> tuple[str, ...]:
        return SPECS[self.experiment].inputs

    @property
    def content_hash(self) -> str:
        blob = json.dumps(self.raw, sort_keys=True, default=str).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

    def runs_in(self, backends: tuple[str, ...]) -> tuple[str, ...]:
        """Which of the study's back ends it runs in: those its code is written for."""
        return tuple(b for b in backends if b in self.spec.backends)

    def parameters_of(self, setting: str) -> dict[str, Any]:
        """What its provenance records beside the selection: the setting's parameters."""
        return {"parameters": self.params(setting)}

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
    props["experiment"] = {"enum": sorted(SPECS)}
    if experiment_name in SPECS:
        params = copy.deepcopy(SPECS[experiment_name].parameters)
        props["parameters"] = params
        quick = copy.deepcopy(params)
        quick.pop("required", None)
        props["quick_parameters"] = quick
    return schema
