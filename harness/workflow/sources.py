"""Which package files each stage of the workflow runs (the rules list them as inputs,
so a change to a stage's code reruns that stage's jobs and no other), derived from the
imports of each stage's entry modules and from the back-end and experiment registries:
the lists :mod:`harness.workflow` gives the Snakefile. A test checks that a stage imports
nothing from the package outside its list."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

__all__ = [
    "STAGE_ENTRIES",
    "backend_sources",
    "closure",
    "imports",
    "kind_sources",
    "package_files",
    "page_sources",
    "repro_sources",
    "stage_sources",
    "stage_sources_of",
]

_PACKAGE = Path(__file__).resolve().parent.parent  # the harness package

#: What runs before any command: the command line, and what it imports at its top.
_ENTRY = "__main__.py"

#: The modules each stage's command runs (the command line imports them lazily, per
#: command). A stage depends on these and on every package file they import, at their
#: top or inside a function (:func:`closure`); a back end's files and an experiment's
#: page come from their registries (:func:`backend_sources`, :func:`page_sources`).
STAGE_ENTRIES: dict[str, tuple[str, ...]] = {
    "reference": ("stages/reference.py",),
    "evaluate": ("stages/evaluate.py", "backends/catalogue.py"),
    "compare": ("stages/compare.py",),
    "collect": ("stages/collect.py", "causes/study.py", "results.py"),
    "reproduce": (
        "causes/reproduce.py",
        "causes/study.py",
        "backends/catalogue.py",
        "config.py",
        "results.py",
    ),
    "report": ("stages/report.py",),
    "census": ("stages/census.py",),
    "repairs_page": ("report/repairs_page.py",),
    # The repair runs the study's stages on its copy of a case, and the check's run on
    # the code it writes (each imported lazily, inside its functions).
    "repair": (
        "repair/prove.py",
        "repair/code.py",
        "stages/run.py",
        "stages/prepared.py",
        "stages/folders.py",
        "api/run.py",
        "backends/catalogue.py",
    ),
}

#: The data files a module reads, beside it in the package.
_DATA = {"config.py": ("study_defaults.yaml",)}


def _module_file(name: str) -> str | None:
    """``harness.a.b`` as a path inside the package (``a/b.py`` or ``a/b/__init__.py``)."""
    parts = name.split(".")[1:]
    for candidate in ("/".join(parts) + ".py", "/".join([*parts, "__init__.py"])):
        if candidate and (_PACKAGE / candidate).is_file():
            return candidate
    return None


@functools.cache
def imports(path: str, lazy: bool = True) -> frozenset[str]:
    """The package files that the file ``path`` (inside the package) imports, at its top
    and (``lazy``) inside a function, each with its packages' ``__init__`` (read once per
    process: the Snakefile asks for every job's files while it builds the DAG)."""
    import ast

    tree = ast.parse((_PACKAGE / path).read_text(encoding="utf-8"))
    names: set[str] = set()
    if lazy:
        nodes = list(ast.walk(tree))
    else:  # what importing the module runs: not the bodies of its functions
        bodies = (ast.FunctionDef, ast.AsyncFunctionDef)
        nodes = [n for top in tree.body if not isinstance(top, bodies) for n in ast.walk(top)]
    for node in nodes:
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
    return frozenset(out)


def closure(start: str, within: str = "", lazy: bool = True) -> list[str]:
    """``start`` and every package file it reaches by imports inside the folder
    ``within`` (``backends/``; all: ""), lazy ones too unless ``lazy`` is false, in the
    order found."""
    seen = dict.fromkeys([start])
    todo = [start]
    while todo:
        for found in sorted(imports(todo.pop(), lazy)):
            if found.startswith(within) and found not in seen:
                seen[found] = None
                todo.append(found)
    return list(seen)


def _module_sources(module: str, what: str, within: str = "") -> list[str]:
    """The file of ``module`` (a dotted name from a registry), its packages' ``__init__``
    and what it imports (inside ``within``)."""
    own = _module_file(module)
    if own is None:
        raise ValueError(f"{what}: no file for {module}")
    parts = module.split(".")
    packages = [_module_file(".".join(parts[:k])) for k in range(2, len(parts))]
    return list(dict.fromkeys([*closure(own, within), *(p for p in packages if p)]))


def backend_sources(backend: str, stage: str = "evaluate") -> tuple[str, ...]:
    """A back end's own files, derived from its registration's imports: for ``evaluate``
    what its back end module reaches, for ``reproduce`` what its snippet writer reaches, for ``repair``
    its back end, code emitter and tracer,
    inside ``backends/`` (a new back end's folder needs no list here)."""
    from harness.backends.catalogue import get

    spec = get(backend)
    if stage == "repair":  # it evaluates, traces its code and writes it
        modules = (spec.module, spec.emitter, spec.tracer or spec.module)
    else:
        modules = (spec.module if stage != "reproduce" else spec.snippet,)
    files: dict[str, None] = {}
    for module in modules:
        files.update(dict.fromkeys(_module_sources(module, f"back end {backend!r}", "backends/")))
    return tuple(files)


