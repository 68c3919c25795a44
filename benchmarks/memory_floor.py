"""Issue-13 memory floor: the peak memory of one evaluation piece in the harness against
the bare TensorFlow script that computes the same derivatives (``overhead.py`` writes
it), each in a fresh process, for the pieces of the full setting that exceed the
1.5 GB target.

Usage: python benchmarks/memory_floor.py CASE:DTYPE:METHOD[:MODES[:ORDERS[:POINTS]]] ...
       (e.g. ratio:float32:forward nested_softplus:float64:forward:eager
        ratio:float32:forward:eager:4 ratio:float32:forward:eager:0,1,2,3:16)

For each piece it prints the wall time and peak RSS (``wait4``) of ``harness evaluate
CASE --setting full --dtypes DTYPE --methods METHOD [--modes MODES] [--orders ORDERS]
[--points POINTS] --no-bisect`` and of the bare script, and of ``python -c "import
tensorflow"`` once: what TensorFlow itself holds before any derivative. An empty field
keeps the case's own (``ratio:float32:forward::4``: every mode, order 4).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from overhead import ROOT, bare_script, timed  # noqa: E402

from harness.stages.prepared import Selection  # noqa: E402


def main(argv: list[str]) -> int:
    work = Path(tempfile.mkdtemp(prefix="memory-floor-"))
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    py = sys.executable
    start = "import tensorflow as tf; tf.constant([0.0]) + 0.0"
    wall, peak = timed([py, "-c", start], env)
    print(f"TensorFlow started, nothing computed: {peak:.0f} MB")
    out = {"tensorflow_start_mb": round(peak)}
    for spec in argv:
        case_id, dtype, method, *rest = spec.split(":")
        rest += [""] * (3 - len(rest))
        modes = rest[0].split(",") if rest[0] else None
        orders = [int(k) for k in rest[1].split(",")] if rest[1] else None
        points = int(rest[2]) if rest[2] else None
        case_path = f"cases/{case_id}.yaml"
        selection = Selection(
            dtypes=[dtype], methods=[method], modes=modes, orders=orders, max_points=points
        )
        tag = "_".join(["", dtype, method, *(modes or []), *map(str, orders or []), rest[2]])
        script, npz = bare_script(case_path, "full", work, selection, tag)
        results = work / f"results{tag}"
        study = json.dumps({"setting": "full"})
        subprocess.run(
            [py, "-m", "harness", "reference", case_path, "--results", str(results),
             "--study", study, *(["--points", rest[2]] if points else [])],
            cwd=ROOT, env=env, check=True, capture_output=True,
        )  # fmt: skip
        narrow = ["--dtypes", dtype, "--methods", method]
        narrow += ["--modes", ",".join(modes)] if modes else []
        narrow += ["--orders", rest[1]] if orders else []
        narrow += ["--points", rest[2]] if points else []
        harness = [py, "-m", "harness", "evaluate", case_path, "--backends", "tensorflow",
                   "--no-bisect", "--results", str(results), "--study", study, *narrow]  # fmt: skip
        h = timed(harness, env)
        b = timed([py, str(script), str(npz), str(work / f"values{tag}.npz")], env)
        print(f"{spec}: harness {h[0]:.1f} s {h[1]:.0f} MB; bare {b[0]:.1f} s {b[1]:.0f} MB")
        out[spec] = {
            "harness": [round(h[0], 1), round(h[1])],
            "bare": [round(b[0], 1), round(b[1])],
        }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
