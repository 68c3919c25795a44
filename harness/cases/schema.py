"""JSON Schemas of case files and of the study configuration.

The schemas check structure (keys, types, enumerations, bounds); what a schema cannot
say (expressions parse, names are declared, ranges are not inverted, implementations
are registered) is checked in :mod:`harness.cases.load`. The case schema is published as
``cases/case.schema.json`` (``harness schema > cases/case.schema.json``) so editors can
complete case files; a test keeps the published copy current."""

from __future__ import annotations

from typing import Any

# The back ends' names, methods and modes, as their folders declare them (data only).
from harness.backends.catalogue import BACKENDS, METHODS, MODES
from harness.cases.schema_parts import NAME as _NAME
from harness.cases.schema_parts import TEXT as _TEXT
from harness.cases.schema_parts import obj as _obj
from harness.cases.schema_parts import one_or_many as _one_or_many
from harness.cases.schema_rules import FUNCTION as _FUNCTION
from harness.cases.schema_rules import IMPLEMENTATION as _IMPLEMENTATION
from harness.cases.schema_rules import NESTED_PATTERNS
from harness.cases.schema_rules import RULE as _RULE
from harness.numerics.floats import DTYPES

__all__ = [
    "CASE_SCHEMA",
    "CONFIG_SCHEMA",
    "EXPERIMENT_CASE_SCHEMA",
    "DTYPES",
    "METHODS",
    "BACKENDS",
    "MODES",
    "NESTED_PATTERNS",
    "OUTCOMES",
    "SPLIT_KEYS",
]

#: The back end of rows (and probes) that name none: the first registered.
DEFAULT_BACKEND = BACKENDS[0]
OUTCOMES = ("ok", "inaccurate", "wrong", "nan", "inf", "zero", "missing", "error", "ref_unreliable")
MAX_ORDER = 4
#: What a case's evaluation in one back end is split by (:mod:`harness.stages.pieces`).
SPLIT_KEYS = ("dtype", "method")

_NUMBER = {"type": "number"}
_POSITIVE = {"type": "number", "exclusiveMinimum": 0}
_COUNT = {"type": "integer", "minimum": 1, "maximum": 100000}
_PER_SIGN, _SETTINGS = {"type": "integer", "minimum": 4, "maximum": 4096}, ("quick", "full")
_BATCH = {"type": "integer", "minimum": 1, "maximum": 65536}
_SIGNS = {"enum": ["positive", "negative", "both"], "default": "positive"}
_INCLUDE = {
    "type": "array",
    "items": _NUMBER,
    "minItems": 1,
    "description": "Extra values added to the generated ones (the published points of a "
    "seed, such as x = 100), kept sorted and without duplicates.",
}


_PARTIAL = {
    "description": "A partial derivative: input names in differentiation order, as a string "
    "when every input name is one letter ('ab' = d/db of d/da) or as a list of names.",
    "anyOf": [
        {"type": "string", "minLength": 1},
        {"type": "array", "items": {"type": "string", "pattern": _NAME}, "minItems": 1},
    ],
}

_INPUT = _obj(
    {
        "log": _obj(
            {
                "from": _POSITIVE,
                "to": _POSITIVE,
                "count": _COUNT,
                "signs": _SIGNS,
                "include": _INCLUDE,
            },
            ["from", "to", "count"],
            description="Magnitudes log-spaced from `from` to `to` (both > 0); `signs: both` "
            "mirrors them to negative values.",
        ),
        "linear": _obj(
            {
                "from": _NUMBER,
                "to": _NUMBER,
                "count": {**_COUNT, "minimum": 2},
                "include": _INCLUDE,
            },
            ["from", "to", "count"],
            description="Evenly spaced values from `from` to `to` inclusive.",
        ),
        "values": {
            "type": "array",
            "items": _NUMBER,
            "minItems": 1,
            "maxItems": 100000,
            "description": "Points of their own: a finding, a stable domain or an edge's "
            "bisection never reaches between two of them.",
        },
        "samples": {
            "type": "array",
            "items": _NUMBER,
            "minItems": 2,
            "maxItems": 100000,
            "description": "Samples of one interval, from the smallest to the largest (the "
            "kernel census's sweeps): findings and stable domains span neighbouring "
            "samples, and edges between them are bisected to adjacent floats.",
        },
        "random": _obj(
            {
                "from": _POSITIVE,
                "to": _POSITIVE,
                "count": _COUNT,
                "seed": {"type": "integer", "minimum": 0},
                "signs": _SIGNS,
                "include": _INCLUDE,
            },
            ["from", "to", "count", "seed"],
            description="Seeded log-uniform random magnitudes in [from, to].",
        ),
        "tie": {
            "type": "string",
            "pattern": _NAME,
            "description": "Take the value of another input at every point (a = b = t).",
        },
    },
    minProperties=1,
    maxProperties=1,
    description="How the input's values are generated: exactly one of log, linear, values, "
    "samples, random, tie. Untied inputs combine as a grid (cartesian product) in declaration order.",
)

