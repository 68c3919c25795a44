"""Case files: load, validate (every problem at once), and build the :class:`Case` model.

A problem is reported as ``file:line: key: message`` where ``key`` is the dotted path
of the offending entry (``implementations.naive.gradient.x``). Structural problems come
from the JSON Schema in :mod:`harness.cases.schema`; the rest (expressions, declared
names, ranges, ties, registered names, duplicate names) are checked here.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jsonschema

from harness.cases import expressions as ex
from harness.cases.common import INPUT_KINDS
from harness.cases.declarations import DeclarationChecks
from harness.cases.experiment_kinds import SPECS, ExperimentCase, case_schema
from harness.cases.model import Case, CaseError, Expectation, Narrowing, Problem
from harness.cases.schema import CASE_SCHEMA, EXPERIMENT_CASE_SCHEMA
from harness.cases.semantics import SemanticChecks
from harness.cases.yaml_lines import Located, YamlProblem, load

__all__ = ["Checker", "load_case", "validate_paths"]

_VALIDATOR = jsonschema.Draft202012Validator(CASE_SCHEMA)


def load_case(path: str | Path) -> Case:
    """Load and validate one case file.

    Raises
    ------
    CaseError
        With every problem found in the file.
    """
    case, problems = _check_file(Path(path))
    if problems or case is None:
        raise CaseError(problems)
    return case


def validate_paths(paths: Sequence[str | Path]) -> tuple[list[Case], list[Problem]]:
    """Validate many files; returns the valid cases and every problem in every file."""
    cases: list[Case] = []
    problems: list[Problem] = []
    seen: dict[str, str] = {}
    for p in paths:
        path = Path(p)
        case, found = _check_file(path)
        problems.extend(found)
        if case is not None and not found:
            if case.id in seen:
                problems.append(
                    Problem(
                        str(path), 1, "", f"case id {case.id!r} already used by {seen[case.id]}"
                    )
                )
                continue
            seen[case.id] = str(path)
            cases.append(case)
    return cases, problems


def _check_file(path: Path) -> tuple[Case | None, list[Problem]]:
    name = str(path)
    if path.suffix not in (".yaml", ".yml"):
        return None, [Problem(name, 1, "", "a case file must end in .yaml or .yml")]
    if not ex_valid_id(path.stem):
        return None, [
            Problem(
                name,
                1,
                "",
                f"file stem {path.stem!r} is not a valid case id (letters, "
                "digits, '_' and '-', starting with a letter)",
            )
        ]
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, [Problem(name, 0, "", "no such file")]
    except (OSError, UnicodeDecodeError) as exc:
        return None, [Problem(name, 0, "", f"cannot read: {exc}")]
    try:
        located = load(text)
    except YamlProblem as exc:
        return None, [Problem(name, exc.line, "", exc.message)]
    checker = Checker(name, path.stem, located)
    case = checker.run()
    # Top to bottom, as the file reads (sorted() is stable for problems on one line).
    return case, sorted(checker.problems, key=lambda p: p.line)


def ex_valid_id(stem: str) -> bool:
    return bool(stem) and stem[0].isalpha() and all(c.isalnum() or c in "_-" for c in stem)


def _dotted(path: Sequence[str | int]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


class Checker(SemanticChecks, DeclarationChecks):
    """Validates one loaded case file: every problem at once, then the model."""

    def __init__(self, file: str, case_id: str, located: Located):
        self.file = file
        self.case_id = case_id
        self.located = located
        self.problems: list[Problem] = []
        self.broken: set[tuple] = set()  # paths with structural problems
        self.unloaded: set[tuple] = set()  # paths whose YAML could not be read as data
        # The case's own functions (``functions:``): arity for the parser, bodies to inline.
        self.arity: dict[str, int] = {}
        self.bodies: dict[str, tuple[tuple[str, ...], ex.Node]] = {}

    def add(self, path: Sequence[str | int], message: str, hint: str = "") -> None:
        text = f"{message} (hint: {hint})" if hint else message
        self.problems.append(
            Problem(self.file, self.located.line(tuple(path)), _dotted(path), text)
        )

    # -- structure ---------------------------------------------------------------
    def run(self) -> Case | None:
        for line, path, message in self.located.problems:
            self.problems.append(Problem(self.file, line, _dotted(path), message))
            self.broken.add(tuple(path))
            self.unloaded.add(tuple(path))
        data = self.located.data
        if not isinstance(data, dict):
            if data is None and self.located.problems:
                return None  # the whole document was refused (a tag); that is the problem
            kind = "empty" if data is None else type(data).__name__
            self.add((), f"a case file must be a mapping of keys, got {kind}")
            return None
        if "experiment" in data:
            return self._experiment(data)
        for error in sorted(_VALIDATOR.iter_errors(data), key=lambda e: list(map(str, e.path))):
            self._schema_problem(error)
        return self._semantics(data)

    def _experiment(self, data: dict[str, Any]):
        """An experiment case: structure from the experiment's own parameter schema."""
        name = data.get("experiment")
        schema = case_schema(EXPERIMENT_CASE_SCHEMA, name)
        validator = jsonschema.Draft202012Validator(schema)
        for error in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.path))):
            self._schema_problem(error)
        if self.problems:
            return None
        expectations = self._experiment_expectations(data, SPECS[name])
        if self.problems or expectations is None:
            return None
        return ExperimentCase(
            id=self.case_id,
            path=self.file,
            title=data["title"],
            source=data["source"],
            notes=data.get("notes", ""),
            experiment=name,
            parameters=data["parameters"],
            quick_parameters=data.get("quick_parameters", {}),
            dtypes=tuple(data["dtypes"]) if "dtypes" in data else None,
            modes=tuple(data["modes"]) if "modes" in data else None,
            quick=Narrowing.from_data(data.get("quick")),
            expectations=tuple(expectations),
            raw=data,
            backends=tuple(data["backends"]) if "backends" in data else None,
        )

    def _experiment_expectations(self, data: dict[str, Any], exp) -> list[Expectation] | None:
        """Expectations of an experiment case: implementations are the experiment's
        (``implementation`` column), ``partial`` one of its quantities, ``where`` ranges
        over its inputs."""
        specs = data.get("expectations", [])
        for i, spec in enumerate(specs):
            quantity = spec.get("partial")
            if quantity is not None and quantity not in exp.quantities:
                self.add(
                    ("expectations", i, "partial"),
                    f"unknown quantity {quantity!r}",
                    f"{exp.name} has: {', '.join(exp.quantities)}",
                )
        view = {
            "implementations": dict.fromkeys(exp.implementations, {}),
            "expectations": [{k: v for k, v in s.items() if k != "partial"} for s in specs],
        }
        built = self._expectations(view, frozenset(exp.inputs))
        if built is None or self.problems:
            return None
        return [
            dataclasses.replace(e, partial=spec.get("partial")) for e, spec in zip(built, specs)
        ]

    def _schema_problem(self, error: jsonschema.ValidationError) -> None:
        path = tuple(error.absolute_path)
        if any(path[: len(u)] == u for u in self.unloaded):
            # The value there was refused while loading (a tag, a duplicate key) and
            # already has its problem; its placeholder would only add noise.
            return
        v = error.validator
        if v == "additionalProperties" and isinstance(error.instance, dict):
            allowed = sorted(error.schema.get("properties", {}))
            extra = [k for k in error.instance if k not in allowed]
            for key in extra:
                self.broken.add((*path, key))
                close = difflib.get_close_matches(str(key), allowed, n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                self.add(
                    (*path, key), f"unknown key {key!r}", f"{hint}allowed: {', '.join(allowed)}"
                )
            return
        if v == "anyOf" and error.context:
            branch = _matching_branch(error.validator_value, error.instance)
            if branch is not None:
                # The value has the shape of one alternative: report why it fails that one
                # (an enum miss, a missing key) rather than "matches none".
                for sub in error.context:
                    if sub.relative_schema_path and sub.relative_schema_path[0] == branch:
                        self._schema_problem(sub)
                if path in self.broken or any(b[: len(path)] == path for b in self.broken):
                    return
        if v == "pattern" and list(error.schema_path)[-2:] == ["propertyNames", "pattern"]:
            # An invalid key name: point at the key, not at the mapping that holds it.
            path = (*path, error.instance)
            self.broken.add(path)
            self.add(path, f"{error.instance!r} is not a valid name (letters, digits, _)")
            return
        if v == "required":
            missing = [k for k in error.validator_value if k not in error.instance]
            # The missing key, not its parent, is broken: the parent's other entries are
            # still checked (every problem at once), and ok() still guards the parent.
            self.broken.update((*path, k) for k in missing)
            self.add(path, error.message.replace("is a required property", "is required"))
            return
        self.broken.add(path)
        if v == "type":
            want = error.validator_value
            want = " or ".join(want) if isinstance(want, list) else want
            self.add(path, f"expected {_article(want)}, got {_describe(error.instance)}")
        elif v == "enum":
            self.add(
                path,
                f"{error.instance!r} is not one of {', '.join(map(str, error.validator_value))}",
            )
        elif v in ("exclusiveMinimum", "minimum", "maximum"):
            word = {"exclusiveMinimum": "greater than", "minimum": "at least", "maximum": "at most"}
            self.add(path, f"must be {word[v]} {error.validator_value}, got {error.instance!r}")
        elif v in ("minProperties", "maxProperties") and len(path) == 2 and path[0] == "inputs":
            known = [k for k in error.instance if k in INPUT_KINDS]
            if v == "maxProperties" and len(known) == 1:
                return  # one kind plus unknown keys: the unknown keys are reported alone
            self.add(
                path,
                "an input needs exactly one of log, linear, values, samples, random, tie"
                + (f"; got {', '.join(error.instance)}" if error.instance else ""),
            )
        elif v == "minProperties" and error.validator_value == 1:
            self.add(path, "must not be empty")
        elif v == "minItems" and isinstance(error.instance, list):
            self.add(
                path, f"needs at least {error.validator_value} item(s), got {len(error.instance)}"
            )
        elif v == "maxItems" and isinstance(error.instance, list):
            self.add(
                path, f"takes at most {error.validator_value} item(s), got {len(error.instance)}"
            )
        elif v == "uniqueItems":
            self.add(path, "lists an item twice")
        elif v == "minLength":
            self.add(path, "must not be empty")
        elif v == "pattern":
            self.add(path, f"{error.instance!r} is not a valid name (letters, digits, _)")
        elif v == "anyOf":
            wanted = " or ".join(_branch_name(b) for b in error.validator_value)
            self.add(
                path,
                f"expected {wanted}, got {_describe(error.instance)}",
                error.schema.get("description", ""),
            )
        else:
            self.add(path, error.message)

    def intact(self, *path: str | int) -> bool:
        """True when nothing at or above ``path`` had a structural problem."""
        return not any(tuple(path[:i]) in self.broken for i in range(len(path) + 1))

    def ok(self, *path: str | int) -> bool:
        """True when nothing at, above or below ``path`` had a structural problem."""
        if not self.intact(*path):
            return False
        # Below: a broken child makes the whole subtree unusable for semantics too.
        return not any(b[: len(path)] == tuple(path) for b in self.broken if len(b) > len(path))

    # -- semantics ---------------------------------------------------------------
    # Each check runs on every entry whose own structure is sound, so one broken
    # entry does not hide the problems of its neighbours.


def _matching_branch(branches: list[dict[str, Any]], instance: Any) -> int | None:
    """The first ``anyOf`` alternative whose type the instance has, if any."""
    for i, schema in enumerate(branches):
        if "type" in schema:
            types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if any(_VALIDATOR.is_type(instance, t) for t in types):
                return i
        elif "enum" in schema:
            if not isinstance(instance, (list, dict)):
                return i
        else:
            return i
    return None


def _branch_name(schema: dict[str, Any]) -> str:
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        return " or ".join(_article(t) for t in types)
    if "enum" in schema:
        return f"one of {', '.join(map(str, schema['enum']))}"
    return "a valid value"


def _article(word: str) -> str:
    names = {
        "object": "a mapping",
        "array": "a list",
        "string": "a string",
        "number": "a number",
        "integer": "an integer",
        "boolean": "true or false",
    }
    return names.get(word, word)


def _describe(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"a boolean ({value})"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return f"a string ({value!r})"
    return f"{type(value).__name__} {value!r}"
