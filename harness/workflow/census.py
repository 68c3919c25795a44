"""The Snakefile's helpers for the kernel census (``rules/census.smk``): its case files,
the batches its cases run in, and the settings and files of each batch's jobs.

The census runs many small cases (one per kernel and layout). A job per case and
framework would start each framework once per case (PyTorch's import alone is most of a
PyTorch job) and trace every kernel's forward-mode helpers and compile its primitives in
a shape of its own. So the census's cases go in a few batches: per batch, two reference
jobs, one evaluation job per framework (``harness evaluate`` over the batch's case files,
every batch padded to the census's ``batch`` size: :mod:`harness.backends.padding`), and
two comparison jobs (they share nothing: the last batch's two run side by side).

A framework's helpers and compiled programs are per dtype (TensorFlow traces each op's
forward-mode helper per op, dtype, shape and nesting depth), so where the census block
has a ``split`` (the quick census: ``[dtype]``, one batch) a batch's evaluation in one
framework is one job per dtype: each traces an op's helpers once for every kernel, where
two batches traced the ops they share once each.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.workflow import case_pieces, evaluation_cost, stage_settings

__all__ = [
    "EVALUATION_TABLES",
    "census_batches",
    "census_block",
    "census_cases",
    "census_config",
    "census_evaluate_jobs",
    "census_evaluations",
    "census_mem_mb",
    "census_parts",
    "census_priority",
    "census_settings",
]

#: What each evaluation piece writes (:mod:`harness.stages.evaluate`).
EVALUATION_TABLES = ("evaluations", "edges", "localised", "timings")


def census_block(config: dict[str, Any]) -> dict[str, Any]:
    """The census's settings for the study's setting (its ``census`` block)."""
    setting = config.get("setting", "full")
    return dict((config.get("census") or {}).get(setting) or {})


def census_config(config: dict[str, Any]) -> dict[str, Any]:
    """The study's settings as the census runs them: where the census block has a
    ``split``, its evaluations are cut by it (in place of the study's ``split`` for the
    setting), so their pieces, and the comparisons that merge them, follow it."""
    block = census_block(config)
    if "split" not in block:
        return config
    setting = config.get("setting", "full")
    return {**config, "split": {**(config.get("split") or {}), setting: list(block["split"])}}


def census_cases(config: dict[str, Any], folder: str | Path = "census/cases") -> list[str]:
    """Write the kernel census's case files for the study's setting (its ``census``
    block: the dtypes and the magnitudes per sign), of the operators its
    ``census_kernels`` names (null: every one), and return their ids."""
    from harness.census.cases import chosen_kernels, write_cases

    block = census_block(config)
    dtypes = [d for d in block.get("dtypes", config.get("dtypes", [])) if d]
    try:
        kernels = chosen_kernels(config.get("census_kernels"))
    except ValueError as exc:
        raise ValueError(
            f"invalid study settings (config/study.yaml or --config):\n"
            f"study settings: census_kernels: {exc}"
        ) from None
    paths = write_cases(folder, dtypes, int(block.get("per_sign", 48)), kernels)
    return sorted(p.stem for p in paths)


def census_batches(
    config: dict[str, Any], cases: list[str], folder: str | Path = "census/cases"
) -> dict[str, list[str]]:
    """The census's cases in the block's ``batches`` groups (``b1``, ``b2``, ...), each
    kernel's layouts (``census_pow_grid``, ``census_pow_diagonal``) in one group, where
    they share their traces, and the groups balanced by :func:`evaluation_cost`, the
    costliest kernels placed first."""
    count = max(1, int(census_block(config).get("batches", 1)))
    kernels: dict[str, list[str]] = {}
    for case in sorted(cases):
        kernels.setdefault(_kernel(case), []).append(case)
    if count == 1 or len(kernels) <= 1:
        # One group: no balancing, so no case is prepared for its cost (the quick
        # census's 114 cases took 2.5 s of every parse of the workflow, a no-op too).
        return {"b1": sorted(cases)} if cases else {}
    cost = {
        k: sum(evaluation_cost(Path(folder) / f"{c}.yaml", config) for c in members)
        for k, members in kernels.items()
    }
    groups: list[list[str]] = [[] for _ in range(min(count, len(kernels)) or 1)]
    load = [0] * len(groups)
    for k in sorted(kernels, key=lambda k: (-cost[k], k)):
        i = min(range(len(groups)), key=lambda i: (load[i], i))
        groups[i] += kernels[k]
        load[i] += cost[k]
    return {f"b{i + 1}": sorted(g) for i, g in enumerate(groups) if g}


#: What a census job declares where its block says nothing (``<stage>_mem_mb``).
_MEM_MB = {"reference": 1500, "evaluate": 8000, "compare": 1500, "collect": 3000, "reproduce": 2000}


def census_mem_mb(config: dict[str, Any], stage: str) -> int:
    """The memory (MB) a census ``stage`` job (reference, evaluate, compare, collect,
    reproduce) declares: the block's ``<stage>_mem_mb``. One number per setting, the
    largest job's: a full grid case's comparison holds every framework's rows of one dtype
    at once, the collect and reproduce jobs every finding's root-cause columns."""
    return int(census_block(config).get(f"{stage}_mem_mb", _MEM_MB[stage]))


