"""Helpers the Snakefile calls: which cases exist, which sources and settings each stage
depends on. Kept small and free of TensorFlow: the Snakefile imports this module every
time Snakemake parses the workflow (``snakemake -n`` included).

Rerun rules follow from these lists. A stage's job reruns when its case file, one of its
source files (:func:`stage_sources`, derived from its imports) or its slice of the study settings
(:func:`stage_settings`, passed as the rule's ``params``) changes. So editing the
TensorFlow code reruns evaluations but never the mpmath references, and changing a
tolerance reruns evaluations (they judge their points to bisect the edges of each
outcome) and comparisons, never references.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from harness.workflow.sources import STAGE_ENTRIES, stage_sources, stage_sources_of

__all__ = [
    "STAGE_ENTRIES",
    "backend_files",
    "backend_pattern",
    "case_backends",
    "case_pieces",
    "check_config",
    "discover_cases",
    "evaluate_mem_mb",
    "evaluation_cost",
    "job_priority",
    "piece_settings",
    "stage_settings",
    "stage_sources",
    "stage_sources_of",
    "study_backends",
]

#: Study settings each stage's output depends on.
_STAGE_KEYS = {
    "reference": (
        "precision",
        "verify_digits",
        "max_precision",
        "dtypes",
        "max_points",
        "methods",
        "setting",
        "quick",
    ),
    # The evaluation judges its points to bisect their edges: the reference settings
    # and the tolerances are its settings too.
    "evaluate": (
        "localise",
        "batch",
        "split",
        "backends",
        "precision",
        "verify_digits",
        "max_precision",
        "dtypes",
        "methods",
        "modes",
        "max_points",
        "setting",
        "quick",
        "tolerances",
    ),
    "compare": (
        "split",
        "backends",
        "precision",
        "verify_digits",
        "max_precision",
        "dtypes",
        "methods",
        "modes",
        "max_points",
        "setting",
        "quick",
        "tolerances",
    ),
}


def stage_settings(config: dict[str, Any], stage: str) -> str:
    """The study settings ``stage`` depends on, as compact JSON (a rule's ``params``)."""
    part = {k: config[k] for k in _STAGE_KEYS[stage] if k in config}
    return json.dumps(part, sort_keys=True, separators=(",", ":"))


def piece_settings(config: dict[str, Any], backend: str, piece: str) -> str:
    """The study settings one evaluation job depends on (its rule's ``params``, and what
    the job is given): those of :func:`stage_settings` narrowed to the job's back end and
    its piece's dtype and method (:mod:`harness.stages.pieces`): adding a back end to the study
    adds its jobs and reruns no other back end's. (A new dtype or method still reruns every
    piece of a case: it changes the case's one reference table, an input of each.)"""
    from harness.cases.schema import DTYPES, METHODS
    from harness.stages.pieces import ALL

    part = json.loads(stage_settings(config, "evaluate"))
    part["backends"] = [backend]
    if part.get("setting", "quick") == "full":
        part.pop("quick", None)  # what only the quick setting reads
    if piece != ALL:
        for key, names in (("dtypes", DTYPES), ("methods", METHODS)):
            mine = [x for x in piece.split(".") if x in names]
            if mine:
                part[key] = mine
    return json.dumps(part, sort_keys=True, separators=(",", ":"))


#: Memory (MB) an evaluation piece declares, by method: the largest measured peaks with
#: a margin (docs/cluster.md). TensorFlow's nested forward mode at
#: order 4 is the heavy one: ratio's float64.forward piece peaked at 4.7 GB, of which one
#: fourth-order derivative of -a/b in eager mode takes 3.2 GB in plain TensorFlow; the
#: largest reverse piece, hitting_time_numerical's float64.reverse, 2.2 GB; the largest
#: forward-over-reverse piece, ratio's bfloat16, 2.1 GB.
PIECE_MEM_MB = {"forward": 6000, "forward_over_reverse": 3000, "reverse": 3000}
#: What a piece of any other method, or a whole quick evaluation (piece ``all``), declares.
DEFAULT_MEM_MB = 2000


def evaluate_mem_mb(config: dict[str, Any]):
    """The ``mem_mb`` of an ``evaluate_case`` job: a function of its wildcards (the piece's
    method; an unsplit full evaluation holds every method: the largest, 16 GB)."""

    def mem_mb(wildcards) -> int:
        piece = getattr(wildcards, "piece", "all")
        if piece == "all":
            return 16000 if config.get("setting", "quick") == "full" else DEFAULT_MEM_MB
        parts = piece.split(".")
        if len(parts) == 1:  # one dtype, every method
            return max(PIECE_MEM_MB.values())
        return PIECE_MEM_MB.get(parts[-1], DEFAULT_MEM_MB)

    return mem_mb


_PREPARED: dict[tuple, Any] = {}


def _prepared(case_path: str | Path, config: dict[str, Any]):
    """The case prepared as the study runs it (None: it does not validate); once per
    text of the file and configuration while the workflow is parsed (each case's back
    ends, pieces and cost all ask)."""
    from harness.config import load_config
    from harness.stages.prepared import prepare

    path = Path(case_path)
    try:
        text = hashlib.sha256(path.read_bytes()).hexdigest()
        key = (str(path.resolve()), text, json.dumps(config, sort_keys=True, default=str))
    except (OSError, TypeError, ValueError):
        key = None
    if key is not None and key in _PREPARED:
        return _PREPARED[key]
    try:
        prep = prepare(case_path, load_config(None, dict(config)))
    except Exception:  # noqa: BLE001 - a broken case fails in its own job, first
        prep = None
    if key is not None:
        _PREPARED[key] = prep
    return prep


def backend_pattern() -> str:
    """The ``backend`` wildcard's pattern: every registered back end's name."""
    from harness.backends.catalogue import names

    return "|".join(names())


def study_backends(config: dict[str, Any]) -> list[str]:
    """The study's back ends installed here (each gets its ``reproduce`` job)."""
    from harness.backends.catalogue import installed
    from harness.cases.schema import BACKENDS

    return [b for b in config.get("backends", BACKENDS) if installed(b)]


def case_backends(case_path: str | Path, config: dict[str, Any]) -> list[str]:
    """The back ends a case's evaluations run in: the study's and the case's, where
    installed (a case that does not validate: the study's installed ones, so its jobs
    run and fail with the case's own message)."""
    from harness.backends.catalogue import installed
    from harness.cases.schema import BACKENDS

    prep = _prepared(case_path, config)
    if prep is None:
        return [b for b in config.get("backends", BACKENDS) if installed(b)]
    return list(prep.backends)


def case_pieces(case_path: str | Path, config: dict[str, Any]) -> list[tuple[str, str]]:
    """``(backend, piece)`` of every evaluation job of a case (:mod:`harness.stages.pieces`; a
    case that does not validate: one piece per back end, whose job fails with the case's
    own message)."""
    from harness.stages.pieces import ALL

    prep = _prepared(case_path, config)
    if prep is None:
        return [(b, ALL) for b in case_backends(case_path, config)]
    return [(b, piece.name) for b in prep.backends for piece in prep.pieces(b)]


def backend_files(
    config: dict[str, Any], name: str, folder: str | Path = "cases", results: str = "results"
):
    """A rule's input function: the case's ``name`` tables (evaluations, edges), one per
    back end it runs in and piece of its evaluation there (:func:`case_pieces`), for the
    case files in ``folder`` and their results in ``results``."""
    cache: dict[str, list[tuple[str, str]]] = {}

    def files(wildcards) -> list[str]:
        case = wildcards.case
        if case not in cache:
            cache[case] = case_pieces(Path(folder) / f"{case}.yaml", config)
        return [f"{results}/{case}/{b}/{piece}/{name}.parquet" for b, piece in cache[case]]

    return files


def evaluation_cost(case_path: str | Path, config: dict[str, Any]) -> int:
    """A rough cost of a case's evaluation, for scheduling: implementations x dtypes x
    modes x the partials each selected method computes (an experiment counts 100). On
    two cores the study's wall time is set by when its longest chain starts (the
    logistic case's evaluation, over a minute, used to start last, the study then running
    on one core for its final minute)."""
    prep = _prepared(case_path, config)
    if prep is None:
        return 1000
    if not prep.case.sampled:
        return 100
    s, case = prep.settings, prep.case
    per_method = sum(
        sum(1 for p in case.partials if 0 < len(p) <= s.max_order.get(m, 4)) for m in s.methods
    )
    return len(case.implementations) * len(s.dtypes) * len(s.modes) * per_method


def job_priority(config: dict[str, Any], folder: str | Path = "cases"):
    """The ``priority`` of a case's jobs: a function of the wildcards giving
    :func:`evaluation_cost` (costliest first), or 0 where this Snakemake takes only
    numbers (callable priorities are recent)."""
    try:
        from snakemake.rules import Rule
    except ImportError:
        return 0
    if not hasattr(Rule, "expand_priority"):
        return 0
    cache: dict[str, int] = {}

    def priority(wildcards) -> int:
        case = wildcards.case
        if case not in cache:
            cache[case] = evaluation_cost(Path(folder) / f"{case}.yaml", config)
        return cache[case]

    return priority


def discover_cases(folder: str | Path = "cases") -> tuple[list[str], list[str]]:
    """Case ids in ``folder``: those that validate, and those that do not."""
    from harness.cases.load import validate_paths

    paths = sorted(Path(folder).glob("*.yaml"))
    valid, problems = validate_paths(paths)
    broken = sorted({Path(p.file).stem for p in problems})
    return sorted(c.id for c in valid if c.id not in broken), broken


def check_config(config: dict[str, Any]) -> None:
    """Raise ``ValueError`` naming every problem of the workflow's study settings."""
    import jsonschema

    from harness.cases.schema import CONFIG_SCHEMA

    problems = [
        f"study settings: {'.'.join(map(str, e.path)) or '(top)'}: {e.message}"
        for e in jsonschema.Draft202012Validator(CONFIG_SCHEMA).iter_errors(config)
    ]
    if problems:
        raise ValueError(
            "invalid study settings (config/study.yaml or --config):\n" + "\n".join(problems)
        )
