"""Case checks beyond the schema, part 1: the function, the case's own functions, the
inputs and the partials (a mixin of :class:`harness.cases.load.Checker`)."""

from __future__ import annotations

import math
from typing import Any

from harness.cases import expressions as ex
from harness.cases import lets as local_names
from harness.cases import magnitude
from harness.cases.common import INPUT_KINDS, LISTED_KINDS, RESERVED, declared_inputs
from harness.cases.model import Case, CaseFunction, InputSpec, Narrowing, Partial
from harness.cases.schema import MAX_ORDER

__all__ = ["SemanticChecks"]


#: The keys whose expressions the mpmath reference evaluates (a function body may be
#: called from the case's function): their constants must stay within its range. An
#: implementation's expression runs in the frameworks only, where a huge constant is
#: simply inf.
_REFERENCE_KEYS = ("function", "reference", "functions", "let")
#: The keys whose expressions are of the case's inputs, where its ``let:`` names are known
#: (a ``functions:`` body is of its own arguments).
_LET_SCOPE = ("function", "reference", "implementations")


class SemanticChecks:
    """Checks of the function, ``functions:``, ``inputs:`` and ``partials:``."""

    def _semantics(self, data: dict[str, Any]) -> Case | None:
        names = declared_inputs(data)
        functions = self._functions(data, names)
        self.lets = self._lets(data, names)
        inputs = self._inputs(data, names)
        function = self._expr(("function",), data.get("function"), names)
        partials = self._partials(data, names)
        implementations = self._implementations(data, names)
        reference = self._reference(data, names, function)
        expectations = self._expectations(data, names)
        tolerances = self._tolerances(data)
        # No function beside a registered reference (the schema allows it only there).
        said = function is not None or "function" not in data
        if (
            self.problems
            or not said
            or None
            in (
                self.lets,
                inputs,
                partials,
                implementations,
                reference,
                functions,
            )
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
            function_text=data.get("function", ""),
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
            backends=tuple(data["backends"]) if "backends" in data else None,
        )

    def _expr(self, path: tuple, text: Any, names: frozenset[str] | None) -> ex.Node | None:
        if names is None or not self.ok(*path) or text is None:
            return None
        lets = getattr(self, "lets", None) or {}
        if path[0] in _LET_SCOPE:
            # Every local name is known, a broken one too: its problem is said once, at it.
            names = names | set(getattr(self, "let_names", ()))
        try:
            node = ex.parse(text, names, self.arity)
            if path[0] in _LET_SCOPE or path[0] == "let":
                node = local_names.bind(node, lets if path[0] != "let" else self._bound)
                nodes, depth = local_names.size(node)
                if nodes > local_names.MAX_NODES or depth > local_names.MAX_DEPTH:
                    self.add(
                        path,
                        f"with its let: names written out, {text!r} has {nodes} operations "
                        f"nested {depth} deep, more than the {local_names.MAX_NODES} and "
                        f"{local_names.MAX_DEPTH} an expression may have",
                    )
                    return None
            if path[0] in _REFERENCE_KEYS:
                magnitude.check(node)
            return node
        except ex.ExpressionError as exc:
            self.add(path, f"{exc} in {text!r}")
            return None

    def _lets(self, data: dict[str, Any], names: frozenset[str] | None) -> dict | None:
        """The ``let:`` names, in file order, each bound to its node (the same object
        wherever it is used, :mod:`harness.cases.lets`)."""
        specs = data.get("let", {})
        if names is None or not isinstance(specs, dict) or not self.intact("let"):
            return None
        self.let_names = tuple(specs)
        out: dict[str, ex.Node] = {}
        self._bound = out  # the names above the one being read, bound as they come
        ok = True
        for i, (name, text) in enumerate(specs.items()):
            path = ("let", name)
            if name in RESERVED or name in names or name in self.arity:
                what = "an input" if name in names else "a function or built-in"
                self.add(path, f"local name {name!r} is already taken ({what})")
                ok = False
                continue
            # The names above it (a broken one too: its problem is said at it).
            node = self._expr(path, text, names | set(self.let_names[:i]))
            if node is None:
                ok = False
                continue
            out[name] = node
        return out if ok else None

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
            if name in RESERVED or (names is not None and name in names):
                self.add(path, f"function name {name!r} is already taken (an input or built-in)")
                ok = False
                continue
            bad = [p for p in params if p in RESERVED]
            if bad:
                self.add((*path, "args"), f"{bad[0]!r} is reserved and cannot be an argument")
                ok = False
                continue
            local = frozenset(params)
            # Its body and rules may call only the functions above it (no recursion).
            body = self._expr((*path, "expression"), spec["expression"], local)
            gradient = tangent = None
            if "gradient" in spec:
                gradient = self._gradient((*path, "gradient"), spec["gradient"], local)
            if "tangent" in spec:
                tangent = self._tangent((*path, "tangent"), spec["tangent"], local)
            # Known from here on even if broken: a broken body is reported once, not again
            # as an unknown function wherever it is called.
            self.arity[name] = len(params)
            broken = ("gradient" in spec and gradient is None) or (
                "tangent" in spec and tangent is None
            )
            if body is None or broken:
                ok = False
                continue
            self.bodies[name] = (params, body)
            out.append(
                CaseFunction(name, params, body, gradient, spec.get("description", ""), tangent)
            )
        return out if ok else None

    def _inputs(self, data: dict[str, Any], names: frozenset[str] | None) -> list[InputSpec] | None:
        if names is None:
            return None
        out: list[InputSpec] = []
        raw = data["inputs"]
        complete = True
        for name, spec in raw.items():
            path = ("inputs", name)
            if name in RESERVED:
                self.add(path, f"{name!r} is reserved and cannot name an input")
                complete = False
                continue
            kinds = [k for k in spec if k in INPUT_KINDS] if isinstance(spec, dict) else []
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
            elif kind in LISTED_KINDS:
                if any(not math.isfinite(v) for v in params[kind]):
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
