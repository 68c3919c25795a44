"""Issue-57 one-case benchmark: how long `harness run CASE --backends B` takes to print its
first verdicts, and to finish, from a cold results folder.

Usage: python benchmarks/first_verdicts.py [--case cases/softplus.yaml] [--backends jax,torch]
                                           [--rounds 1]

For each back end, in a fresh process and an empty results folder (no reference cache):
the seconds from the start to the first `judged ...` line on stderr (the first verdicts),
and to the exit. Beside them, the floor: a bare `python -c "import <framework>"`.
Target: first verdicts <= 30 s for a seed case on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# TensorFlow's start-up logs, silenced as the harness silences them.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
IMPORTS = {"tensorflow": "tensorflow", "jax": "jax, jax.numpy", "torch": "torch"}


def one(case: str, backend: str) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as where:
        argv = [sys.executable, "-m", "harness", "run", case, "--backends", backend]
        start = time.perf_counter()
        proc = subprocess.Popen(
            [*argv, "--results", where],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        first = None
        for line in proc.stderr:
            if first is None and line.startswith("judged "):
                first = time.perf_counter() - start
        proc.wait()
        total = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"harness run failed for {backend}")
    return (first if first is not None else float("nan")), total


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", default="cases/softplus.yaml")
    ap.add_argument("--backends", default="jax,torch,tensorflow")
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()
    print(f"{args.case}: seconds from the start (median of {args.rounds})")
    print(f"{'backend':12s} {'import':>8s} {'first verdicts':>15s} {'done':>8s}")
    for backend in args.backends.split(","):
        imports, firsts, totals = [], [], []
        for _ in range(args.rounds):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", f"import {IMPORTS[backend]}"], check=True)
            imports.append(time.perf_counter() - t)
            first, total = one(args.case, backend)
            firsts.append(first)
            totals.append(total)
        med = statistics.median
        print(f"{backend:12s} {med(imports):8.2f} {med(firsts):15.2f} {med(totals):8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
