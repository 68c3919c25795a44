"""The quick census's TensorFlow evaluations with no harness code: the floor its two
TensorFlow jobs cannot go under.

For each dtype of the census's quick block, one process runs, kernel after kernel in the
jobs' order, a bare script per census case (plain TensorFlow and NumPy, written by
:func:`overhead.bare_script`: the same implementations, points padded to the census's
batch size, methods, modes, orders and calls as ``harness evaluate`` makes, TensorFlow's
forward-mode helpers kept from one kernel to the next as the harness keeps them). The two
processes run side by side, as ``snakemake census --cores 2`` runs the two TensorFlow
jobs. The bare scripts find no exact edges, localise nothing and write no tables: what is
left is what TensorFlow itself costs.

With ``--results`` (a finished census's results folder), every bare value is checked bit
for bit against that census's TensorFlow evaluations, and the census's own TensorFlow job
seconds (its Snakemake benchmark files under ``--logs``) are printed beside.

    python benchmarks/census_floor.py [--results results/census] [--logs logs/census]
                                      [--cases census/cases] [--keep DIR]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from overhead import ROOT, agreement, bare_script  # noqa: E402

from harness.stages.prepared import Selection  # noqa: E402
from harness.workflow.census import census_block, census_settings  # noqa: E402

_DRIVER = """
import json, os, sys, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # once for every kernel, as the census job imports it
started = time.perf_counter()
for case, script, npz, out in json.load(open(sys.argv[1])):
    t0 = time.perf_counter()
    sys.argv = [script, npz, out]
    exec(compile(open(script).read(), script, "exec"), {"__name__": "__main__"})
    print(f"{case} {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
print(f"all {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
"""


def census_jobs_seconds(logs: Path, dtype: str) -> float | None:
    """The census's own TensorFlow job of ``dtype``: its Snakemake benchmark seconds."""
    found = sorted(logs.glob(f"*/evaluate.tensorflow.{dtype}.benchmark.tsv"))
    if not found:
        return None
    return sum(float(list(csv.reader(p.open(), delimiter="\t"))[1][0]) for p in found)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="census/cases", help="the census's case files")
    ap.add_argument("--results", help="a finished census's results, to check every value")
    ap.add_argument("--logs", default="logs/census", help="that census's logs")
    ap.add_argument("--keep", help="keep the scripts and values in this folder")
    args = ap.parse_args()
    config = yaml.safe_load((ROOT / "config" / "study.yaml").read_text())
    study = json.loads(census_settings(config, "evaluate", "tensorflow"))
    dtypes = census_block(config)["dtypes"]
    cases = sorted(Path(args.cases).glob("*.yaml"))
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="census-floor-"))
    work.mkdir(parents=True, exist_ok=True)
    procs = {}
    t0 = time.perf_counter()
    skipped = set()
    for dtype in dtypes:
        jobs = []
        for path in cases:
            try:
                script, npz = bare_script(
                    str(path), study["setting"], work, Selection(dtypes=[dtype]), f"_{dtype}", study
                )
            except KeyError:  # no TensorFlow kernel: the census's rows say not applicable
                skipped.add(path.stem)
                continue
            jobs.append([path.stem, str(script), str(npz), str(work / f"{path.stem}_{dtype}.npz")])
        (work / f"jobs_{dtype}.json").write_text(json.dumps(jobs))
    cases = [p for p in cases if p.stem not in skipped]
    print(
        f"{len(cases)} cases' scripts written in {time.perf_counter() - t0:.1f} s; no "
        f"TensorFlow kernel (not applicable): {', '.join(sorted(skipped)) or 'none'}",
        flush=True,
    )
    (work / "driver.py").write_text(_DRIVER)
    env = {**os.environ, "PYTHONPATH": ""}
    started = time.perf_counter()
    for dtype in dtypes:  # side by side, as the census's two jobs
        argv = [sys.executable, str(work / "driver.py"), str(work / f"jobs_{dtype}.json")]
        log = (work / f"driver_{dtype}.log").open("w")
        proc = subprocess.Popen(argv, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=log)
        procs[dtype] = (proc, time.perf_counter())
    walls = {}
    for dtype, (proc, start) in procs.items():
        _, status, usage = os.wait4(proc.pid, 0)
        walls[dtype] = (time.perf_counter() - start, usage.ru_utime, usage.ru_maxrss / 1024)
        if os.waitstatus_to_exitcode(status) != 0:
            print(f"{dtype}: failed, see {work / f'driver_{dtype}.log'}")
            return 1
    both = time.perf_counter() - started
    for dtype, (wall, user, peak) in walls.items():
        census = census_jobs_seconds(Path(args.logs), dtype)
        beside = f"; the census's job: {census:.1f} s" if census else ""
        print(f"bare TensorFlow, {dtype}: {wall:.1f} s ({user:.1f} s user, {peak:.0f} MB){beside}")
    print(f"the two side by side: {both:.1f} s")
    if args.results:
        total = np.zeros(3, dtype=np.int64)
        for dtype in dtypes:
            for path in cases:
                values = work / f"{path.stem}_{dtype}.npz"
                points = work / f"points_{path.stem}_{study['setting']}_{dtype}.npz"
                found = agreement(values, points, Path(args.results), path.stem, dtype)
                total += [found["identical"], found["different"], found["not_in_bare"]]
        print(
            f"values against the census's tables: {total[0]:,} identical, {total[1]:,} "
            f"different, {total[2]:,} not computed by the bare scripts"
        )
    print(f"scripts and values: {work}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