_MAX_ORDER_FIELD = {
    "anyOf": [
        {"type": "integer", "minimum": 0, "maximum": MAX_ORDER},
        {
            "type": "object",
            "propertyNames": {"enum": list(METHODS)},
            "additionalProperties": {"type": "integer", "minimum": 0, "maximum": MAX_ORDER},
            "minProperties": 1,
        },
    ],
    "description": "Highest order computed: one number for every method, or per method "
    "(methods not named keep every order).",
}


def _list_of(values: tuple[str, ...]) -> dict[str, Any]:
    """A non-empty list of distinct names from ``values`` (dtypes, methods or modes)."""
    return {"type": "array", "items": {"enum": list(values)}, "minItems": 1, "uniqueItems": True}


def _narrowing(description: str) -> dict[str, Any]:
    """What the ``quick`` setting narrows (each list is intersected with the wider one)."""
    return _obj(
        {
            "backends": _list_of(BACKENDS),
            "dtypes": _list_of(DTYPES),
            "methods": _list_of(METHODS),
            "modes": _list_of(MODES),
            "max_points": {"type": "integer", "minimum": 1},
            "max_order": _MAX_ORDER_FIELD,
        },
        minProperties=1,
        description=description,
    )


_QUICK = _narrowing(
    "What the `quick` setting (the default study) runs of this case: narrows the study's "
    "quick lists further; the `full` setting ignores it."
)

_SELECTOR_ENUM = lambda values: _one_or_many({"enum": list(values)})  # noqa: E731

