"""The published case schema (``cases/case.schema.json``): every case file is an
expression case (:data:`harness.cases.schema.CASE_SCHEMA`) or, with an ``experiment`` key,
an experiment case whose ``parameters`` follow that experiment's declaration."""

from __future__ import annotations

import copy
import json
from typing import Any

from harness.cases.experiment_kinds import SPECS, case_schema
from harness.cases.schema import CASE_SCHEMA, EXPERIMENT_CASE_SCHEMA

__all__ = ["published_schema", "schema_json"]


def published_schema() -> dict[str, Any]:
    """The schema of every case file: an expression case (:data:`CASE_SCHEMA`) or, when
    it has an ``experiment`` key, an experiment case with that experiment's parameters."""
    expression = {k: v for k, v in CASE_SCHEMA.items() if k not in ("$schema", "$id", "$defs")}
    experiment = case_schema(EXPERIMENT_CASE_SCHEMA, None)
    experiment.pop("$schema")
    experiment["allOf"] = []
    for name in sorted(SPECS):
        params = copy.deepcopy(SPECS[name].parameters)
        quick = copy.deepcopy(params)
        quick.pop("required", None)
        experiment["allOf"].append(
            {
                "if": {"properties": {"experiment": {"const": name}}},
                "then": {"properties": {"parameters": params, "quick_parameters": quick}},
            }
        )
    return {
        "$schema": CASE_SCHEMA["$schema"],
        "$id": CASE_SCHEMA["$id"],
        "title": CASE_SCHEMA["title"],
        "description": CASE_SCHEMA["description"]
        + " A file with an `experiment` key is an experiment case.",
        "if": {"type": "object", "required": ["experiment"]},
        "then": {"$ref": "#/$defs/experiment_case"},
        "else": {"$ref": "#/$defs/expression_case"},
        "$defs": {
            **CASE_SCHEMA["$defs"],
            "expression_case": expression,
            "experiment_case": experiment,
        },
    }


def schema_json() -> str:
    """The published case schema, as written to ``cases/case.schema.json``."""
    return json.dumps(published_schema(), indent=2, sort_keys=False) + "\n"
