"""Which package files each stage of the workflow runs (the rules list them as inputs,
so a change to a stage's code reruns that stage's jobs and no other): the lists
:mod:`harness.workflow` gives the Snakefile. A test checks that a stage imports nothing
from the package outside its list."""

from __future__ import annotations

from pathlib import Path

__all__ = ["STAGE_SOURCES", "backend_sources", "closure", "imports", "stage_sources"]

_PACKAGE = Path(__file__).resolve().parent

# What every stage reads: case files, settings, points, result files.
_COMMON = (
    "__init__.py",
    "cli.py",
    "cli_probe.py",
    "cli_causes.py",
    "cli_output.py",
    "stages/__init__.py",
    "stages/run.py",
    "stages/reference.py",
    "stages/evaluate.py",
    "stages/compare.py",
    "stages/prepared.py",
    "stages/pieces.py",
    "stages/inputs.py",
    "cases/__init__.py",
    "cases/load.py",
    "cases/model.py",
    "cases/common.py",
    "cases/semantics.py",
    "cases/declarations.py",
    "cases/experiment_kinds.py",
    "cases/published_schema.py",
    "cases/schema.py",
    "cases/expressions.py",
    "cases/magnitude.py",
    "cases/yaml_lines.py",
    "operators/__init__.py",
    "operators/model.py",
    "operators/table.py",
    "operators/arb.py",
    "operators/mp_elementary.py",
    "operators/mp_special.py",
    "operators/mp_jets.py",
    "registered/__init__.py",
    "registered/catalogue.py",
    "registered/register.py",
    "registered/seeds.py",
    "backends/__init__.py",
    "backends/catalogue.py",
    "experiments/__init__.py",
    "experiments/base.py",
    "experiments/catalogue.py",
    "experiments/stages.py",
    "experiments/page.py",
    "experiments/hessian_norm.py",
    "experiments/hessian_norm_page.py",
    "experiments/matrix_partials.py",
    "experiments/matrix_data.py",
    "experiments/matrix_ports.py",
    "config.py",
    "cases/points.py",
    "numerics/__init__.py",
    "numerics/floats.py",
    "report/__init__.py",
    "report/html.py",
    "results.py",
    "provenance.py",
    "study_defaults.yaml",
)

# The reference at new points: what the evaluation's bisection and localisation and the
# compare stage's checks of hand-written rules compute.
_REFERENCE = (
    "reference/__init__.py",
    "reference/verify.py",
    "reference/table.py",
    "reference/rounded.py",
    "reference/cache.py",
    "reference/certify.py",
    "reference/balls.py",
    "reference/series.py",
    "reference/jets.py",
)

# Judging rows and stating findings.
_JUDGING = (
    "judge/__init__.py",
    "judge/compare.py",
    "judge/expectations.py",
    "judge/summary.py",
    "judge/collect.py",
    "judge/diff.py",
    "judge/findings.py",
    "judge/reproduce.py",
    "judge/findings_text.py",
    "backends/tensorflow/__init__.py",
    "backends/tensorflow/repro.py",
    "backends/tensorflow/source.py",
    "backends/snippet.py",
    "judge/runs.py",
    "numerics/fd_model.py",
    "numerics/stencils.py",
    "numerics/flush.py",
    "causes/__init__.py",
    "causes/evidence.py",
    "causes/sites.py",
    "causes/classify.py",
    "causes/roots.py",
    "causes/statement.py",
    "causes/study.py",
    "causes/rules.py",
    "cases/synthetic.py",
    # The hand-written rules are checked exactly (Arb balls) where a finding needs it.
    *_REFERENCE,
)

