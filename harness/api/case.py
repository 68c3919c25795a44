"""The case ``harness.check`` runs: the user's function, traced, written as the study's
own case data (:mod:`harness.cases.schema`), so that everything the study does with a
case file (validation, the reference, the sweep, the judging, the page) it does here.

The traced expression is the case's ``function`` (the reference is computed from the
user's code, by Arb); the user's function itself is its one implementation, registered
for this process only (:func:`harness.registered.register.user_function`): a case file
on disk can never name it. :func:`study_case` writes the same case with the traced
expression as its implementation instead, which any process can run."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from harness.api import sweep
from harness.cases import expressions as ex
from harness.cases import lets as local_names

__all__ = [
    "DEFAULT_DTYPES",
    "DEFAULT_MODES",
    "case_data",
    "case_id",
    "study_case",
    "with_reference",
]

#: What a user of a framework checks by default: the two working dtypes (the half
#: precisions on request), every method the framework has, and its modes except
#: ``torch.compile``, which compiles each derivative for seconds (on request).
DEFAULT_DTYPES = ("float32", "float64")
DEFAULT_MODES = {
    "jax": ("eager", "jit"),
    "torch": ("eager",),
    "tensorflow": ("eager", "function", "xla"),
}


def case_id(fn: Callable) -> str:
    """A case id for ``fn`` (the study's pattern, ``[A-Za-z][A-Za-z0-9_-]*``)."""
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", getattr(fn, "__name__", "") or "function")
    return name if name[:1].isalpha() else f"f{name}"


def registered_name(fn: Callable, framework: str) -> str:
    """The name the user's function is registered under in this process."""
    module = getattr(fn, "__module__", "") or "__main__"
    qual = getattr(fn, "__qualname__", "") or case_id(fn)
    return f"check:{framework}:{module}.{qual}"


def _partials(names: Sequence[str], orders: Iterable[int]) -> list[list[str]]:
    """Every partial of each order (a mixed one once: its inputs in declaration order)."""
    out = []
    for k in sorted(set(int(o) for o in orders)):
        out += [list(p) for p in itertools.combinations_with_replacement(names, k)]
    return out


def _derivatives(names: Sequence[str], orders: Sequence[int]) -> dict:
    orders = sorted(set(int(o) for o in orders))
    if len(names) == 1:
        return {"wrt": names[0], "orders": orders}
    return {"partials": _partials(names, orders)}


def _with_implementation(items: Iterable[Mapping], implementation: str, what: str) -> list[dict]:
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise TypeError(f"{what}[{i}]: a mapping as in a case file, not {type(item).__name__}")
        entry = dict(item)
        if what == "expect":
            entry.setdefault("implementation", implementation)
        out.append(entry)
    return out


def case_data(
    fn: Callable,
    framework: str,
    node: ex.Node,
    names: Sequence[str],
    inputs: Mapping[str, object] | None,
    orders: Sequence[int],
    partials: Sequence | None,
    dtypes: Sequence[str] | None,
    methods: Sequence[str] | None,
    modes: Sequence[str] | None,
    expect: Iterable[Mapping] = (),
    tolerances: Iterable[Mapping] = (),
    title: str | None = None,
) -> dict:
    """The case's data, as a case file holds it (validated when loaded): the traced
    ``node`` its function, what the trace computes once a ``let:`` name."""
    from harness.backends.catalogue import SPECS

    lets, expression = local_names.unparse(node, set(names)) if node is not None else ({}, "")

    spec = SPECS[framework]
    inputs = dict(inputs or {})
    unknown = sorted(set(inputs) - set(names))
    if unknown:
        raise TypeError(
            f"inputs {unknown}: the function's inputs are {list(names)} (its parameters)"
        )
    name = case_id(fn)
    where = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', name)}"
    data: dict = {
        "title": title or f"{name}, as written in {spec.title}",
        "source": f"harness.check of the Python function {where}",
        "notes": f"The reference is the function as {spec.title} traces it: "
        f"{ex.unparse(node) if node is not None else ''}",
        "inputs": {n: sweep.spec(inputs.get(n, sweep.DEFAULT)) for n in names},
        **({"let": lets} if lets else {}),
        **({"function": expression} if node is not None else {}),
        "derivatives": (
            {"partials": [p if isinstance(p, str) else list(p) for p in partials]}
            if partials
            else _derivatives(names, orders)
        ),
        "implementations": {
            name: {
                "registered": registered_name(fn, framework),
                "description": f"{where}, the user's own {spec.title} code.",
            }
        },
        "backends": [framework],
        "dtypes": list(dtypes or DEFAULT_DTYPES),
        "methods": list(methods or spec.methods),
        "modes": list(modes or DEFAULT_MODES.get(framework, spec.modes)),
    }
    if expect:
        data["expectations"] = _with_implementation(expect, name, "expect")
    if tolerances:
        data["tolerances"] = _with_implementation(tolerances, name, "tolerances")
    return data


def with_reference(data: Mapping, reference: Callable) -> dict:
    """``data`` with the user's mpmath function as its registered reference (registered
    by :func:`harness.registered.register.user_reference` under the name it gives)."""
    ((name, impl),) = data["implementations"].items()
    where = f"{getattr(reference, '__module__', '?')}.{getattr(reference, '__qualname__', '?')}"
    traced = f" (the function's trace, verified: {data['function']})" if "function" in data else ""
    return {
        **data,
        "notes": f"The reference is the mpmath function {where} given as reference=, its "
        "derivatives by mpmath.diff at the working precision, verified at two precisions, "
        f"not certified by Arb{traced}.",
        "reference": {"registered": f"{impl['registered']}:reference"},
    }


def study_case(data: Mapping, rules: Mapping | None = None) -> dict:
    """The same case for the study (``cases/``): the traced expression, with the traced
    custom ``rules`` (:meth:`harness.api.trace.Traced.rule_texts`) if the function has
    one, differentiated by the framework, as a case file can say it (a case names no
    Python code)."""
    if "reference" in data:
        raise ValueError(
            "the reference is a Python function (reference=), and a case file names no "
            "Python code: write it as a case's function or register it in the harness "
            "package (harness.registered.register.reference)"
        )
    out = dict(data)
    ((name, impl),) = data["implementations"].items()
    rules = {k: dict(v) for k, v in (rules or {}).items() if v}
    said = (
        f"its custom rule traced as {' and '.join(sorted(rules))}"
        if rules
        else "no custom rule in the original"
    )
    out["implementations"] = {
        name: {
            "expression": data["function"],
            **rules,
            "description": f"The trace of {impl['description'][:-1]}: its operators as the "
            f"harness builds them ({said}).",
        }
    }
    return out
