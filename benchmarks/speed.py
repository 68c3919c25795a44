"""Issue-2 speed benchmark: `harness run cases/softplus.yaml` with everything, against the
time of `python -c "import tensorflow"`, and the reference's verified throughput.

Usage: python benchmarks/speed.py [--repeats 3] [--case cases/softplus.yaml]

Targets (issue 2, point 9):
- the full run (4 methods x 3 modes x 4 dtypes x orders 0-4, >= 400 points) takes at
  most 4x the TensorFlow import time measured in the same script run;
- the reference computes >= 5,000 verified point-orders per second per core.

How the reference is measured: one process (one core), no cache, every distinct input
point of every dtype evaluated over Taylor jets at 50 and 100 digits (escalating where
they disagree); a "point-order" is one partial at one point that verified (or was
judged unreliable) -- the unit the errors table is built from.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _timed(argv: list[str], **kw) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    return time.perf_counter() - t0


def reference_throughput(case_path: str) -> dict:
    from harness.cases.load import load_case
    from harness.cases.points import generate, represent
    from harness.config import load_config, settings_for
    from harness.reference.table import compute_reference
    from harness.reference.verify import ReferenceSettings

    case = load_case(case_path)
    s = settings_for(case, load_config())
    base = generate(case)
    points = {d: represent(base, case.input_names, d) for d in s.dtypes}
    t0 = time.process_time()
    table, counts = compute_reference(
        case, points, ReferenceSettings(s.precision, s.verify_digits, s.max_precision), None
    )
    cpu = time.process_time() - t0
    distinct = counts["computed"]
    point_orders = distinct * len(case.partials)
    return {
        "distinct_points": distinct,
        "partials": len(case.partials),
        "point_orders": point_orders,
        "cpu_seconds": round(cpu, 3),
        "point_orders_per_cpu_second": round(point_orders / cpu),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--case", default=str(ROOT / "cases" / "softplus.yaml"))
    args = ap.parse_args()
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}

    imports = [
        _timed([sys.executable, "-c", "import tensorflow"], env=env) for _ in range(args.repeats)
    ]
    runs, breakdown = [], None
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as results:
            runs.append(
                _timed(
                    [
                        sys.executable,
                        "-m",
                        "harness",
                        "run",
                        args.case,
                        "--results",
                        results,
                        "--no-cache",
                    ],
                    env=env,
                    cwd=ROOT,
                )
            )
            if breakdown is None:
                import pandas as pd

                stem = Path(args.case).stem
                folder = Path(results) / stem / "tensorflow"
                timings = pd.concat(
                    [pd.read_parquet(p) for p in sorted(folder.glob("*/timings.parquet"))],
                    ignore_index=True,
                )
                per = timings.groupby(["method", "mode", "dtype"])["seconds"].first()
                breakdown = per.groupby(["method", "mode"]).sum().round(1).to_dict()
                points = int(
                    pd.concat(
                        [
                            pd.read_parquet(p, columns=["point"])
                            for p in folder.glob("*/evaluations.parquet")
                        ]
                    )["point"].nunique()
                )
    ref = reference_throughput(args.case)
    report = {
        "tensorflow_import_seconds": [round(t, 2) for t in imports],
        "tensorflow_import_median": round(statistics.median(imports), 2),
        "harness_run_seconds": [round(t, 1) for t in runs],
        "harness_run_median": round(statistics.median(runs), 1),
        "ratio_to_import": round(statistics.median(runs) / statistics.median(imports), 1),
        "target_ratio": 4.0,
        "points_per_dtype_max": points,
        "evaluation_seconds_by_method_and_mode": {f"{m}/{d}": v for (m, d), v in breakdown.items()},
        "reference": ref,
        "target_reference_point_orders_per_second": 5000,
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