#: Package files each stage runs, beyond :data:`_COMMON` (a test checks that a stage
#: imports nothing from the package outside its list).
STAGE_SOURCES: dict[str, tuple[str, ...]] = {
    "reference": (
        "reference/__init__.py",
        "reference/verify.py",
        "reference/table.py",
        "reference/rounded.py",
        "reference/cache.py",
        "reference/certify.py",
        "reference/balls.py",
        "reference/series.py",
        "reference/jets.py",
        "numerics/fd_model.py",
        "numerics/stencils.py",
        "numerics/flush.py",
    ),
    # Evaluation judges as it goes, to find the exact edges of each outcome (bisection).
    "evaluate": (
        "backends/interface.py",
        "registered/seeds.py",
        "numerics/stencils.py",
        "edges/__init__.py",
        "edges/bisection.py",
        "edges/brackets.py",
        "edges/finder.py",
        "judge/runs.py",
        "judge/__init__.py",
        "judge/compare.py",
        "judge/expectations.py",
        "judge/summary.py",
        "backends/catalogue.py",
        *_REFERENCE,
        "numerics/fd_model.py",
        "numerics/flush.py",
        "cases/synthetic.py",
        "causes/__init__.py",
        "causes/sites.py",
        "causes/localise.py",
    ),
    "compare": _JUDGING,
    "collect": _JUDGING,
    # Each root cause's standalone scripts, run in the framework (its own files below).
    "reproduce": (
        "cli_causes.py",
        "cases/synthetic.py",
        "causes/__init__.py",
        "causes/reproduce.py",
        "causes/roots.py",
        "causes/classify.py",
        "causes/statement.py",
        "causes/sites.py",
        "judge/__init__.py",
        "judge/findings_text.py",
        "judge/runs.py",
        "backends/snippet.py",
        "numerics/floats.py",
    ),
    "report": (
        "stages/report.py",
        "report/case_page.py",
        "report/figures.py",
        "report/sections.py",
        "report/findings_list.py",
        "report/index.py",
        "report/frameworks_page.py",
        "report/root_causes_list.py",
        "judge/agreement.py",
        "backends/catalogue.py",
        *_JUDGING,
    ),
}


def _module_file(name: str) -> str | None:
    """``harness.a.b`` as a path inside the package (``a/b.py`` or ``a/b/__init__.py``)."""
    parts = name.split(".")[1:]
    for candidate in ("/".join(parts) + ".py", "/".join([*parts, "__init__.py"])):
        if candidate and (_PACKAGE / candidate).is_file():
            return candidate
    return None


def imports(path: str) -> set[str]:
    """The package files that the file ``path`` (inside the package) imports, at its top
    or inside a function (a lazy import runs too), each with its packages' ``__init__``."""
    import ast

    tree = ast.parse((_PACKAGE / path).read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    out: set[str] = set()
    for name in names:
        if name != "harness" and not name.startswith("harness."):
            continue
        parts = name.split(".")
        for k in range(1, len(parts) + 1):
            found = _module_file(".".join(parts[:k]))
            if found:
                out.add(found)
    return out


def closure(start: str, within: str) -> list[str]:
    """``start`` and every package file it reaches by imports inside the folder
    ``within`` (``backends/``), in the order found."""
    seen = dict.fromkeys([start])
    todo = [start]
    while todo:
        for found in sorted(imports(todo.pop())):
            if found.startswith(within) and found not in seen:
                seen[found] = None
                todo.append(found)
    return list(seen)


def backend_sources(backend: str, stage: str = "evaluate") -> tuple[str, ...]:
    """A back end's own files, derived from its registration's imports: for ``evaluate``
    what its back end module reaches, for ``reproduce`` what its snippet writer reaches,
    inside ``backends/`` (a new back end's folder needs no list here)."""
    from harness.backends.catalogue import get

    spec = get(backend)
    module = spec.module if stage != "reproduce" else spec.snippet
    own = _module_file(module)
    if own is None:
        raise ValueError(f"back end {backend!r}: no file for {module}")
    parts = module.split(".")
    packages = [_module_file(".".join(parts[:k])) for k in range(2, len(parts))]
    found = closure(own, "backends/")
    return tuple(dict.fromkeys([*found, *(p for p in packages if p)]))


def stage_sources(stage: str, root: str | Path = ".", backend: str | None = None) -> list[str]:
    """Paths (relative to ``root``) of the package files ``stage`` depends on (a list entry
    is a path inside the package: ``cases/load.py``); an ``evaluate`` or ``reproduce`` job
    also runs its ``backend``'s files."""
    own = backend_sources(backend, stage) if backend else ()
    names = dict.fromkeys((*_COMMON, *STAGE_SOURCES[stage], *own))
    base = Path(root) / "harness"
    return [str(base / n) for n in names if (_PACKAGE / n).exists()]
