"""Case checks beyond the schema, part 2: custom rules (gradients and tangents), implementations, the
reference, expectations and tolerances (a mixin of :class:`harness.cases.load.Checker`)."""

from __future__ import annotations

import difflib
from typing import Any

from harness.cases import expressions as ex
from harness.cases.common import as_tuple
from harness.cases.model import (
    Expectation,
    Implementation,
    NestedRule,
    Partial,
    ReferenceSpec,
    Rule,
    Tolerance,
)
from harness.registered import catalogue as registry

__all__ = ["DeclarationChecks"]


class DeclarationChecks:
    """Checks of ``implementations:``, ``reference:``, ``expectations:``, ``tolerances:``."""

    def _rule(self, path: tuple, value: Any, names: frozenset[str]) -> Rule | None:
        if isinstance(value, str):
            return self._expr(path, value, names | {"dy"})
        expression = self._expr((*path, "expression"), value["expression"], names)
        gradient = self._gradient((*path, "gradient"), value["gradient"], names)
        if expression is None or gradient is None:
            return None
        return NestedRule(expression, gradient, value.get("pattern", "nested_function"))

    def _per_input(self, path: tuple, value: dict, names: frozenset[str], what: str, parse):
        """``{input: parse(path, rule)}`` for a rule per input; ``None`` if any is broken
        or names an undeclared input."""
        out: dict = {}
        ok = True
        for name, rule in value.items():
            if name not in names:
                self.add(
                    (*path, name),
                    f"{what} for undeclared input {name!r}",
                    f"inputs: {', '.join(sorted(names))}",
                )
                ok = False
                continue
            r = parse((*path, name), rule)
            ok = ok and r is not None
            out[name] = r
        return out if ok else None

    def _gradient(self, path: tuple, value: dict, names: frozenset[str]) -> dict[str, Rule] | None:
        return self._per_input(path, value, names, "gradient", lambda p, r: self._rule(p, r, names))

    def _tangent(self, path: tuple, value: dict, names: frozenset[str]) -> dict | None:
        """A forward rule: each input's share of the tangent, in the inputs and ``dx``."""
        return self._per_input(
            path, value, names, "tangent rule", lambda p, r: self._expr(p, r, names | {"dx"})
        )

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
                for key in ("gradient", "tangent"):
                    if key in spec:
                        self.add(
                            (*path, key),
                            "a registered implementation defines its own derivatives in Python",
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
                        **self._traced((*path, "registered"), entry.trace, names),
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
            tangent = None
            if "tangent" in spec:
                if self.ok(*path, "tangent"):
                    tangent = self._tangent((*path, "tangent"), spec["tangent"], names)
                if tangent is None:
                    ok = False
            if expr is None:
                ok = False
                continue
            out.append(
                Implementation(
                    name,
                    expression=expr,
                    gradient=grad,
                    tangent=tangent,
                    text=spec["expression"],
                    description=spec.get("description", ""),
                )
            )
        return out if ok else None

    def _traced(self, path: tuple, trace, names: frozenset[str]) -> dict:
        """A user's registered function's trace (``harness.check``'s): its expression and
        custom rules, as an expression implementation has them, for the causes to judge
        its rule by (the back ends run the function itself)."""
        if not trace:
            return {}
        out = {"expression": self._expr(path, trace["expression"], names)}
        if trace.get("gradient"):
            out["gradient"] = self._gradient(path, trace["gradient"], names)
        if trace.get("tangent"):
            out["tangent"] = self._tangent(path, trace["tangent"], names)
        return out

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
        if not ok or (expression is None and not spec.get("registered")):
            return None
        if expression is None:  # a registered reference, and no function to say
            return ReferenceSpec(None, "", {}, spec["registered"], spec.get("precision"))
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
            impls = as_tuple(spec.get("implementation"))
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
                    methods=as_tuple(spec.get("method")),
                    modes=as_tuple(spec.get("mode")),
                    dtypes=as_tuple(spec.get("dtype")),
                    orders=as_tuple(spec.get("order")),
                    partial=partial,
                    where=where,
                    backends=as_tuple(spec.get("backend")),
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
                dtypes=as_tuple(t.get("dtype")),
                orders=as_tuple(t.get("order")),
            )
            for i, t in enumerate(items)
            if self.ok("tolerances", i)
        ]