CASE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "harness/case.schema.json",
    "title": "Differential-testing case",
    "description": "One case of the higher-order derivative study; file stem = case id.",
    **_obj(
        {
            "title": _TEXT,
            "source": {**_TEXT, "description": "Where the case comes from (citation)."},
            "notes": {"type": "string"},
            "inputs": {
                "type": "object",
                "propertyNames": {"pattern": _NAME},
                "additionalProperties": _INPUT,
                "minProperties": 1,
                "maxProperties": 8,
            },
            "let": {
                "type": "object",
                "description": "Local names, in order: each an expression of the inputs "
                "and the names above it, computed once wherever it is used.",
                "propertyNames": {"pattern": _NAME},
                "additionalProperties": _TEXT,
                "maxProperties": 64,
            },
            "function": {**_TEXT, "description": "The mathematical function of the inputs."},
            "derivatives": _obj(
                {
                    "wrt": {"type": "string", "pattern": _NAME},
                    "orders": {
                        "type": "array",
                        "items": {"type": "integer", "minimum": 1, "maximum": MAX_ORDER},
                        "minItems": 1,
                        "uniqueItems": True,
                    },
                    "partials": {"type": "array", "items": _PARTIAL, "minItems": 1},
                },
                minProperties=1,
                description="Orders 1-4 of one input (wrt + orders) and/or named partials. "
                "Order 0, the value, is always evaluated too.",
            ),
            "implementations": {
                "type": "object",
                "propertyNames": {"pattern": _NAME},
                "additionalProperties": _IMPLEMENTATION,
                "minProperties": 1,
            },
            "reference": _obj(
                {
                    "expression": {
                        **_TEXT,
                        "description": "Another form of the function for mpmath (default: "
                        "`function`).",
                    },
                    "derivatives": {
                        "type": "object",
                        "additionalProperties": _TEXT,
                        "minProperties": 1,
                        "description": "Closed forms for derivatives, keyed by partial label.",
                    },
                    "registered": _TEXT,
                    "precision": {"type": "integer", "minimum": 20, "maximum": 2000},
                },
                minProperties=1,
            ),
            "backends": _list_of(BACKENDS),
            "dtypes": _list_of(DTYPES),
            "methods": _list_of(METHODS),
            "modes": _list_of(MODES),
            "quick": _QUICK,
            "functions": {
                "type": "object",
                "propertyNames": {"pattern": _NAME},
                "additionalProperties": _FUNCTION,
                "minProperties": 1,
                "description": "Functions of the case, callable in `function`, implementations "
                "and the reference; with a `gradient`, each is a tf.custom_gradient function.",
            },
            "expectations": {
                "type": "array",
                "items": _obj(
                    {
                        "implementation": _one_or_many({"type": "string", "pattern": _NAME}),
                        "backend": _SELECTOR_ENUM(BACKENDS),
                        "method": _SELECTOR_ENUM(METHODS),
                        "mode": _SELECTOR_ENUM(MODES),
                        "dtype": _SELECTOR_ENUM(DTYPES),
                        "order": _one_or_many(
                            {"type": "integer", "minimum": 0, "maximum": MAX_ORDER}
                        ),
                        "partial": _PARTIAL,
                        "where": {
                            "type": "object",
                            "additionalProperties": {
                                "type": "array",
                                "items": _NUMBER,
                                "minItems": 2,
                                "maxItems": 2,
                            },
                            "description": "Input ranges [low, high] (inclusive) the "
                            "expectation covers.",
                        },
                        "outcome": {"enum": list(OUTCOMES)},
                        "reason": _TEXT,
                    },
                    ["implementation", "outcome", "reason"],
                ),
            },
            "tolerances": {
                "type": "array",
                "items": _obj(
                    {
                        "dtype": _SELECTOR_ENUM(DTYPES),
                        "order": _one_or_many(
                            {"type": "integer", "minimum": 0, "maximum": MAX_ORDER}
                        ),
                        "ulps": {"type": "number", "minimum": 0},
                        "reason": _TEXT,
                    },
                    ["ulps", "reason"],
                ),
            },
        },
        ["title", "source", "inputs", "derivatives", "implementations"],
    ),
    # A function is required, except beside a registered reference (a function the
    # expression language cannot say: a solver, a loop; the reference computes it).
    "if": {
        "not": {
            "required": ["reference"],
            "properties": {"reference": {"required": ["registered"]}},
        }
    },
    "then": {"required": ["function"]},
    "$defs": {"rule": _RULE},
}

#: An experiment case (``experiment: NAME``): the question is answered by an experiment
#: registered in the package (:mod:`harness.cases.experiment_kinds`); ``parameters`` is data for it,
#: checked against that experiment's own schema (filled in by
#: :func:`harness.cases.experiment_kinds.case_schema`).
EXPERIMENT_CASE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Differential-testing experiment case",
    **_obj(
        {
            "title": _TEXT,
            "source": CASE_SCHEMA["properties"]["source"],
            "notes": {"type": "string"},
            "experiment": {
                **_TEXT,
                "description": "The name of an experiment registered in the harness package.",
            },
            "parameters": {"type": "object", "description": "The experiment's parameters."},
            "quick_parameters": {
                "type": "object",
                "description": "Parameters that replace those of `parameters` in the `quick` "
                "setting (the default study); `full` ignores them.",
            },
            "backends": _list_of(BACKENDS),
            "dtypes": _list_of(DTYPES),
            "modes": _list_of(MODES),
            "quick": _QUICK,
            "expectations": CASE_SCHEMA["properties"]["expectations"],
        },
        ["title", "source", "experiment", "parameters"],
    ),
}

