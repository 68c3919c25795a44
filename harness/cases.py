"""Case files: load, validate (every problem at once), and build the :class:`Case` model.

A problem is reported as ``file:line: key: message`` where ``key`` is the dotted path
of the offending entry (``implementations.naive.gradient.x``). Structural problems come
from the JSON Schema in :mod:`harness.case_schema`; the rest (expressions, declared
names, ranges, ties, registered names, duplicate names) are checked here.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import jsonschema

from . import expressions as ex
from . import registry
from .case_schema import CASE_SCHEMA, EXPERIMENT_CASE_SCHEMA, MAX_ORDER, METHODS
from .yaml_lines import Located, YamlProblem, load

__all__ = [
    "Case",
    "CaseError",
    "Expectation",
    "CaseFunction",
    "Implementation",
    "Narrowing",
    "InputSpec",
    "Partial",
    "Problem",
    "ReferenceSpec",
    "Rule",
    "Tolerance",
    "load_case",
    "partial_label",
    "validate_paths",
]

Partial = tuple[str, ...]
#: A custom-gradient rule: an expression of the inputs and ``dy``, or a nested custom
#: function ``(expression, gradient)`` whose vector-Jacobian product is ``dy * F``.
Rule = Union[ex.Node, "NestedRule"]

_RESERVED = {"dy", "where", *ex.FUNCTIONS, *ex.CONSTANTS}
_VALIDATOR = jsonschema.Draft202012Validator(CASE_SCHEMA)


@dataclass(frozen=True)
class Problem:
    """One validation problem."""

    file: str
    line: int
    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.key or '(file)'}: {self.message}"


class CaseError(ValueError):
    """A case file with problems; ``problems`` lists every one of them."""

    def __init__(self, problems: Sequence[Problem]):
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = list(problems)


@dataclass(frozen=True)
class InputSpec:
    name: str
    kind: str  # log linear values random tie
    params: dict[str, Any]


@dataclass(frozen=True)
class NestedRule:
    expression: ex.Node
    gradient: dict[str, Rule]
    pattern: str = "nested_function"  # or "decorated_grad_fn" (TensorFlow issue #34503)


@dataclass(frozen=True)
class CaseFunction:
    """A function of the case's ``functions:`` block, callable in its expressions.

    With ``gradient`` it is a ``tf.custom_gradient`` function in TensorFlow (rules in
    its parameters and ``dy``, nestable as in implementations); the mpmath reference
    inlines its ``expression`` (a custom gradient does not change the mathematics).
    """

    name: str
    params: tuple[str, ...]
    expression: ex.Node
    gradient: dict[str, Rule] | None = None
    description: str = ""


@dataclass(frozen=True)
class Implementation:
    name: str
    expression: ex.Node | None = None
    gradient: dict[str, Rule] | None = None
    registered: str | None = None
    text: str = ""
    description: str = ""

    @property
    def kind(self) -> str:
        if self.registered:
            return "registered"
        return "custom_gradient" if self.gradient else "expression"


@dataclass(frozen=True)
class ReferenceSpec:
    expression: ex.Node
    text: str
    derivatives: dict[Partial, ex.Node] = field(default_factory=dict)
    registered: str | None = None
    precision: int | None = None


@dataclass(frozen=True)
class Narrowing:
    """A ``quick`` block (of a case or of the study settings): what the quick setting keeps.

    Lists narrow by intersection, ``max_points`` and ``max_order`` by the minimum;
    ``max_order`` maps a method to its highest order (methods not named keep all).
    """

    dtypes: tuple[str, ...] | None = None
    methods: tuple[str, ...] | None = None
    modes: tuple[str, ...] | None = None
    max_points: int | None = None
    max_order: tuple[tuple[str, int], ...] | None = None

    @classmethod
    def from_data(cls, data: dict[str, Any] | None) -> Narrowing | None:
        """From validated data (the schema has checked every field)."""
        if not data:
            return None
        order = data.get("max_order")
        if isinstance(order, int):
            order = {m: order for m in METHODS}
        return cls(
            dtypes=tuple(data["dtypes"]) if "dtypes" in data else None,
            methods=tuple(data["methods"]) if "methods" in data else None,
            modes=tuple(data["modes"]) if "modes" in data else None,
            max_points=data.get("max_points"),
            max_order=tuple(sorted(order.items())) if order else None,
        )


@dataclass(frozen=True)
class Expectation:
    outcome: str
    reason: str
    implementations: tuple[str, ...]
    methods: tuple[str, ...] | None = None
    modes: tuple[str, ...] | None = None
    dtypes: tuple[str, ...] | None = None
    orders: tuple[int, ...] | None = None
    partial: Partial | None = None
    where: dict[str, tuple[float, float]] = field(default_factory=dict)


@dataclass(frozen=True)
class Tolerance:
    ulps: float
    reason: str
    dtypes: tuple[str, ...] | None = None
    orders: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Case:
    """A validated case. ``partials`` always starts with ``()`` (order 0, the value)."""

    id: str
    path: str
    title: str
    source: str
    notes: str
    inputs: tuple[InputSpec, ...]
    function: ex.Node
    function_text: str
    partials: tuple[Partial, ...]
    implementations: tuple[Implementation, ...]
    reference: ReferenceSpec
    dtypes: tuple[str, ...] | None
    methods: tuple[str, ...] | None
    modes: tuple[str, ...] | None
    quick: Narrowing | None
    expectations: tuple[Expectation, ...]
    tolerances: tuple[Tolerance, ...]
    raw: dict[str, Any]
    functions: tuple[CaseFunction, ...] = ()

    @property
    def input_names(self) -> tuple[str, ...]:
        return tuple(i.name for i in self.inputs)

    @property
    def content_hash(self) -> str:
        """Hash of the file's data (not its formatting or comments)."""
        return _hash(self.raw)

    @property
    def reference_hash(self) -> str:
        """Hash of what the reference depends on: function, reference, inputs, partials."""
        keys = ("function", "reference", "inputs")
        part = {k: self.raw.get(k) for k in keys}
        part["partials"] = [list(p) for p in self.partials]
        return _hash(part)

    def label(self, partial: Partial) -> str:
        return partial_label(partial, self.input_names)

    def implementation(self, name: str) -> Implementation:
        for impl in self.implementations:
            if impl.name == name:
                return impl
        raise KeyError(name)


