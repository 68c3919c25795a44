"""Issue-13 overhead benchmark: the harness's TensorFlow evaluation against a bare
TensorFlow script that computes exactly the same derivatives.

Usage: python benchmarks/overhead.py [--cases softplus,ratio] [--settings quick,full]
                                     [--rounds 3] [--keep DIR] [--variants bare,evaluate]

For each case and setting this script writes a *bare script* (plain TensorFlow and NumPy,
no harness import; :class:`harness.backends.tensorflow.source.SourceWriter` writes the
implementations as the reproduction scripts of findings do) that computes the same
implementations at the same points (read from a ``.npz`` file), with the same methods,
modes, dtypes and orders, in the same calls (one per implementation, method, mode and
dtype; every partial of the method in one traced graph; partial by partial where that
raises), on one thread with deterministic ops and ``tf.function`` on the single-threaded
executor as the harness runs it. Then, interleaved in each round (the order alternating
between rounds), in fresh processes:

- ``bare``: the bare script;
- ``evaluate``: ``harness evaluate CASE --backends tensorflow --no-bisect`` (the
  evaluation alone: the same derivatives, written as a table with provenance);
- ``evaluate+edges``: ``harness evaluate`` as the study runs it (with the bisection of
  exact edges, extra work the bare script does not do);
- ``run``: ``harness run CASE --backends tensorflow --no-cache`` (reference computed
  afresh, evaluation with edges, comparison, findings).

Each is timed from outside (wall seconds, and peak RSS from ``wait4``). Medians over the
rounds, the ratios to ``bare`` and the bitwise agreement of every value (the bare
script's ``.npz`` against the harness's evaluations table) are printed, and the
reference's verified point-orders per CPU second (one process, no cache).
Targets (issue 13): evaluate <= 1.2x bare, run <= 1.5x bare.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.backends.padding import padded  # noqa: E402
from harness.backends.tensorflow.source import METHODS_SOURCE, SourceWriter  # noqa: E402
from harness.config import load_config  # noqa: E402
from harness.numerics.stencils import base_step  # noqa: E402
from harness.stages.prepared import Selection, prepare  # noqa: E402

_RUNNER = """
def body_for(method, fn, partials):
    def body(*args):
        xs = dict(zip(NAMES, args))
        if method == "finite_difference":
            bases = [(p, BASES[(DTYPE.name, len(p))]) for p in partials]
            values = every_difference(fn, xs, bases)
        else:
            nest = {
                "reverse": reverse,
                "forward": forward,
                "forward_over_reverse": lambda f, x, c: forward(f, x, c, first_by_tape=True),
            }[method]
            values = every_chain(nest, fn, xs, partials)
        return [values.get(p) for p in partials]

    return body


def call(method, mode, fn, partials, inputs):
    body = body_for(method, fn, partials)
    if mode == "eager":
        return body(*inputs)
    signature = [tf.TensorSpec([len(inputs[0])], DTYPE)] * len(inputs)
    graph = tf.function(body, input_signature=signature, autograph=False)
    graph = graph.get_concrete_function()
    if mode == "function":
        with context.function_executor_type("SINGLE_THREADED_EXECUTOR"):
            return graph(*inputs)
    xla = tf.function(lambda *a: graph(*a), input_signature=signature, autograph=False,
                      jit_compile=True)
    return xla(*inputs)


def chains(partials):
    # The prefixes of one leaf per call, as the harness retries a call that raised.
    return [[p[:k] for k in range(len(p) + 1)] for p in partials]


def release():
    # As the harness does after each group of modes (compiled, then eager): drop the
    # forward-mode JVP helpers TensorFlow traced and its per-op trace counts, so that the
    # helpers do not pile up (ratio's full setting: 15.7 GB without this, 9.9 GB with).
    # With a batch size (the census's), the helpers serve the next cases: kept.
    forwardprop._TRACE_COUNT.clear()
    if not KEEP_HELPERS:
        forwardprop._jvp_function_cache.clear()
        gc.collect()


gc.freeze()  # as the harness does once TensorFlow is imported
points = np.load(sys.argv[1])
out = {}
for dtype in DTYPES:
    DTYPE = getattr(tf, dtype)
    fns = build()
    inputs = [tf.constant(points[f"{dtype}.{n}"], DTYPE) for n in NAMES]
    for method, partials in PARTIALS.items():
        for i, mode in enumerate(MODES):
            if i and (mode == "eager") != (MODES[i - 1] == "eager"):
                release()
            for name, fn in fns.items():
                key = f"{name}|{method}|{mode}|{dtype}"
                try:
                    values = call(method, mode, fn, partials, inputs)
                    got = dict(zip(partials, values))
                except Exception:
                    got = {}
                    for p in partials:
                        chain = [p[:k] for k in range(len(p) + 1)]
                        try:
                            got[p] = call(method, mode, fn, chain, inputs)[-1]
                        except Exception:
                            got[p] = None
                for p in partials:
                    if got.get(p) is not None:
                        value = np.asarray(got[p].numpy(), np.float64)
                        out[f"{key}|{''.join(p)}"] = value[: int(points[f"{dtype}.n"])]
        release()
