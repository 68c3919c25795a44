"""Issue-58 benchmark: ``harness.check`` of a user's function, from a fresh process.

Usage: python benchmarks/check_speed.py [--frameworks jax,torch] [--rounds 1]

For each framework, in a fresh process (imports included), with an empty per-user cache
(cold) and then with the cache the cold run left (warm): the seconds until the first
verdicts (the first method and dtype judged, which ``harness check`` prints as it goes)
and until ``harness.check`` returns, for the naive log1pexp of examples/ (one input, the default
sweep ``log(1e-30, 1e30, signs="both")``, 200 points per sign, orders 1-4, float32 and
float64, every method and the default modes), and the values it judged. Beside it, at
the same points in float64: ``jax.test_util.check_grads(f, (x,), order=2)`` and
``torch.autograd.gradgradcheck`` (each in a fresh process, imports included), and the
seconds per checked value of each (a value: one derivative of one order at one point,
by one method and mode, in one dtype). Goal: under 20 s to the verdicts on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

CHECK = """
import json, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {examples!r})
import harness
import {module} as m

class First:
    # harness.check's progress: when the first verdicts came (harness check prints them).
    first = None
    def __call__(self, stage, done, total):
        pass
    def verdicts(self, backend, method, dtype, rows):
        if self.first is None:
            self.first = time.perf_counter() - t0

first = First()
result = harness.check(m.naive_log1pexp, {framework!r}, progress=first)
print(json.dumps({{"seconds": time.perf_counter() - t0, "values": len(result.rows),
                  "first": first.first,
                  "judged": int((~result.rows.outcome.isin(["not_applicable"])).sum())}}))
"""

POINTS = "np.concatenate([-np.logspace(30, -30, 200), np.logspace(-30, 30, 200)])"

JAX_BASELINE = f"""
import json, time
t0 = time.perf_counter()
import numpy as np
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
from jax.test_util import check_grads
x = jnp.asarray({POINTS})
f = lambda x: jnp.log(1.0 + jnp.exp(x))
ok = True
try:
    check_grads(f, (x,), order=2, modes=["fwd", "rev"])
except AssertionError:
    ok = False
print(json.dumps({{"seconds": time.perf_counter() - t0, "values": 400 * 2 * 2, "passed": ok}}))
"""

TORCH_BASELINE = f"""
import json, time
t0 = time.perf_counter()
import numpy as np
import torch
x = torch.tensor({POINTS}, dtype=torch.float64, requires_grad=True)
f = lambda x: torch.log(1 + torch.exp(x))
try:
    ok = torch.autograd.gradgradcheck(f, (x,), raise_exception=False)
except Exception:
    ok = False
print(json.dumps({{"seconds": time.perf_counter() - t0, "values": 400 * 2, "passed": bool(ok)}}))
"""


def run(code: str, env: dict) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT
    )
    if out.returncode != 0:
        raise SystemExit(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frameworks", default="jax,torch")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    modules = {"jax": "jax_functions", "torch": "torch_functions",
               "tensorflow": "tensorflow_functions"}  # fmt: skip
    baselines = {"jax": ("check_grads(order=2)", JAX_BASELINE),
                 "torch": ("gradgradcheck", TORCH_BASELINE)}  # fmt: skip
    for framework in args.frameworks.split(","):
        for _ in range(args.rounds):
            with tempfile.TemporaryDirectory() as cache:
                env = {**os.environ, "HARNESS_CACHE": cache}
                code = CHECK.format(
                    examples=str(ROOT / "examples"), module=modules[framework],
                    framework=framework,
                )  # fmt: skip
                t = time.perf_counter()
                cold = run(code, env)
                warm = run(code, env)
                wall = time.perf_counter() - t
            for label, r in (("cold", cold), ("warm", warm)):
                per = r["seconds"] / r["judged"] * 1e3
                print(
                    f"{framework} harness.check ({label} cache): first verdicts after "
                    f"{r['first']:.2f} s, all {r['seconds']:.2f} s, "
                    f"{r['judged']} values judged ({per:.3f} ms each)"
                )
            print(f"  (both runs {wall:.1f} s wall)")
            if framework in baselines:
                name, code = baselines[framework]
                b = run(code, dict(os.environ))
                per = b["seconds"] / b["values"] * 1e3
                print(
                    f"{framework} {name}: {b['seconds']:.2f} s for {b['values']} derivative "
                    f"values ({per:.3f} ms each), passed={b['passed']}"
                )


if __name__ == "__main__":
    main()
