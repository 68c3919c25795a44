"""The kernel census's cost and what it found, from a finished `snakemake census` run:
the jobs' seconds by stage and back end (their benchmark files), the frameworks' own timed
calls in them (the floor on the run's cores), the values checked and the cost per value,
the atlas's size, the root causes by kind and framework, the kernels each framework gets
right everywhere, which root causes of the default study the census shares (the same id:
one mechanism), and its ten most severe root causes in the frameworks' own code with how
many of their scripts print the failure.

    python benchmarks/census_cost.py [--wall SECONDS] [--cores N]
"""

from __future__ import annotations

import argparse
import csv
import json
from collections import Counter
from pathlib import Path

import pandas as pd

from harness.census.bills import clean_bills, clean_kernels


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--wall", type=float, help="the run's wall-clock seconds")
    parser.add_argument("--cores", type=int, default=2, help="the cores the run had")
    args = parser.parse_args()
    seconds: Counter = Counter()
    jobs: Counter = Counter()
    logs = Path("logs/census")
    for path in [*logs.glob("*/*.benchmark.tsv"), *logs.glob("*.benchmark.tsv")]:
        rows = list(csv.reader(path.open(), delimiter="\t"))
        stage = path.name.removesuffix(".benchmark.tsv")
        # evaluate.<backend> (a batch's job; evaluate_case.<backend>.<piece> before the
        # census ran in batches), compare.<part>, reference, collect, ...
        parts = stage.split(".")
        stage = ".".join(parts[:2]) if stage.startswith("evaluate") else parts[0]
        seconds[stage] += float(rows[1][0])
        jobs[stage] += 1
    print("job seconds by stage:")
    for stage, s in sorted(seconds.items(), key=lambda kv: -kv[1]):
        print(f"  {stage:34s} {jobs[stage]:4d} jobs {s:8.1f} s ({s / jobs[stage]:.1f} s each)")
    total = sum(seconds.values())
    frameworks_own_calls(total, args.cores)
    atlas = pd.read_parquet("results/census/atlas.parquet")
    values = int(atlas["points"].sum())
    judged = int(atlas["judged"].sum())
    print(f"job seconds in all: {total:.0f}; values checked {values:,} ({judged:,} judged)")
    print(f"cost per checked value: {1e3 * total / values:.3f} ms of job time", end="")
    if args.wall:
        print(f", {1e3 * args.wall / values:.3f} ms of wall time ({args.wall:.0f} s)")
    else:
        print()
    print(
        f"atlas: {len(atlas):,} rows, {atlas['operator'].nunique()} kernels, "
        f"{atlas['case'].nunique()} cases, share right {atlas['ok'].sum() / judged:.2%}"
    )
    findings = pd.concat(
        pd.read_parquet(p).assign(case=p.parent.name)
        for p in Path("results/census").glob("*/findings.parquet")
    )
    causes = findings.groupby("root_cause").agg(
        kind=("kind", "first"),
        backends=("backend", lambda b: ", ".join(sorted(set(b)))),
        severity=("severity", "max"),
        findings=("case", "size"),
    )
    print(f"root causes: {len(causes)} from {len(findings):,} findings")
    print(causes.groupby("kind").size().to_string())
    by_framework = Counter(b for bs in causes["backends"] for b in bs.split(", "))
    print("root causes per framework:", dict(sorted(by_framework.items())))
    bills = clean_bills(atlas)
    right_everywhere = clean_kernels(bills)
    for backend, bill in bills.groupby("backend"):
        right = right_everywhere.get(backend, [])
        print(
            f"{backend}: right everywhere (autodiff) in {len(right)} of "
            f"{bill['operator'].nunique()}: " + ", ".join(right)
        )
    study = Path("results/root_causes.parquet")
    if study.exists():
        ids = set(pd.read_parquet(study)["id"])
        shared = sorted(ids & set(causes.index))
        print(
            f"the default study's root causes the census shares: {len(shared)} of {len(ids)}:",
            ", ".join(shared),
        )
    table = Path("results/census/causes.parquet")
    if table.exists():
        from harness.census.causes import most_severe

        listed = pd.read_parquet(table)
        print(
            f"root causes with a script printing the failure in at least one framework: "
            f"{int((listed['reproduced'] > 0).sum())} of {len(listed)}"
        )
        print("the ten most severe in the frameworks' own code (scripts printing it):")
        for r in most_severe(listed).itertuples():
            scripts = len(json.loads(r.scripts))
            print(
                f"  {r.id}  severity {r.severity}, {r.members} findings, "
                f"{r.reproduced} of {scripts} scripts"
            )


def frameworks_own_calls(total: float, cores: int) -> None:
    """The frameworks' own work: the evaluation jobs' timed calls (each implementation's
    call per method, mode and dtype in the timings tables, its first call's tracing and
    compiling included; the bisection's later calls and everything else not), the floor
    no scheduling of the census's jobs goes under."""
    paths = list(Path("results/census").glob("*/*/*/timings.parquet"))
    if not paths:
        return
    timed = pd.concat(pd.read_parquet(p) for p in paths)
    own = timed.groupby("backend")["seconds"].sum().sort_values(ascending=False)
    floor = float(own.sum())
    print(
        f"the frameworks' own timed calls: {floor:.1f} s of the {total:.0f} job seconds "
        f"({floor / total:.0%}), {floor / cores / 60:.1f} min on {cores} cores before any "
        "reference, bisection, judging or report"
    )
    for backend, s in own.items():
        mine = timed[timed["backend"] == backend]
        top = mine.groupby(["method", "mode"])["seconds"].sum().sort_values(ascending=False)
        parts = ", ".join(f"{m} {mode} {v:.1f}" for (m, mode), v in top.head(4).items())
        print(f"  {backend:10s} {s:8.1f} s (largest: {parts})")


if __name__ == "__main__":
    main()
