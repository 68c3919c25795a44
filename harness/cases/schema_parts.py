"""The shared vocabulary of the JSON Schemas (:mod:`harness.cases.schema` and
:mod:`harness.cases.schema_rules`): names, text, closed objects, one-or-many."""

from __future__ import annotations

from typing import Any

__all__ = ["NAME", "TEXT", "obj", "one_or_many"]

#: An identifier: an input, function, parameter or implementation name.
NAME = "^[A-Za-z_][A-Za-z0-9_]*$"
TEXT = {"type": "string", "minLength": 1}


def obj(properties: dict[str, Any], required: list[str] | None = None, **extra: Any) -> dict:
    """A closed object: only ``properties``, ``required`` among them."""
    out: dict[str, Any] = {
        "type": "object",
        "additionalProperties": False,
        "properties": properties,
    }
    if required:
        out["required"] = required
    out.update(extra)
    return out


def one_or_many(item: dict[str, Any]) -> dict[str, Any]:
    """One ``item`` or a non-empty list of them."""
    return {"anyOf": [item, {"type": "array", "items": item, "minItems": 1}]}
