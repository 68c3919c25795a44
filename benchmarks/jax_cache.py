"""JAX's persistent compilation cache (``harness/backends/jax/cache.py``): each case's JAX
evaluation as the study runs it (one ``harness evaluate`` process per case, the study's
settings), three times in one results folder:

- ``off``: ``compilation_cache: false``, every process compiles all it runs;
- ``cold``: the cache on and empty at the start, so each process loads what the ones
  before it compiled (the study's first run);
- ``warm``: every program already there (a rerun);

then checks that the three runs wrote equal evaluations, edges and localised tables (all
but the seconds). Prints each process's wall seconds and the totals.

    .venv/bin/python benchmarks/jax_cache.py [CASE.yaml ...]   (default: softplus, ratio)
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ("softplus", "ratio")  # the two measured in benchmarks/README.md
TABLES = ("evaluations", "edges", "localised")


def _harness(*args: str) -> float:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "harness", *args], cwd=ROOT, capture_output=True, text=True
    )
    if proc.returncode:
        raise SystemExit(f"harness {' '.join(args[:2])} failed:\n{proc.stderr[-2000:]}")
    return time.perf_counter() - start


def _tables(results: Path, case: str) -> dict[str, pd.DataFrame]:
    out = {}
    for name in TABLES:
        for path in sorted((results / case / "jax").glob(f"*/{name}.parquet")):
            frame = pd.read_parquet(path)
            out[str(path.relative_to(results))] = frame.drop(
                columns=[c for c in frame.columns if "second" in c]
            )
    return out


def main() -> None:
    cases = [Path(a) for a in sys.argv[1:]] or [ROOT / "cases" / f"{c}.yaml" for c in DEFAULT]
    config = str(ROOT / "config" / "study.yaml")
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp) / "results"
        for case in cases:
            _harness("reference", str(case), "--results", str(results), "--config", config)
        seconds: dict[str, dict[str, float]] = {}
        tables: dict[str, dict] = {}
        for run, on in (("off", False), ("cold", True), ("warm", True)):
            study = json.dumps({"compilation_cache": on})
            seconds[run], tables[run] = {}, {}
            for case in cases:
                seconds[run][case.stem] = _harness(
                    "evaluate", str(case), "--backends", "jax", "--results", str(results),
                    "--config", config, "--study", study,
                )  # fmt: skip
                tables[run].update(_tables(results, case.stem))
        folder = results / ".cache" / "compiled" / "jax"
        entries = list(folder.glob("*/*"))
        size = sum(p.stat().st_size for p in entries)
    print(f"{'case':20s} {'off':>8s} {'cold':>8s} {'warm':>8s}   (s per process)")
    for case in cases:
        row = " ".join(f"{seconds[r][case.stem]:8.1f}" for r in ("off", "cold", "warm"))
        print(f"{case.stem:20s} {row}")
    row = " ".join(f"{sum(seconds[r].values()):8.1f}" for r in ("off", "cold", "warm"))
    print(f"{'total':20s} {row}")
    print(f"cache: {len(entries)} entries, {size / 2**20:.1f} MiB")
    same = all(
        tables["off"].keys() == tables[r].keys()
        and all(tables["off"][k].equals(tables[r][k]) for k in tables["off"])
        for r in ("cold", "warm")
    )
    print(f"{len(tables['off'])} tables per run; equal in the three runs: {same}")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
