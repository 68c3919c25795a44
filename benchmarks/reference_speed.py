"""Reference speed: mpmath's two-precision verification against Arb's certification.

For each case, the study's points (every dtype's representation, unique), every partial
of the case: CPU seconds of ``verify_point`` (mpmath jets at 50 then 100 digits, doubling
until two agree) and of ``certify_point`` (Arb ball jets from 128 bits, doubling until
every ball decides every dtype), and the point-orders (points x partials) each settles
per CPU-second. No cache: every point is computed.

    .venv/bin/python benchmarks/reference_speed.py [CASE ...]   (default: softplus ratio)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from harness.cases.load import load_case
from harness.cases.points import generate, represent
from harness.reference.certify import certify_point
from harness.reference.verify import ReferenceSettings, evaluator, verify_point

DTYPES = ("float16", "bfloat16", "float32", "float64")


def unique_points(case) -> list[dict[str, float]]:
    points = generate(case)
    seen: dict[tuple, None] = {}
    for dtype in DTYPES:
        frame = represent(points, case.input_names, dtype)
        for row in frame[list(case.input_names)].itertuples(index=False, name=None):
            seen.setdefault(tuple(float(v) for v in row), None)
    return [dict(zip(case.input_names, key)) for key in seen]


def measure(name: str) -> None:
    case = load_case(Path("cases") / f"{name}.yaml")
    points = unique_points(case)
    partials = list(case.partials)
    fn = evaluator(case)
    settings = ReferenceSettings()
    t0 = time.process_time()
    verified = [verify_point(fn, p, partials, settings) for p in points]
    mp_seconds = time.process_time() - t0
    t0 = time.process_time()
    balls = [certify_point(case, p, partials) for p in points]
    arb_seconds = time.process_time() - t0
    n = len(points) * len(partials)
    n_verified = sum(v.value is not None for got in verified for v in got.values())
    n_balls = sum(b.lower is not None for got in balls for b in got.values())
    print(
        f"{name}: {len(points)} points x {len(partials)} partials = {n} point-orders\n"
        f"  mpmath verify: {mp_seconds:7.2f} CPU s, {n_verified} verified, "
        f"{n / mp_seconds:10,.0f} point-orders per CPU s\n"
        f"  Arb certify:   {arb_seconds:7.2f} CPU s, {n_balls} balls, "
        f"{n / arb_seconds:10,.0f} point-orders per CPU s ({mp_seconds / arb_seconds:.1f}x)"
    )


if __name__ == "__main__":
    for name in sys.argv[1:] or ["softplus", "ratio"]:
        measure(name)
