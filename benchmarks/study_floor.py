"""Where a finished study's time went, and the frameworks' own floor beside it.

    python benchmarks/study_floor.py [--results results] [--logs logs] [--wall SECONDS]
                                     [--rounds 3]

For every job of the study, its seconds from Snakemake's benchmark files
(``logs/**/*.benchmark.tsv``), summed by rule. For each evaluation job (one case, back end
and piece), what its timings table's provenance records: the seconds inside the
framework's calls of the sweep (the timings rows; an experiment's runs, which it times
whole), of the exact edges' bisection (the bisector times every framework call it makes)
and of the localisation; the rest of the job is the harness's own (process start, imports, tracing, judging, writing).

The floor is what a bare script doing the same framework work cannot go under: the same
framework calls (the sweep's, the bisection's and the localisation's: the primitives of
each failing value judged alone, ``localise_call_seconds``) and one framework import per
process that runs them. The import is measured here, in fresh processes (``--rounds``, median),
alone on the machine. Beside it, the floor with the reproducers' scripts too (each a
framework program the study runs; their seconds from ``results/reproducers``).
benchmarks/overhead.py measured the harness's TensorFlow evaluation
at 0.99x a bare TensorFlow script making the same calls (issue 13), so the seconds
inside the calls stand for the bare script's. Printed: the study's job seconds against
the floor's, and, with ``--wall`` (the study's cold wall time), the wall against the
floor spread over 2 cores.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.results import read_metadata, read_table  # noqa: E402

IMPORTS = {"tensorflow": "tensorflow", "jax": "jax", "torch": "torch"}


def job_seconds(logs: Path) -> dict[str, list[tuple[str, float]]]:
    """``{rule: [(job file, seconds)]}`` from Snakemake's benchmark files."""
    jobs: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for path in sorted(logs.rglob("*.benchmark.tsv")):
        rows = path.read_text().splitlines()
        if len(rows) < 2:
            continue
        rule = path.name.split(".")[0]
        jobs[rule].append((str(path.relative_to(logs)), float(rows[-1].split("\t")[0])))
    return jobs


def import_seconds(module: str, rounds: int) -> float:
    """Median wall seconds of ``python -c 'import MODULE'`` in a fresh process."""
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", f"import {module}"],
            check=True,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"},
        )
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def evaluations(results: Path) -> list[dict]:
    """One row per evaluation piece: its back end and the seconds its provenance records."""
    rows = []
    for path in sorted(results.glob("*/*/*/timings.parquet")):
        stats = read_metadata(path).get("evaluation") or {}
        bisection = stats.get("bisection") or {}
        sweep = float(read_table(path)["seconds"].sum())
        # An experiment (harness.experiments) times each of its runs whole, its framework
        # calls, in seconds_per_run, and writes no timings rows.
        sweep += sum((stats.get("seconds_per_run") or {}).values())
        rows.append(
            {
                "case": path.parts[-4],
                "backend": path.parts[-3],
                "piece": path.parts[-2],
                "sweep": sweep,
                "bisection": sum((bisection.get("tensorflow_seconds") or {}).values()),
                "localise": float(stats.get("localise_seconds") or 0.0),
                # Of the localisation, inside the framework's calls (the primitives judged
                # alone at the arguments they receive): framework work a bare script
                # localising the same failures makes too.
                "localise_calls": float(stats.get("localise_call_seconds") or 0.0),
                "evaluation": float(stats.get("seconds") or 0.0),
            }
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--logs", type=Path, default=Path("logs"))
    parser.add_argument("--wall", type=float, help="the study's cold wall seconds")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    jobs = job_seconds(args.logs)
    total = sum(s for rows in jobs.values() for _, s in rows)
    print(f"job seconds by rule (total {total:.1f}):")
    for rule, rows in sorted(jobs.items(), key=lambda kv: -sum(s for _, s in kv[1])):
        print(f"  {rule:24s} {sum(s for _, s in rows):8.1f}  ({len(rows)} jobs)")

    pieces = evaluations(args.results)
    by_backend: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for p in pieces:
        for k in ("sweep", "bisection", "localise", "localise_calls", "evaluation"):
            by_backend[p["backend"]][k] += p[k]
        by_backend[p["backend"]]["jobs"] += 1
    evaluate_jobs = {
        b: sum(s for name, s in jobs.get("evaluate_case", []) if f".{b}." in name)
        for b in by_backend
    }
    imports = {b: import_seconds(IMPORTS[b], args.rounds) for b in sorted(by_backend)}
    print("\nevaluation jobs by back end (seconds):")
    print(
        f"  {'back end':11s} {'jobs':>4s} {'job s':>8s} {'sweep':>8s} {'bisect':>8s} "
        f"{'localise':>8s} {'its calls':>9s} {'import':>7s} {'floor':>8s} {'job/floor':>9s}"
    )
    floor = 0.0
    for b, t in sorted(by_backend.items()):
        f = t["sweep"] + t["bisection"] + t["localise_calls"] + imports[b] * t["jobs"]
        floor += f
        print(
            f"  {b:11s} {int(t['jobs']):4d} {evaluate_jobs[b]:8.1f} {t['sweep']:8.1f} "
            f"{t['bisection']:8.1f} {t['localise']:8.1f} {t['localise_calls']:9.1f} "
            f"{imports[b]:7.2f} {f:8.1f} "
            f"{evaluate_jobs[b] / f:9.2f}"
        )
    print(
        f"\nthe frameworks' floor: {floor:.1f} job seconds (the calls of the sweep, the "
        f"bisection and the localisation, one import per evaluation job); the study: "
        f"{total:.1f} job seconds, "
        f"{total / floor:.2f}x the floor"
    )
    if args.wall:
        print(
            f"wall {args.wall:.1f} s against the floor over 2 cores {floor / 2:.1f} s: "
            f"{args.wall / (floor / 2):.2f}x"
        )
    # The reproducers: each script is framework work a bare script reproducing the same
    # root causes runs too (its seconds, timed around the script in the worker process,
    # hold the framework's import in the first script of each process).
    scripts = reproducer_seconds(args.results)
    if scripts:
        jobs_of = dict(jobs.get("reproduce_root_causes", []))
        print("\nreproducer jobs by back end (seconds): job, its scripts")
        for b, s in sorted(scripts.items()):
            job = sum(v for name, v in jobs_of.items() if f".{b}." in name)
            print(f"  {b:11s} {job:8.1f} {s:8.1f}")
        both = floor + sum(scripts.values())
        print(
            f"with the reproducers' scripts, the floor is {both:.1f} job seconds: the study "
            f"{total / both:.2f}x"
            + (f"; the wall {args.wall / (both / 2):.2f}x it over 2 cores" if args.wall else "")
        )
    return 0


def reproducer_seconds(results: Path) -> dict[str, float]:
    """``{back end: seconds}`` of the reproducers' scripts (``results/reproducers``)."""
    out = {}
    for path in sorted((results / "reproducers").glob("*.parquet")):
        table = read_table(path)
        if "seconds" in table:
            out[path.stem] = float(table["seconds"].fillna(0).sum())
    return out


if __name__ == "__main__":
    raise SystemExit(main())