def _hash(data: Any) -> str:
    blob = json.dumps(data, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def partial_label(partial: Partial, input_names: Iterable[str]) -> str:
    """``('a', 'b')`` -> ``"ab"`` when all names are one letter, else ``"a,b"``; ``()`` -> ``""``."""
    if all(len(n) == 1 for n in input_names):
        return "".join(partial)
    return ",".join(partial)


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
    checker = _Checker(name, path.stem, located)
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


class _Checker:
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
        from . import experiments

        name = data.get("experiment")
        schema = experiments.case_schema(EXPERIMENT_CASE_SCHEMA, name)
        validator = jsonschema.Draft202012Validator(schema)
        for error in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.path))):
            self._schema_problem(error)
        if self.problems:
            return None
        expectations = self._experiment_expectations(data, experiments.get(name))
        if self.problems or expectations is None:
            return None
        return experiments.ExperimentCase(
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
            known = [k for k in error.instance if k in _INPUT_KINDS]
            if v == "maxProperties" and len(known) == 1:
                return  # one kind plus unknown keys: the unknown keys are reported alone
            self.add(
                path,
                "an input needs exactly one of log, linear, values, random, tie"
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
    def _semantics(self, data: dict[str, Any]) -> Case | None:
        names = _input_names(data)
        functions = self._functions(data, names)
        inputs = self._inputs(data, names)
        function = self._expr(("function",), data.get("function"), names)
        partials = self._partials(data, names)
        implementations = self._implementations(data, names)
        reference = self._reference(data, names, function)
        expectations = self._expectations(data, names)
        tolerances = self._tolerances(data)
        if self.problems or None in (
            inputs,
            function,
            partials,
            implementations,
            reference,
            functions,
        ):
            return None
        return Case(
            id=self.case_id,
            path=self.file,
            title=data["title"],
            source=data["source"],
            notes=data.get("notes", ""),
            inputs=tuple(inputs),
            function=function,
            function_text=data["function"],
            partials=tuple(partials),
            implementations=tuple(implementations),
            reference=reference,
            dtypes=tuple(data["dtypes"]) if "dtypes" in data else None,
            methods=tuple(data["methods"]) if "methods" in data else None,
            modes=tuple(data["modes"]) if "modes" in data else None,
            quick=Narrowing.from_data(data.get("quick")),
            expectations=tuple(expectations or ()),
            tolerances=tuple(tolerances or ()),
            raw=data,
            functions=tuple(functions or ()),
        )

    def _expr(self, path: tuple, text: Any, names: frozenset[str] | None) -> ex.Node | None:
        if names is None or not self.ok(*path) or text is None:
            return None
        try:
            return ex.parse(text, names, self.arity)
        except ex.ExpressionError as exc:
            self.add(path, f"{exc} in {text!r}")
            return None

    def _functions(
        self, data: dict[str, Any], names: frozenset[str] | None
    ) -> list[CaseFunction] | None:
        """The ``functions:`` block, in file order: each body may call the ones before it."""
        specs = data.get("functions", {})
        if not isinstance(specs, dict) or not self.intact("functions"):
            return None
        out, ok = [], True
        for name, spec in specs.items():
            path = ("functions", name)
            if not self.ok(*path):
                ok = False
                continue
            params = tuple(spec["args"])
            if name in _RESERVED or (names is not None and name in names):
                self.add(path, f"function name {name!r} is already taken (an input or built-in)")
                ok = False
                continue
            bad = [p for p in params if p in _RESERVED]
            if bad:
                self.add((*path, "args"), f"{bad[0]!r} is reserved and cannot be an argument")
                ok = False
                continue
            local = frozenset(params)
            # Its body and rules may call only the functions above it (no recursion).
            body = self._expr((*path, "expression"), spec["expression"], local)
            gradient = None
            if "gradient" in spec:
                gradient = self._gradient((*path, "gradient"), spec["gradient"], local)
            # Known from here on even if broken: a broken body is reported once, not again
            # as an unknown function wherever it is called.
            self.arity[name] = len(params)
            if body is None or ("gradient" in spec and gradient is None):
                ok = False
                continue
            self.bodies[name] = (params, body)
            out.append(CaseFunction(name, params, body, gradient, spec.get("description", "")))
        return out if ok else None

    def _inputs(self, data: dict[str, Any], names: frozenset[str] | None) -> list[InputSpec] | None:
        if names is None:
            return None
        out: list[InputSpec] = []
        raw = data["inputs"]
        complete = True
        for name, spec in raw.items():
            path = ("inputs", name)
            if name in _RESERVED:
                self.add(path, f"{name!r} is reserved and cannot name an input")
                complete = False
                continue
            kinds = [k for k in spec if k in _INPUT_KINDS] if isinstance(spec, dict) else []
            if not self.ok(*path):
                complete = False
                # An unknown key beside a sound generator: still check the generator.
                if not (self.intact(*path) and len(kinds) == 1 and self.ok(*path, kinds[0])):
                    continue
            kind = kinds[0]
            params = spec[kind]
            if not isinstance(params, dict):
                params = {kind: params}
            out.append(InputSpec(name, kind, params))
            if kind in ("log", "random"):
                lo, hi = params["from"], params["to"]
                if not math.isfinite(lo) or not math.isfinite(hi):
                    self.add((*path, kind), "bounds must be finite")
                elif lo > hi:
                    self.add(
                        (*path, kind), f"empty range: from {lo!r} > to {hi!r}", "swap from and to"
                    )
                elif lo == hi and params["count"] > 1:
                    self.add(
                        (*path, kind),
                        f"empty range: from == to == {lo!r} with count {params['count']}",
                        "use values: [...] for a single point",
                    )
            elif kind == "linear":
                lo, hi = params["from"], params["to"]
                if not math.isfinite(lo) or not math.isfinite(hi):
                    self.add((*path, kind), "bounds must be finite")
                elif lo >= hi:
                    self.add((*path, kind), f"empty range: from {lo!r} >= to {hi!r}")
            elif kind == "values":
                if any(not math.isfinite(v) for v in params["values"]):
                    self.add((*path, kind), "values must be finite numbers")
            if any(not math.isfinite(v) for v in params.get("include") or []):
                self.add((*path, kind, "include"), "included values must be finite numbers")
            elif kind == "tie":
                target = params["tie"]
                if target not in raw:
                    self.add(
                        (*path, kind),
                        f"ties to unknown input {target!r}",
                        f"inputs: {', '.join(sorted(raw))}",
                    )
                elif target == name:
                    self.add((*path, kind), "an input cannot tie to itself")
                elif isinstance(raw[target], dict) and "tie" in raw[target]:
                    self.add(
                        (*path, kind),
                        f"ties to {target!r}, which is itself tied",
                        f"tie to {raw[target]['tie']!r} directly",
                    )
        if complete and out and all(i.kind == "tie" for i in out):
            self.add(("inputs",), "at least one input must generate values (not a tie)")
        return out if complete and self.intact("inputs") else None

    def _partial(self, path: tuple, value: Any, names: frozenset[str]) -> Partial | None:
        if isinstance(value, str):
            if value in names:
                return (value,)
            if all(len(n) == 1 for n in names) and all(c in names for c in value):
                return tuple(value)
            parts = tuple(v.strip() for v in value.split(","))
            if "," in value and all(v in names for v in parts):
                return parts  # the label form of multi-letter names: "r,y0"
            if all(len(n) == 1 for n in names):
                bad = sorted({c for c in value if c not in names})
                self.add(
                    path,
                    f"partial {value!r} uses undeclared input(s) {', '.join(bad)}",
                    f"inputs: {', '.join(sorted(names))}",
                )
            else:
                self.add(
                    path,
                    f"partial {value!r} is not an input name",
                    "with multi-letter input names write a partial as a list, e.g. [r, y0], "
                    "or as its label 'r,y0'",
                )
            return None
        bad = [v for v in value if v not in names]
        if bad:
            self.add(
                path,
                f"partial uses undeclared input(s) {', '.join(bad)}",
                f"inputs: {', '.join(sorted(names))}",
            )
            return None
        return tuple(value)

    def _partials(self, data: dict[str, Any], names: frozenset[str] | None) -> list[Partial] | None:
        spec = data.get("derivatives")
        if names is None or not isinstance(spec, dict) or not self.intact("derivatives"):
            return None
        out: list[Partial] = [()]
        ok = True
        if self.ok("derivatives", "wrt") and self.ok("derivatives", "orders"):
            wrt, orders = spec.get("wrt"), spec.get("orders")
            if (wrt is None) != (orders is None):
                self.add(
                    ("derivatives",),
                    "wrt and orders go together",
                    "e.g. wrt: x and orders: [1, 2, 3, 4]",
                )
                ok = False
            elif wrt is not None and wrt not in names:
                self.add(
                    ("derivatives", "wrt"),
                    f"unknown input {wrt!r}",
                    f"inputs: {', '.join(sorted(names))}",
                )
                ok = False
            elif wrt is not None:
                out += [(wrt,) * n for n in sorted(orders)]
        else:
            ok = False
        if not self.intact("derivatives", "partials"):
            return None
        for i, value in enumerate(spec.get("partials", [])):
            path = ("derivatives", "partials", i)
            if not self.ok(*path):
                ok = False
                continue
            p = self._partial(path, value, names)
            if p is None:
                ok = False
            elif len(p) > MAX_ORDER:
                self.add(path, f"order {len(p)} is above {MAX_ORDER}")
                ok = False
            elif p in out:
                self.add(path, f"partial {value!r} listed twice")
                ok = False
            else:
                out.append(p)
        return out if ok else None

    def _rule(self, path: tuple, value: Any, names: frozenset[str]) -> Rule | None:
        if isinstance(value, str):
            return self._expr(path, value, names | {"dy"})
        expression = self._expr((*path, "expression"), value["expression"], names)
        gradient = self._gradient((*path, "gradient"), value["gradient"], names)
        if expression is None or gradient is None:
            return None
        return NestedRule(expression, gradient, value.get("pattern", "nested_function"))

    def _gradient(self, path: tuple, value: dict, names: frozenset[str]) -> dict[str, Rule] | None:
        out: dict[str, Rule] = {}
        ok = True
        for name, rule in value.items():
            if name not in names:
                self.add(
                    (*path, name),
                    f"gradient for undeclared input {name!r}",
                    f"inputs: {', '.join(sorted(names))}",
                )
                ok = False
                continue
            r = self._rule((*path, name), rule, names)
            ok = ok and r is not None
            out[name] = r
        return out if ok else None

    def _implementations(
        self, data: dict[str, Any], names: frozenset[str] | None
    ) -> list[Implementation] | None:
        specs = data.get("implementations")
        if names is None or not isinstance(specs, dict) or not self.intact("implementations"):
            return None
        out: list[Implementation] = []
        ok = True
        lowered: dict[str, str] = {}
        for name, spec in specs.items():
            path = ("implementations", name)
            if name.lower() in lowered:
                self.add(
                    path,
                    f"implementation name {name!r} clashes with "
                    f"{lowered[name.lower()]!r} (names must differ ignoring case)",
                )
                ok = False
            lowered[name.lower()] = name
            if not isinstance(spec, dict) or not self.intact(*path):
                ok = False
                continue
            if not self.ok(*path):
                ok = False  # and check its sound parts all the same
            has_expr, has_reg = "expression" in spec, "registered" in spec
            if has_expr == has_reg:
                self.add(path, "give exactly one of expression or registered")
                ok = False
                continue
            if has_reg:
                reg = spec["registered"]
                if "gradient" in spec:
                    self.add(
                        (*path, "gradient"),
                        "a registered implementation defines its own gradients in Python",
                    )
                    ok = False
                if not self.ok(*path, "registered"):
                    continue
                try:
                    entry = registry.get(reg)
                except KeyError:
                    known = ", ".join(registry.names()) or "none"
                    close = difflib.get_close_matches(reg, registry.names(), n=1)
                    hint = f"did you mean {close[0]!r}? " if close else ""
                    self.add(
                        (*path, "registered"),
                        f"unknown implementation {reg!r}",
                        f"{hint}registered: {known}",
                    )
                    ok = False
                    continue
                if set(entry.inputs) != set(names):
                    self.add(
                        (*path, "registered"),
                        f"{reg!r} takes inputs {', '.join(entry.inputs)}; the case declares "
                        f"{', '.join(sorted(names))}",
                    )
                    ok = False
                    continue
                out.append(
                    Implementation(
                        name,
                        registered=reg,
                        description=spec.get("description", entry.description),
                    )
                )
                continue
            expr = self._expr((*path, "expression"), spec["expression"], names)
            grad = None
            if "gradient" in spec:
                if self.ok(*path, "gradient"):
                    grad = self._gradient((*path, "gradient"), spec["gradient"], names)
                if grad is None:
                    ok = False
            if expr is None:
                ok = False
                continue
            out.append(
                Implementation(
                    name,
                    expression=expr,
                    gradient=grad,
                    text=spec["expression"],
                    description=spec.get("description", ""),
                )
            )
        return out if ok else None

    def _reference(
        self, data: dict[str, Any], names: frozenset[str] | None, function: ex.Node | None
    ) -> ReferenceSpec | None:
        spec = data.get("reference", {})
        if names is None or not isinstance(spec, dict) or not self.intact("reference"):
            return None
        ok = self.ok("reference")
        if "registered" in spec and self.ok("reference", "registered"):
            try:
                registry.get_reference(spec["registered"])
            except KeyError:
                known = ", ".join(registry.reference_names()) or "none"
                self.add(
                    ("reference", "registered"),
                    f"unknown reference {spec['registered']!r}",
                    f"registered: {known}",
                )
                ok = False
        if "expression" in spec:
            text = spec["expression"]
            expression = self._expr(("reference", "expression"), text, names)
        else:
            text, expression = data.get("function"), function
        closed: dict[Partial, ex.Node] = {}
        derivatives = spec.get("derivatives", {})
        if isinstance(derivatives, dict) and self.intact("reference", "derivatives"):
            for label, ftext in derivatives.items():
                path = ("reference", "derivatives", label)
                if not self.ok(*path):
                    continue
                p = self._partial(path, label, names)
                e = self._expr(path, ftext, names)
                if p is None or e is None:
                    ok = False
                    continue
                closed[p] = e
        if not ok or expression is None:
            return None
        # mpmath sees the mathematics: calls of case functions become their bodies.
        expression = ex.inline(expression, self.bodies)
        closed = {p: ex.inline(e, self.bodies) for p, e in closed.items()}
        return ReferenceSpec(
            expression, text, closed, spec.get("registered"), spec.get("precision")
        )

    def _expectations(
        self, data: dict[str, Any], names: frozenset[str] | None
    ) -> list[Expectation] | None:
        items = data.get("expectations", [])
        if not isinstance(items, list) or not self.intact("expectations"):
            return None
        out = []
        declared = data.get("implementations")
        impl_names = set(declared) if isinstance(declared, dict) else None
        for i, spec in enumerate(items):
            path = ("expectations", i)
            if not isinstance(spec, dict) or not self.intact(*path):
                continue
            # A structurally broken expectation is not built, but its sound fields are
            # still checked, so that every problem shows at once.
            impls = _tuple(spec.get("implementation"))
            if impl_names is not None and impls and self.ok(*path, "implementation"):
                for name in impls:
                    if name not in impl_names:
                        close = difflib.get_close_matches(name, sorted(impl_names), n=1)
                        hint = f"did you mean {close[0]!r}? " if close else ""
                        self.add(
                            (*path, "implementation"),
                            f"unknown implementation {name!r}",
                            f"{hint}this case has: {', '.join(sorted(impl_names))}",
                        )
            partial = None
            if "partial" in spec and names is not None and self.ok(*path, "partial"):
                partial = self._partial((*path, "partial"), spec["partial"], names)
            where: dict[str, tuple[float, float]] = {}
            ranges = spec.get("where", {}) if self.ok(*path, "where") else {}
            for name, (lo, hi) in ranges.items():
                if names is not None and name not in names:
                    self.add(
                        (*path, "where", name),
                        f"unknown input {name!r}",
                        f"inputs: {', '.join(sorted(names))}",
                    )
                elif lo > hi:
                    self.add((*path, "where", name), f"empty range [{lo!r}, {hi!r}]")
                where[name] = (float(lo), float(hi))
            if not self.ok(*path):
                continue
            out.append(
                Expectation(
                    outcome=spec["outcome"],
                    reason=spec["reason"],
                    implementations=impls,
                    methods=_tuple(spec.get("method")),
                    modes=_tuple(spec.get("mode")),
                    dtypes=_tuple(spec.get("dtype")),
                    orders=_tuple(spec.get("order")),
                    partial=partial,
                    where=where,
                )
            )
        return out

    def _tolerances(self, data: dict[str, Any]) -> list[Tolerance] | None:
        items = data.get("tolerances", [])
        if not isinstance(items, list) or not self.intact("tolerances"):
            return None
        return [
            Tolerance(
                ulps=float(t["ulps"]),
                reason=t["reason"],
                dtypes=_tuple(t.get("dtype")),
                orders=_tuple(t.get("order")),
            )
            for i, t in enumerate(items)
            if self.ok("tolerances", i)
        ]


_INPUT_KINDS = ("log", "linear", "values", "random", "tie")


def _input_names(data: dict[str, Any]) -> frozenset[str] | None:
    """The declared input names, usable even when some input's spec is broken."""
    raw = data.get("inputs")
    if not isinstance(raw, dict) or not raw:
        return None
    return frozenset(raw)


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


def _tuple(value: Any) -> tuple | None:
    if value is None:
        return None
    return tuple(value) if isinstance(value, list) else (value,)


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