def census_parts(cases: list[str], count: int) -> dict[int, list[str]]:
    """``cases`` dealt into ``count`` parts (1, 2, ...), in turn: jobs that need no
    shared traces (the references, the comparisons) split a batch to run side by side."""
    parts = {i + 1: cases[i::count] for i in range(count)}
    return {i: members for i, members in parts.items() if members}


def _kernel(case: str) -> str:
    for layout in ("_grid", "_diagonal"):
        if case.endswith(layout):
            return case[: -len(layout)]
    return case


def census_settings(config: dict[str, Any], stage: str, backend: str | None = None) -> str:
    """The study settings a census job runs with (its rule's ``params``): the stage's
    (:func:`harness.workflow.stage_settings` of :func:`census_config`: the census's
    ``split``), narrowed to ``backend``, with the census's ``batch`` size."""
    part = json.loads(stage_settings(census_config(config), stage))
    if backend is not None:
        part["backends"] = [backend]
    if stage == "evaluate" and census_block(config).get("batch"):
        part["batch"] = census_block(config)["batch"]
    return json.dumps(part, sort_keys=True, separators=(",", ":"))


def census_evaluate_jobs(
    config: dict[str, Any], cases: list[str], backend: str, folder: str | Path = "census/cases"
) -> dict[str | None, list[str]]:
    """A batch's evaluation jobs in ``backend``: piece -> the batch's cases with that
    piece, one job each, where the census block has a ``split`` (``[dtype]``: one process
    per dtype, which traces each op's forward-mode helpers, and compiles each primitive,
    once for every kernel of the batch: they are per dtype); otherwise ``{None: cases}``,
    one job for every piece of the batch's cases."""
    if "split" not in census_block(config):
        return {None: list(cases)}
    jobs: dict[str | None, list[str]] = {}
    for case in cases:
        for b, piece in case_pieces(Path(folder) / f"{case}.yaml", census_config(config)):
            if b == backend:
                jobs.setdefault(piece, []).append(case)
    return jobs


def census_evaluations(
    config: dict[str, Any],
    cases: list[str],
    backend: str,
    folder: str | Path = "census/cases",
    results: str = "results/census",
    piece: str | None = None,
) -> dict[str, list[str]]:
    """The tables an evaluation job in ``backend`` writes, by name
    (:data:`EVALUATION_TABLES`): one per case and piece (``piece``: that piece's only)."""
    out: dict[str, list[str]] = {name: [] for name in EVALUATION_TABLES}
    for case in cases:
        # Each rule of a batch asks again: the case is prepared once per parse
        # (harness.workflow.case_pieces).
        for b, p in case_pieces(Path(folder) / f"{case}.yaml", census_config(config)):
            if b == backend and piece in (None, p):
                for name in EVALUATION_TABLES:
                    out[name].append(f"{results}/{case}/{b}/{p}/{name}.parquet")
    return out


def census_priority(
    batches: dict[str, list[str]], batch: str, backends: list[str], stage: str | None
) -> int:
    """A job's ``priority``: the earlier batches first; in a batch its references
    (``stage`` ``"reference"``), its evaluations (``stage`` a back end, in the study's
    order), then its comparisons (``stage`` None), before the next batch's references, so
    that only the last batch's comparisons are left at the end.

    Snakemake starts the highest-priority job that is ready, so this order holds only
    where a batch's jobs are ready in it: the first batch's references outrank the second
    batch's (both are ready at the start), and its evaluations, which wait for them,
    outrank the second batch's references too.
    """
    if stage is None:
        rank = 0
    elif stage == "reference":
        rank = len(backends) + 1
    else:
        rank = len(backends) - backends.index(stage)
    return (len(batches) - list(batches).index(batch)) * (len(backends) + 2) + rank
