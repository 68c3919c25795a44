"""Reference speed: mpmath's two-precision verification against Arb's certification.

For each case, the study's points (every dtype's representation, unique) and every
partial of the case, CPU seconds of:

- ``mpmath verify``: ``verify_point`` (mpmath jets at 50 then 100 digits, doubling until
  two agree), point by point;
- ``Arb certify``: ``certify_points`` (Arb balls from 128 bits, doubling until every ball
  decides every dtype), all points at once;
- ``harness store``: what the reference stage runs, ``ReferenceStore.ensure`` (Arb first,
  mpmath where no ball settles a value), without and with the mpmath cross-check of one
  point in ``ReferenceSettings.cross_check``;

and the point-orders (points x partials) each settles per CPU-second: the best of 7 rounds
(3 for mpmath). No cache: every point is computed. With ``--stage``, also the CPU seconds of the whole reference stage
(``harness.stages.reference.reference_stage``: values, error model, flushed inputs, tables) of
every case of the default study, cold cache.

    .venv/bin/python benchmarks/reference_speed.py [--stage] [CASE ...]   (default: softplus ratio)
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from harness.cases.load import load_case
from harness.cases.points import generate, represent
from harness.reference.certify import certify_points
from harness.reference.table import ReferenceStore
from harness.reference.verify import ReferenceSettings, evaluator, verify_point

DTYPES = ("float16", "bfloat16", "float32", "float64")
#: Each measurement is the best of this many rounds (CPU time of a 0.05 s batch varies by
#: 30% from round to round on a shared machine; the best is the repeatable figure).
ROUNDS = 7


def unique_points(case) -> list[dict[str, float]]:
    points = generate(case)
    seen: dict[tuple, None] = {}
    for dtype in DTYPES:
        frame = represent(points, case.input_names, dtype)
        for row in frame[list(case.input_names)].itertuples(index=False, name=None):
            seen.setdefault(tuple(float(v) for v in row), None)
    return [dict(zip(case.input_names, key)) for key in seen]


def _cpu(fn):
    t0 = time.process_time()
    out = fn()
    return out, time.process_time() - t0


def _best_cpu(fn, rounds: int = ROUNDS):
    """The last result and the fewest CPU seconds of ``rounds`` calls (the first call
    also pays one-time costs: Arb caches constants such as log 2 per precision)."""
    runs = [_cpu(fn) for _ in range(rounds)]
    return runs[-1][0], min(cpu for _, cpu in runs)


def measure(name: str) -> None:
    case = load_case(Path("cases") / f"{name}.yaml")
    points = unique_points(case)
    keys = [tuple(p.values()) for p in points]
    partials = list(case.partials)
    n = len(points) * len(partials)
    settings = ReferenceSettings()
    fn = evaluator(case)
    verified, mp = _best_cpu(lambda: [verify_point(fn, p, partials, settings) for p in points], 3)
    balls, arb = _best_cpu(lambda: certify_points(case, points, partials))
    print(f"{name}: {len(points)} points x {len(partials)} partials = {n} point-orders")
    n_verified = sum(v.value is not None for got in verified for v in got.values())
    n_balls = sum(b.settled for got in balls for b in got.values())
    print(f"  mpmath verify: {mp:6.2f} CPU s, {n_verified} verified, {n / mp:9,.0f} per CPU s")
    print(
        f"  Arb certify:   {arb:6.2f} CPU s, {n_balls} certified, {n / arb:9,.0f} per CPU s"
        f" ({mp / arb:.1f}x)"
    )
    for every in (0, settings.cross_check):
        fresh = ReferenceSettings(cross_check=every)  # a new store each round: no memo
        _, cpu = _best_cpu(
            lambda s=fresh: ReferenceStore(case, s, None).ensure(keys, partials, cross_check=True)
        )
        label = "no cross-check" if not every else f"cross-check 1 in {every}"
        print(f"  harness store, {label + ':':22s} {cpu:6.2f} CPU s, {n / cpu:9,.0f} per CPU s")


def stage() -> None:
    """The reference stage of every case of the default study, cold cache."""
    from harness.stages.prepared import prepare
    from harness.stages.reference import reference_stage

    total = 0.0
    with tempfile.TemporaryDirectory() as results:
        for path in sorted(Path("cases").glob("*.yaml")):
            prep = prepare(path)
            (table, _), cpu = _cpu(lambda p=prep: reference_stage(p, results, cache=False))
            total += cpu
            print(f"  {path.stem:24s} {cpu:6.2f} CPU s, {len(table):6d} rows")
    print(f"reference stage of the default study: {total:.2f} CPU s")


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--stage" in args:
        args.remove("--stage")
        stage()
    for name in args or ["softplus", "ratio"]:
        measure(name)