def repro_sources() -> tuple[str, ...]:
    """Every back end's finding-script writer (``BackendSpec.repro``) and what it imports:
    what :mod:`harness.judge.reproduce` reaches through the registry."""
    from harness.backends.catalogue import SPECS

    files: dict[str, None] = {}
    for spec in SPECS.values():
        if spec.repro:
            files.update(dict.fromkeys(_module_sources(spec.repro, f"back end {spec.name!r}")))
    return tuple(files)


def page_sources() -> tuple[str, ...]:
    """Every experiment's page module (``Experiment.page``) and what it imports: what
    :mod:`harness.experiments.page` reaches through the registry."""
    from harness.experiments.catalogue import EXPERIMENTS

    files: dict[str, None] = {}
    for exp in EXPERIMENTS.values():
        files.update(dict.fromkeys(_module_sources(exp.page, f"experiment {exp.name!r}")))
    return tuple(files)


#: The step of a kind of case each stage runs (:mod:`harness.stages.kinds`).
_STEP_OF_STAGE = {
    "reference": "reference",
    "evaluate": "evaluate",
    "compare": "judge",
    "report": "page",
}


def kind_sources(stage: str) -> tuple[str, ...]:
    """Every kind of case's module for the step ``stage`` runs, and what it imports: what
    :mod:`harness.stages.kinds` reaches through its registry in that stage."""
    from harness.stages.kinds import KINDS

    step = _STEP_OF_STAGE.get(stage)
    files: dict[str, None] = {}
    for kind in KINDS.values() if step else ():
        module = getattr(kind, step).partition(":")[0]
        files.update(dict.fromkeys(_module_sources(module, f"case kind {kind.name!r}")))
    return tuple(files)


#: Modules that import others by a registry's dotted names, and those modules' files
#: (with what they import) for a stage.
_THROUGH_REGISTRIES: dict[str, Callable[[str], tuple[str, ...]]] = {
    "stages/kinds.py": kind_sources,
    "judge/reproduce.py": lambda stage: repro_sources(),
    "experiments/page.py": lambda stage: page_sources(),
}


@functools.cache
def package_files(stage: str, backend: str | None = None) -> tuple[str, ...]:
    """The package files ``stage`` runs (paths inside the package: ``cases/load.py``),
    derived from the imports: the command line's, the stage's entries' with all they
    import, an ``evaluate`` or ``reproduce`` job's ``backend``'s own files, the report's
    experiment pages, and the data files those modules read."""
    files = dict.fromkeys(closure(_ENTRY, lazy=False))
    for entry in STAGE_ENTRIES[stage]:
        module = "harness." + entry.removesuffix(".py").replace("/", ".")
        files.update(dict.fromkeys(_module_sources(module, f"stage {stage!r}")))
    followed: set[str] = set()
    while todo := [i for i in _THROUGH_REGISTRIES if i in files and i not in followed]:
        for importer in todo:  # until no newly reached file reaches a registry again
            followed.add(importer)
            files.update(dict.fromkeys(_THROUGH_REGISTRIES[importer](stage)))
    if backend:
        files.update(dict.fromkeys(backend_sources(backend, stage)))
    for module, data in _DATA.items():
        if module in files:
            files.update(dict.fromkeys(data))
    return tuple(files)


def stage_sources(stage: str, root: str | Path = ".", backend: str | None = None) -> list[str]:
    """Paths (relative to ``root``) of the package files ``stage`` depends on
    (:func:`package_files`): the rules' inputs, so editing a file reruns the jobs of the
    stages that run it and no other (the report's HTML never reruns a reference)."""
    return list(_stage_paths(stage, str(root), backend))


def stage_sources_of(stage: str, backend: str | None = None):
    """:func:`stage_sources` as a rule's input function: the paths are listed when the
    job enters the graph, not when the rule is declared. The census declares over 900
    rules, each with about 100 package files; declared as lists, every job of the
    cluster profile, which reads the whole workflow again, built 90,000 paths."""

    def files(wildcards) -> list[str]:
        return stage_sources(stage, backend=backend)

    return files


@functools.cache
def _stage_paths(stage: str, root: str, backend: str | None) -> tuple[str, ...]:
    # Once per stage, root and back end: each of the census's 900 rules asks (1.1 s).
    base = Path(root) / "harness"
    return tuple(str(base / n) for n in package_files(stage, backend))
