"""What the case checks share: the names a case may not use, the kinds of input sweep,
the declared input names before validation, and list-or-scalar fields."""

from __future__ import annotations

from typing import Any

from harness.cases import expressions as ex

__all__ = ["INPUT_KINDS", "LISTED_KINDS", "RESERVED", "as_tuple", "declared_inputs"]

#: Names a case cannot give its inputs or functions (the language's own).
RESERVED = {"dy", "dx", "where", *ex.FUNCTIONS, *ex.VARIADIC, *ex.CONSTANTS}

INPUT_KINDS = ("log", "linear", "values", "samples", "random", "tie")

#: The kinds whose values are listed in the case file (``values``: points of their own;
#: ``samples``: samples of one interval).
LISTED_KINDS = ("values", "samples")


def declared_inputs(data: dict[str, Any]) -> frozenset[str] | None:
    """The declared input names, usable even when some input's spec is broken."""
    raw = data.get("inputs")
    if not isinstance(raw, dict) or not raw:
        return None
    return frozenset(raw)


def as_tuple(value: Any) -> tuple | None:
    """``None`` stays ``None``; a list becomes a tuple; a scalar a 1-tuple."""
    if value is None:
        return None
    return tuple(value) if isinstance(value, list) else (value,)
