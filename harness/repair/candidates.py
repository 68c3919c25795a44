"""A case implementation's candidate repairs: its expression or one of its rules rewritten.

For an implementation written as an expression, each equivalent form of the expression
(:func:`harness.repair.saturate.saturate`) is a candidate; for one with hand-written
rules (``gradient:``, ``tangent:``), each form of one rule, the others kept. Each
candidate is an implementation of the case file's own shape (:meth:`Candidate.mapping`),
so that a copy of the case with the candidates added (:func:`with_candidates`) runs in
the study like any case, where they are judged. A candidate is not a repair: nothing here
judges it. A registered implementation (Python code) and a nested rule are not rewritten;
:func:`candidates` says so in its ``skipped``.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.cases import expressions as ex
from harness.cases.model import Case, Implementation
from harness.repair.saturate import Saturation, saturate

__all__ = ["Candidate", "Candidates", "candidates", "with_candidates"]


@dataclass(frozen=True)
class Candidate:
    """``part`` (``expression``, ``gradient:b``, ``tangent:x``) of the implementation
    replaced by ``form``."""

    implementation: str
    number: int
    part: str
    form: str
    mapping: dict

    @property
    def name(self) -> str:
        return f"{self.implementation}_candidate_{self.number}"


@dataclass(frozen=True)
class Candidates:
    """The candidates, each searched part's :class:`Saturation` and what was not
    searched, with why."""

    found: tuple[Candidate, ...]
    searches: dict[str, Saturation]
    skipped: tuple[str, ...]


def _mapping(impl: Implementation) -> dict:
    """The implementation as a case file writes it."""
    out: dict = {"expression": ex.unparse(impl.expression)}
    for key, rules in (("gradient", impl.gradient), ("tangent", impl.tangent)):
        if rules:
            out[key] = {name: ex.unparse(rule) for name, rule in rules.items()}
    return out


def candidates(case: Case, implementation: str, per_part: int = 6, **limits) -> Candidates:
    """Up to ``per_part`` candidates per rewritten part of ``case``'s ``implementation``
    (``limits``: :func:`saturate`'s), the original form left out."""
    impl = case.implementation(implementation)
    if impl.registered or impl.expression is None:
        return Candidates((), {}, (f"{implementation}: registered code, not an expression",))
    parts: dict[str, ex.Node] = {}
    skipped = []
    for key, rules in (("gradient", impl.gradient), ("tangent", impl.tangent)):
        for name, rule in (rules or {}).items():
            if isinstance(rule, ex.Node):
                parts[f"{key}:{name}"] = rule
            else:
                skipped.append(f"{implementation}: {key} of {name} is a nested rule")
    if not parts:
        parts["expression"] = impl.expression
    base, found, searches = _mapping(impl), [], {}
    for part, node in parts.items():
        search = searches[part] = saturate(node, alternatives=per_part + 1, **limits)
        forms = [f for f in search.forms if f != node][:per_part]
        for form in forms:
            mapping = {k: dict(v) if isinstance(v, dict) else v for k, v in base.items()}
            text = ex.unparse(form)
            if part == "expression":
                mapping["expression"] = text
            else:
                key, name = part.split(":")
                mapping[key][name] = text
            mapping["description"] = (
                f"A candidate repair of {implementation} ({part} rewritten by equality "
                "saturation); not yet judged."
            )
            found.append(Candidate(implementation, len(found) + 1, part, text, mapping))
    return Candidates(tuple(found), searches, tuple(skipped))


def with_candidates(data: dict, found: Candidates) -> dict:
    """A copy of a case file's ``data`` with the candidates added as implementations."""
    out = dict(data)
    out["implementations"] = {
        **data["implementations"],
        **{c.name: c.mapping for c in found.found},
    }
    return out
