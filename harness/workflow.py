"""Helpers the Snakefile calls: which cases exist, which sources and settings each stage
depends on. Kept small and free of TensorFlow: the Snakefile imports this module every
time Snakemake parses the workflow (``snakemake -n`` included).

Rerun rules follow from these lists. A stage's job reruns when its case file, one of its
source files (:data:`STAGE_SOURCES`) or its slice of the study settings
(:func:`stage_settings`, passed as the rule's ``params``) changes. So editing the
TensorFlow code reruns evaluations but never the mpmath references, and changing a
tolerance reruns comparisons only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = [
    "STAGE_SOURCES",
    "check_config",
    "discover_cases",
    "evaluate_mem_mb",
    "stage_settings",
    "stage_sources",
]

_PACKAGE = Path(__file__).resolve().parent

# What every stage reads: case files, settings, points, result files.
_COMMON = (
    "__init__.py",
    "cli.py",
    "pipeline.py",
    "cases.py",
    "case_schema.py",
    "expressions.py",
    "yaml_lines.py",
    "registry.py",
    "experiments.py",
    "hessian_norm.py",
    "matrix_partials.py",
    "config.py",
    "points.py",
    "floats.py",
    "results.py",
    "provenance.py",
    "study_defaults.yaml",
)

#: Package files each stage runs, beyond :data:`_COMMON` (a test checks that a stage
#: imports nothing from the package outside its list).
STAGE_SOURCES: dict[str, tuple[str, ...]] = {
    "reference": ("reference.py", "jets.py"),
    "evaluate": ("evaluate.py", "derivatives.py", "tf_backend.py", "builtin_implementations.py"),
    "compare": ("compare.py", "summary.py", "collect.py"),
    "collect": ("collect.py", "compare.py", "summary.py"),
    "report": ("report.py", "collect.py", "compare.py", "summary.py"),
}

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
    "evaluate": ("dtypes", "methods", "modes", "max_points", "setting", "quick"),
    "compare": (
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


def stage_sources(stage: str, root: str | Path = ".") -> list[str]:
    """Paths (relative to ``root``) of the package files ``stage`` depends on."""
    names = dict.fromkeys((*_COMMON, *STAGE_SOURCES[stage]))
    base = Path(root) / "harness"
    return [str(base / n) for n in names if (_PACKAGE / n).exists()]


def stage_settings(config: dict[str, Any], stage: str) -> str:
    """The study settings ``stage`` depends on, as compact JSON (a rule's ``params``)."""
    part = {k: config[k] for k in _STAGE_KEYS[stage] if k in config}
    return json.dumps(part, sort_keys=True, separators=(",", ":"))


def evaluate_mem_mb(config: dict[str, Any]) -> int:
    """Memory an ``evaluate_case`` job declares: measured peaks were under 1 GB per case
    in the quick setting and 13.8 GB in the full one (README, Speed)."""
    return 16000 if config.get("setting", "quick") == "full" else 2000


def discover_cases(folder: str | Path = "cases") -> tuple[list[str], list[str]]:
    """Case ids in ``folder``: those that validate, and those that do not."""
    from .cases import validate_paths

    paths = sorted(Path(folder).glob("*.yaml"))
    valid, problems = validate_paths(paths)
    broken = sorted({Path(p.file).stem for p in problems})
    return sorted(c.id for c in valid if c.id not in broken), broken


def check_config(config: dict[str, Any]) -> None:
    """Raise ``ValueError`` naming every problem of the workflow's study settings."""
    import jsonschema

    from .case_schema import CONFIG_SCHEMA

    problems = [
        f"study settings: {'.'.join(map(str, e.path)) or '(top)'}: {e.message}"
        for e in jsonschema.Draft202012Validator(CONFIG_SCHEMA).iter_errors(config)
    ]
    if problems:
        raise ValueError(
            "invalid study settings (config/study.yaml or --config):\n" + "\n".join(problems)
        )
