"""The case model: what a validated case file is (:class:`Case` and its parts), and the
problems validation reports (:class:`Problem`, :class:`CaseError`). Loading and validation
are :mod:`harness.cases.load`."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Union

from harness.cases import expressions as ex
from harness.cases.schema import METHODS

__all__ = [
    "Case",
    "CaseError",
    "CaseFunction",
    "Expectation",
    "Implementation",
    "InputSpec",
    "Narrowing",
    "NestedRule",
    "Partial",
    "Problem",
    "ReferenceSpec",
    "Rule",
    "Tangent",
    "Tolerance",
    "label_partial",
    "partial_label",
]

Partial = tuple[str, ...]
#: A custom-gradient rule: an expression of the inputs and ``dy``, or a nested custom
#: function ``(expression, gradient)`` whose vector-Jacobian product is ``dy * F``.
Rule = Union[ex.Node, "NestedRule"]
#: A custom forward rule: for each input, its share of the output's tangent, an expression
#: of the inputs and ``dx`` (that input's tangent); the output's tangent is their sum.
Tangent = dict[str, ex.Node]


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
    its parameters and ``dy``, nestable as in implementations), with ``tangent`` a
    ``jax.custom_jvp`` function (rules in its parameters and ``dx``); the reference
    inlines its ``expression`` (a custom rule does not change the mathematics).
    """

    name: str
    params: tuple[str, ...]
    expression: ex.Node
    gradient: dict[str, Rule] | None = None
    description: str = ""
    tangent: Tangent | None = None

    @property
    def ruled(self) -> bool:
        """Whether it has a hand-written derivative rule (reverse or forward)."""
        return bool(self.gradient or self.tangent)


@dataclass(frozen=True)
class Implementation:
    name: str
    expression: ex.Node | None = None
    gradient: dict[str, Rule] | None = None
    registered: str | None = None
    text: str = ""
    description: str = ""
    tangent: Tangent | None = None

    @property
    def kind(self) -> str:
        if self.registered:
            return "registered"
        if self.gradient and self.tangent:
            return "custom_rules"
        if self.tangent:
            return "custom_tangent"
        return "custom_gradient" if self.gradient else "expression"

    @property
    def ruled(self) -> bool:
        """Whether it has a hand-written derivative rule (reverse or forward)."""
        return bool(self.gradient or self.tangent)


@dataclass(frozen=True)
class ReferenceSpec:
    expression: ex.Node | None  # None: a registered reference, no expression
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
    backends: tuple[str, ...] | None = None

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
            backends=tuple(data["backends"]) if "backends" in data else None,
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
    backends: tuple[str, ...] | None = None  # None: every back end


@dataclass(frozen=True)
class Tolerance:
    ulps: float
    reason: str
    dtypes: tuple[str, ...] | None = None
    orders: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Case:
    """A validated case. ``partials`` always starts with ``()`` (order 0, the value)."""

    #: Its kind (:mod:`harness.stages.kinds`): what each stage does with it.
    kind: ClassVar[str] = "expression"
    #: Its points are sampled from its inputs, and its evaluation can be split by dtype
    #: and method (an experiment runs its own parameters, whole, in each back end).
    sampled: ClassVar[bool] = True

    id: str
    path: str
    title: str
    source: str
    notes: str
    inputs: tuple[InputSpec, ...]
    function: ex.Node | None  # None: no function beside a registered reference
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
    backends: tuple[str, ...] | None = None  # None: every back end the study runs

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

    def runs_in(self, backends: tuple[str, ...]) -> tuple[str, ...]:
        """Which of the study's back ends it runs in: all (they build its expressions)."""
        return backends

    def parameters_of(self, setting: str) -> dict[str, Any]:
        """What its provenance records beside the selection: nothing (its inputs are)."""
        return {}

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


def label_partial(label: str, input_names: Sequence[str]) -> Partial:
    """The inverse of :func:`partial_label`: ``"ab"`` or ``"a,b"`` -> ``('a', 'b')``."""
    if not label:
        return ()
    if all(len(n) == 1 for n in input_names):
        return tuple(label)
    return tuple(label.split(","))