np.savez(sys.argv[2], **out)
print(len(out), "arrays")
"""


def bare_script(
    case_path: str,
    setting: str,
    where: Path,
    selection: Selection | None = None,
    tag: str = "",
    study: dict | None = None,
) -> tuple[Path, Path]:
    """Write the bare script and its points for ``case_path`` in ``setting`` (narrowed by
    ``selection`` as ``harness evaluate --dtypes/--methods/--modes`` narrows it; ``study``:
    settings as ``harness evaluate --study`` takes them, its ``batch`` the size every
    batch is padded to, as :mod:`harness.backends.padding` pads it, the forward-mode
    helpers then kept from one case to the next as the harness keeps them)."""
    study = {"setting": setting, **(study or {})}
    prep = prepare(case_path, load_config(None, study), selection or Selection())
    s = prep.settings
    methods, modes, dtypes = prep.offered("tensorflow")
    names = list(prep.case.input_names)
    by_method = {
        m: [p for p in prep.case.partials if len(p) <= s.max_order.get(m, len(p))] for m in methods
    }
    w = SourceWriter()
    impls = {}
    for impl in prep.case.implementations:
        fname = w.name("impl")
        w.implementation(prep.case, impl.name, fname)
        impls[impl.name] = f"lambda **a: {fname}(**{{k + '_': v for k, v in a.items()}})"
    bases = {(d, k): base_step(d, k) for d in dtypes for k in range(5)}
    order = {"function": 0, "xla": 1, "eager": 2}  # the harness's order of modes
    build = "def build():\n" + textwrap.indent("\n\n\n".join(w.blocks), "    ") + "\n\n"
    build += "    return {" + ", ".join(f"{k!r}: {v}" for k, v in impls.items()) + "}\n"
    script = (
        f"# Bare TensorFlow: {prep.case.id}, setting {setting} (benchmarks/overhead.py).\n"
        "import contextlib\nimport gc\nimport itertools\nimport math\nimport sys\n\n"
        "import numpy as np\nimport tensorflow as tf\n"
        "from tensorflow.python.eager import context, forwardprop\n\n"
        "with contextlib.suppress(RuntimeError):  # set once in a process of many scripts\n"
        "    tf.config.threading.set_intra_op_parallelism_threads(1)\n"
        "    tf.config.threading.set_inter_op_parallelism_threads(1)\n"
        "tf.config.experimental.enable_op_determinism()\n\n"
        f"KEEP_HELPERS = {bool(s.batch)!r}\n"
        f"NAMES = {names!r}\nDTYPES = {list(dtypes)!r}\n"
        f"MODES = {sorted(modes, key=order.get)!r}\n"
        f"PARTIALS = {by_method!r}\nBASES = {bases!r}\nDTYPE = None\n"
        + METHODS_SOURCE
        + "\n\n"
        + build
        + _RUNNER
    )
    path = where / f"bare_{prep.case.id}_{setting}{tag}.py"
    path.write_text(script)
    npz = where / f"points_{prep.case.id}_{setting}{tag}.npz"
    arrays = {}
    for d in dtypes:
        columns = {n: prep.points[d][n].to_numpy(np.float64) for n in names}
        arrays.update({f"{d}.{n}": v for n, v in padded(columns, s.batch).items()})
        arrays[f"{d}.n"] = np.array(len(prep.points[d]))
        arrays[f"{d}.point"] = prep.points[d]["point"].to_numpy(np.int64)
    np.savez(npz, **arrays)
    return path, npz


def timed(argv: list[str], env: dict) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{argv} failed:\n{err[-2000:]}")
    return wall, usage.ru_maxrss / 1024


def agreement(npz: Path, points: Path, results: Path, case_id: str, piece: str = "*") -> dict:
    """Values of the bare script (``npz``; ``points``: its inputs, with each dtype's point
    ids) against the harness's evaluations (of ``piece``'s folder), bit for bit."""
    import pandas as pd

    bare = np.load(npz)
    inputs = np.load(points)
    folder = results / case_id / "tensorflow"
    table = pd.concat(pd.read_parquet(p) for p in folder.glob(f"{piece}/evaluations.parquet"))
    table = table[table.status == "value"]
    same = differ = missing = 0
    for (impl, method, mode, dtype, partial), rows in table.groupby(
        ["implementation", "method", "mode", "dtype", "partial"]
    ):
        key = f"{impl}|{method}|{mode}|{dtype}|{partial}"
        if key not in bare.files:
            missing += len(rows)
            continue
        got = rows.value.to_numpy(np.float64)
        position = {int(p): i for i, p in enumerate(inputs[f"{dtype}.point"])}
        want = bare[key][[position[int(p)] for p in rows.point]]
        equal = (got.view(np.uint64) == want.view(np.uint64)) | (np.isnan(got) & np.isnan(want))
        same += int(equal.sum())
        differ += int((~equal).sum())
    return {"identical": same, "different": differ, "not_in_bare": missing}


def run_parts(results: Path, case_id: str) -> dict:
    """Where the last ``run``'s time went, from its own timings tables: the reference
    stage, the evaluation, and of it the bisection of exact edges and the seconds the
    bisection spent inside TensorFlow's calls (the rest of it is judging)."""
    from harness.results import read_metadata

    ref = read_metadata(results / case_id / "reference.timings.parquet")
    parts = {"reference_s": ref.get("seconds")}
    evaluation = bisect = inside = 0.0
    for path in (results / case_id / "tensorflow").glob("*/timings.parquet"):
        stats = read_metadata(path).get("evaluation") or {}
        evaluation += stats.get("seconds") or 0.0
        bisect += stats.get("bisect_seconds") or 0.0
        inside += sum(((stats.get("bisection") or {}).get("tensorflow_seconds") or {}).values())
    parts["evaluation_s"] = round(evaluation, 1)
    parts["bisection_s"] = round(bisect, 1)
    parts["bisection_tensorflow_calls_s"] = round(inside, 1)
    return parts


