"""Issue-11 benchmark: what finding the exact edges adds to each case's evaluation.

Usage: python benchmarks/bisection.py [--setting quick] [--threads 1] [CASE ...]

For every expression case (default: every case in cases/ but the experiments, which are
not bisected), in the study's setting: the reference once (cached), then
``harness evaluate`` twice in fresh processes, without and with the bisection, one
thread each, interleaved. Reports per case the evaluation's own seconds (as the stage
records them), the bisection's seconds, the overhead against the evaluation without it,
and what the bisection did (TensorFlow calls, inputs evaluated, edges, edges verified
rather than searched). Target: at most 25% per case.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _harness(*args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "harness", *args],
        check=True,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _summed(metas: list[dict]) -> dict:
    """Piece statistics added up (numbers, and the bisection's nested numbers)."""
    total: dict = {}
    for meta in metas:
        for key, value in meta.items():
            if isinstance(value, (int, float)):
                total[key] = total.get(key, 0) + value
            elif isinstance(value, dict):
                total[key] = _summed([total.get(key) or {}, value])
    return total


def measure(case: Path, setting: str, threads: int, results: Path) -> dict:
    from harness.results import read_metadata

    common = ["--results", str(results), "--setting", setting]
    _harness("reference", str(case), *common)
    out = {}
    for label, extra in (("without", ["--no-bisect"]), ("with", [])):
        _harness("evaluate", str(case), *common, "--threads", str(threads), *extra)
        # One entry per piece of the evaluation (harness.stages.pieces): their sums.
        metas = [
            read_metadata(path)["evaluation"]
            for path in sorted((results / case.stem / "tensorflow").glob("*/timings.parquet"))
        ]
        out[label] = _summed(metas)
    plain = out["without"]["seconds"]
    with_ = out["with"]
    stats = with_.get("bisection") or {}
    return {
        "case": case.stem,
        "evaluate_s": round(plain, 1),
        "with_bisection_s": round(with_["seconds"], 1),
        "bisection_s": round(with_["bisect_seconds"], 1),
        "overhead": round(with_["bisect_seconds"] / max(plain, 1e-9), 3),
        **{k: stats.get(k) for k in ("calls", "points", "edges", "verified", "misled")},
        # Of bisection_s: seconds inside TensorFlow's calls (the rest is judging).
        "tensorflow_s": round(sum((stats.get("tensorflow_seconds") or {}).values()), 1),
        "tensorflow_s_by_mode": _by_mode(stats.get("tensorflow_seconds") or {}),
    }


def _by_mode(seconds: dict) -> dict:
    out: dict[str, float] = {}
    for where, t in seconds.items():
        mode = where.split()[-1]
        out[mode] = round(out.get(mode, 0.0) + t, 1)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", help="case files (default: cases/*.yaml)")
    parser.add_argument("--setting", default="quick", choices=("quick", "full"))
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    from harness.cases.load import load_case

    paths = [Path(c) for c in args.cases] or sorted((ROOT / "cases").glob("*.yaml"))
    paths = [p for p in paths if not getattr(load_case(p), "experiment", None)]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in paths:
            row = measure(path.resolve(), args.setting, args.threads, Path(tmp))
            rows.append(row)
            print(json.dumps(row), flush=True)
    total_plain = sum(r["evaluate_s"] for r in rows)
    total_bis = sum(r["bisection_s"] for r in rows)
    total_tf = sum(r["tensorflow_s"] for r in rows)
    print(
        f"all {len(rows)} cases: evaluation {total_plain:.1f} s, bisection {total_bis:.1f} s "
        f"({100 * total_bis / max(total_plain, 1e-9):.0f}%; of it {total_tf:.1f} s in "
        "TensorFlow's calls); worst case "
        f"{max(rows, key=lambda r: r['overhead'])['case']} "
        f"({100 * max(r['overhead'] for r in rows):.0f}%); target <= 25% per case"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
