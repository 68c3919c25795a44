"""The census's root causes beside its atlas: each with what its reproducers printed (the
standalone script of every framework it affects, run in that framework's own process by
``harness repro``), the study's cases that share it (the same id: the same primitive
failing the same way in a seed case and in the census), and which are the most severe
of the frameworks' own (kinds :data:`FRAMEWORK_KINDS`)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from harness.results import read_table

__all__ = ["CAUSE_COLUMNS", "FRAMEWORK_KINDS", "census_causes", "most_severe"]

#: Root causes in a framework's own code: its kernel's rule, its handling of an
#: implementation (only it fails), its compiler.
FRAMEWORK_KINDS = ("kernel", "framework", "mode")

CAUSE_COLUMNS = (
    "id",
    "kind",
    "primitive",
    "outcome",
    "severity",
    "severity_label",
    "frameworks",
    "cases",
    "members",
    "text",
    "reproduced",  # how many of its frameworks' scripts print the failure
    "scripts",  # JSON {backend: {script, got, truth, reproduces, note, probe}}
    "in_study",  # the study's cases with the same root cause
)


def _scripts(results: Path) -> dict[str, dict[str, dict]]:
    """``{root cause: {backend: its reproducer's row}}`` from ``results/reproducers``."""
    out: dict[str, dict[str, dict]] = {}
    folder = results / "reproducers"
    for path in sorted(folder.glob("*.parquet")) if folder.is_dir() else ():
        for r in read_table(path).to_dict("records"):
            got = r["got"]
            out.setdefault(r["root_cause"], {})[r["backend"]] = {
                "script": r["script"],
                "got": None if got != got else float(got),
                "truth": r["truth"],
                "reproduces": bool(r["reproduces"]),
                "note": r["note"],
                "probe": r["probe"],
                **{k: r[k] for k in ("target", "inputs", "derivative", "method", "mode", "dtype")},
            }
    return out


def census_causes(results: Path, study: Path | None = None) -> pd.DataFrame:
    """The census's root causes (``results/root_causes.parquet``, most severe first, then
    by the findings they absorb) with their reproducers' verdicts and, where the study's
    results (``study``) have root causes, the study's cases sharing each one."""
    path = results / "root_causes.parquet"
    if not path.exists():
        return pd.DataFrame(columns=list(CAUSE_COLUMNS))
    roots = read_table(path)
    scripts = _scripts(results)
    shared: dict[str, str] = {}
    if study is not None and (study / "root_causes.parquet").exists():
        theirs = read_table(study / "root_causes.parquet")
        shared = dict(zip(theirs["id"], theirs["cases"]))
    out = roots.assign(
        scripts=[json.dumps(scripts.get(i, {}), sort_keys=True) for i in roots["id"]],
        reproduced=[sum(s["reproduces"] for s in scripts.get(i, {}).values()) for i in roots["id"]],
        in_study=[shared.get(i, "") for i in roots["id"]],
    )
    out = out.sort_values(["severity", "members", "id"], ascending=[False, False, True])
    return out[list(CAUSE_COLUMNS)].reset_index(drop=True)


def most_severe(causes: pd.DataFrame, n: int = 10) -> pd.DataFrame:
    """The ``n`` most severe root causes in the frameworks' own code (severity, then the
    findings they absorb)."""
    return causes[causes["kind"].isin(FRAMEWORK_KINDS)].head(n)