def reference_rate(case_path: str, setting: str) -> dict:
    """Verified point-orders per CPU second of the reference (one process, no cache)."""
    from harness.reference.table import compute_reference
    from harness.reference.verify import ReferenceSettings

    prep = prepare(case_path, load_config(None, {"setting": setting}), Selection())
    s = prep.settings
    t0 = time.process_time()
    _, counts = compute_reference(
        prep.case,
        prep.points,
        ReferenceSettings(s.precision, s.verify_digits, s.max_precision),
        None,
    )
    cpu = time.process_time() - t0
    point_orders = counts["computed"] * len(prep.case.partials)
    return {
        "point_orders": point_orders,
        "cpu_seconds": round(cpu, 2),
        "per_cpu_second": round(point_orders / cpu),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="softplus,ratio")
    ap.add_argument("--settings", default="quick,full")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--keep", help="keep the scripts and results in this folder")
    ap.add_argument(
        "--variants",
        default="bare,evaluate,evaluate+edges,run",
        help="which to time (bare is always timed: the ratios are to it)",
    )
    args = ap.parse_args()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="overhead-"))
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    py = sys.executable
    report = {}
    for setting in args.settings.split(","):
        for case_id in args.cases.split(","):
            case_path = f"cases/{case_id}.yaml"
            script, npz = bare_script(case_path, setting, work)
            values = work / f"values_{case_id}_{setting}.npz"
            study = json.dumps({"setting": setting})
            res = {k: work / f"results_{case_id}_{setting}_{k}" for k in ("eval", "edges", "run")}
            harness = [py, "-m", "harness"]
            # The evaluation stages read the reference: computed once, outside the timing.
            chosen = {"bare", *args.variants.split(",")}
            needs = {"evaluate": "eval", "evaluate+edges": "edges"}
            for r in (res[needs[k]] for k in needs if k in chosen):
                subprocess.run(
                    [*harness, "reference", case_path, "--results", str(r), "--study", study],
                    cwd=ROOT,
                    env=env,
                    check=True,
                    capture_output=True,
                )
            variants = {
                "bare": [py, str(script), str(npz), str(values)],
                "evaluate": [
                    *harness,
                    "evaluate",
                    case_path,
                    "--backends",
                    "tensorflow",
                    "--no-bisect",
                    "--results",
                    str(res["eval"]),
                    "--study",
                    study,
                ],
                "evaluate+edges": [
                    *harness,
                    "evaluate",
                    case_path,
                    "--backends",
                    "tensorflow",
                    "--results",
                    str(res["edges"]),
                    "--study",
                    study,
                ],
                "run": [
                    *harness,
                    "run",
                    case_path,
                    "--backends",
                    "tensorflow",
                    "--no-cache",
                    "--results",
                    str(res["run"]),
                    "--setting",
                    setting,
                ],
            }
            variants = {k: v for k, v in variants.items() if k in chosen}
            times: dict[str, list[tuple[float, float]]] = {k: [] for k in variants}
            for i in range(args.rounds):
                names = list(variants) if i % 2 == 0 else list(reversed(variants))
                for name in names:
                    times[name].append(timed(variants[name], env))
                    print(
                        f"{case_id} {setting} round {i + 1} {name}: "
                        f"{times[name][-1][0]:.1f} s, {times[name][-1][1]:.0f} MB",
                        flush=True,
                    )
            med = {k: statistics.median(t for t, _ in v) for k, v in times.items()}
            entry = {
                "wall_s": {k: [round(t, 1) for t, _ in v] for k, v in times.items()},
                "median_s": {k: round(v, 1) for k, v in med.items()},
                "ratio_to_bare": {k: round(v / med["bare"], 2) for k, v in med.items()},
                "peak_mb": {k: round(max(m for _, m in v)) for k, v in times.items()},
                "values": agreement(values, npz, res["eval"], case_id)
                if "evaluate" in times
                else {},
                "run_parts": run_parts(res["run"], case_id) if "run" in times else {},
                "reference": reference_rate(case_path, setting),
            }
            report[f"{case_id}/{setting}"] = entry
            print(json.dumps({f"{case_id}/{setting}": entry}, indent=1), flush=True)
    print(f"scripts and results: {work}")
    (work / "overhead.json").write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    raise SystemExit(main())