_SPLIT = {"type": "array", "items": {"enum": list(SPLIT_KEYS)}, "uniqueItems": True}
_TOLERANCE_ROW = {
    "type": "array",
    "items": {"type": "number", "minimum": 0},
    "minItems": MAX_ORDER + 1,
    "maxItems": MAX_ORDER + 1,
}

CONFIG_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Study configuration",
    **_obj(
        {
            "precision": {"type": "integer", "minimum": 20, "maximum": 2000},
            "verify_digits": {"type": "integer", "minimum": 5, "maximum": 1000},
            "max_precision": {"type": "integer", "minimum": 40, "maximum": 20000},
            "seed": {"type": "integer", "minimum": 0},
            "backends": CASE_SCHEMA["properties"]["backends"],
            "dtypes": CASE_SCHEMA["properties"]["dtypes"],
            "methods": CASE_SCHEMA["properties"]["methods"],
            "modes": CASE_SCHEMA["properties"]["modes"],
            "max_points": {"type": ["integer", "null"], "minimum": 1},
            # Failing derivatives localised to a primitive (the root causes' evidence).
            "localise": {"type": "boolean"},
            "compilation_cache": {
                "type": "boolean",
                "description": "Keep what JAX compiles in the results folder's "
                "`.cache/compiled/` for the next JAX processes (per JAX version and CPU).",
            },
            "batch": {
                **_BATCH,
                "type": ["integer", "null"],
                "description": "Evaluate every batch at this many points at least, the "
                "last ones copies of the first (null: each case's own count): one shape "
                "for every case a process evaluates, so a framework traces and compiles "
                "per shape once for all of them.",
            },
            "setting": {
                "enum": ["quick", "full"],
                "description": "`full` runs the lists above; `quick` narrows them by the "
                "`quick` block here and each case's own `quick` block.",
            },
            "quick": _narrowing("What the `quick` setting keeps of the lists above."),
            "split": _obj(
                {"quick": _SPLIT, "full": _SPLIT},
                description="How a case's evaluation in one back end is split into jobs, "
                "per setting: [] one job, [dtype] one per dtype, [dtype, method] one per both.",
            ),
            "census_kernels": {
                "anyOf": [
                    {"type": "null"},
                    {"type": "string", "minLength": 1},
                    {"type": "array", "items": {"type": "string"}, "minItems": 1},
                ],
                "description": "The operators the kernel census checks (null: every one; "
                "a list, or one string of comma-separated names), each with all its layouts.",
            },
            "census": _obj(
                {
                    s: _obj(
                        {
                            "dtypes": _list_of(DTYPES),
                            "per_sign": _PER_SIGN,
                            "batch": _BATCH,
                            "batches": {"type": "integer", "minimum": 1, "maximum": 256},
                            "split": _SPLIT,
                            "evaluate_mem_mb": {"type": "integer", "minimum": 500},
                            "reference_mem_mb": {"type": "integer", "minimum": 500},
                            "compare_mem_mb": {"type": "integer", "minimum": 500},
                            "collect_mem_mb": {"type": "integer", "minimum": 500},
                            "reproduce_mem_mb": {"type": "integer", "minimum": 500},
                        }
                    )
                    for s in _SETTINGS
                },
                description="The kernel census (`snakemake census`), per setting: its dtypes, "
                "the log-spaced magnitudes per sign and dtype of each argument, the one "
                "batch size its evaluations share (`batch` above), the number of "
                "batches its cases run in (a process per batch and framework), how a "
                "batch's evaluation in one framework is cut into jobs (`split`, as above; "
                "none: one job) and the memory its reference, evaluation, comparison, "
                "collect and reproduce jobs declare (`reference_mem_mb`, "
                "`evaluate_mem_mb`, `compare_mem_mb`, `collect_mem_mb`, "
                "`reproduce_mem_mb`, MB).",
            ),
            "tolerances": _obj(
                {d: _TOLERANCE_ROW for d in DTYPES},
                list(DTYPES),
                description="Max ulps accepted as `ok`, per dtype, indexed by order 0..4.",
            ),
        },
        [
            "precision",
            "verify_digits",
            "max_precision",
            "seed",
            "dtypes",
            "methods",
            "modes",
            "tolerances",
        ],
    ),
}
