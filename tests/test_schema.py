"""The published case schema is current, and every real case satisfies it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from harness.cases.expressions import FUNCTIONS
from harness.cases.published_schema import schema_json
from harness.cases.schema import CASE_SCHEMA, DTYPES, METHODS, MODES, OUTCOMES
from harness.cases.yaml_lines import load

REPO = Path(__file__).resolve().parents[1]
PUBLISHED = REPO / "cases" / "case.schema.json"
CASES = sorted((REPO / "cases").glob("*.yaml")) + sorted((REPO / "cases").glob("templates/*.yaml"))


def test_published_schema_is_current():
    assert PUBLISHED.read_text(encoding="utf-8") == schema_json(), (
        "cases/case.schema.json is stale: regenerate with `harness schema > cases/case.schema.json`"
    )


def test_published_schema_is_a_valid_json_schema():
    schema = json.loads(PUBLISHED.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    # Expression cases get CASE_SCHEMA; files with `experiment:` the experiment schema.
    expression = {k: v for k, v in CASE_SCHEMA.items() if k not in ("$schema", "$id", "$defs")}
    assert schema["$defs"]["expression_case"] == expression
    validator = jsonschema.Draft202012Validator(schema)
    bad = {"title": "t", "source": "s", "experiment": "hessian_norm", "parameters": {"seed": 1}}
    assert any("required" in e.message for e in validator.iter_errors(bad))
    assert not validator.is_valid({**bad, "experiment": "nope"})


def test_there_are_real_cases():
    assert any(p.parent.name == "cases" for p in CASES)


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_case_satisfies_published_schema(path: Path):
    # The harness's safe loader (PyYAML's SafeLoader, which also reads 1e-3 as a number
    # as YAML 1.2 and editors do; plain yaml.safe_load follows YAML 1.1 and would read
    # it as a string). Checked with jsonschema alone, not with the harness validator.
    located = load(path.read_text(encoding="utf-8"))
    assert located.problems == []
    validator = jsonschema.Draft202012Validator(json.loads(PUBLISHED.read_text(encoding="utf-8")))
    errors = sorted(validator.iter_errors(located.data), key=lambda e: list(map(str, e.path)))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors)


# -- cases/README.md documents the schema ------------------------------------------------

README = REPO / "cases" / "README.md"


def _field_table() -> list[str]:
    """The first cells (the dotted field names) of the README's field table."""
    rows = []
    for line in README.read_text(encoding="utf-8").splitlines():
        if line.startswith("| `") and line.count("|") >= 6:
            rows.append(line.split("|")[1].strip())
    return rows


def _properties(schema: dict, seen: set[str]) -> set[str]:
    """Every property name anywhere in the schema (following $ref into $defs)."""
    names: set[str] = set()
    if isinstance(schema, dict):
        if "$ref" in schema:
            ref = schema["$ref"].rsplit("/", 1)[-1]
            if ref not in seen:
                seen.add(ref)
                names |= _properties(CASE_SCHEMA["$defs"][ref], seen)
        for key, value in schema.items():
            if key == "properties":
                names |= set(value)
                for sub in value.values():
                    names |= _properties(sub, seen)
            elif key != "$defs":
                names |= _properties(value, seen)
    elif isinstance(schema, list):
        for item in schema:
            names |= _properties(item, seen)
    return names


def test_readme_table_has_every_top_level_field():
    fields = {cell.strip("`") for cell in _field_table()}
    missing = [key for key in CASE_SCHEMA["properties"] if key not in fields]
    assert not missing, f"cases/README.md's field table lacks {missing}"


def test_readme_table_has_every_nested_field():
    cells = " ".join(_field_table())
    last_parts = set(re.findall(r"[.`]([A-Za-z_]+)`", cells)) | set(
        re.findall(r"`\.([A-Za-z_]+)`", cells)
    )
    missing = sorted(_properties(CASE_SCHEMA, set()) - last_parts)
    assert not missing, f"cases/README.md's field table lacks {missing}"


def test_readme_lists_every_function_and_vocabulary():
    text = README.read_text(encoding="utf-8")
    for name, arity in FUNCTIONS.items():
        args = ", ".join(["x", "y"][:arity])
        assert f"`{name}({args})`" in text, f"cases/README.md does not list {name}()"
    for word in (*DTYPES, *METHODS, *MODES, *OUTCOMES):
        assert f"`{word}`" in text, f"cases/README.md does not mention {word}"
