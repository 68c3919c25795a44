"""Reruns are bitwise identical: two runs of a case (fresh processes, the second with a
warm reference cache) write byte-identical result tables; what differs from run to run
(seconds, the time, what the cache held) is in the timings tables only."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.results import read_metadata, read_table

from .conftest import ROOT

pytestmark = pytest.mark.slow

#: Every table of a case but the timings.
RESULT_TABLES = (
    "reference.parquet",
    "errors.parquet",
    "findings.parquet",
    "summary.parquet",
    "*/*/evaluations.parquet",
    "*/*/edges.parquet",
)


#: Softplus as the seed writes it and the stable kernel, every method to order 4 in the
#: three frameworks, in float64: the naive form's order 4 in reverse mode under
#: tf.function is where values differed between processes (1 to 5 ulps at 6 of 48
#: points in about one run of five, on TensorFlow's default executor; 56 values in
#: float32 and float64 in an earlier series with several threads).
CASE = """\
title: softplus, bitwise reruns
source: test
inputs:
  x: {log: {from: 0.01, to: 120, count: 24, signs: both}}
function: log(1 + exp(x))
reference: {expression: softplus(x)}
derivatives: {wrt: x, orders: [1, 2, 3, 4]}
implementations:
  naive: {expression: log(1 + exp(x))}
  stable: {expression: softplus(x)}
dtypes: [float64]
"""


def _run(results: Path) -> None:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    case = results.parent / "softplus.yaml"
    case.write_text(CASE)
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "run", str(case), "--results", str(results)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _tables(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for pattern in RESULT_TABLES
        for p in sorted(folder.glob(pattern))
    }


def test_two_runs_write_byte_identical_tables(tmp_path):
    results = tmp_path / "results"
    _run(results)
    first = _tables(results / "softplus")
    assert len(first) == 4 + 3 * 2  # case tables, then each back end's evaluations and edges
    timings = read_table(results / "softplus" / "tensorflow" / "all" / "timings.parquet")
    # JAX kept what it compiled, in one folder for this machine and JAX version.
    compiled = list((results / ".cache" / "compiled" / "jax").glob("*/*"))
    assert compiled and len({p.parent for p in compiled}) == 1
    _run(results)  # the reference and compilation caches are warm now: no table may say so
    second = _tables(results / "softplus")
    # The second run found every program it needed there and compiled nothing new.
    assert sorted((results / ".cache" / "compiled" / "jax").glob("*/*")) == sorted(compiled)
    assert set(first) == set(second)
    # Every back end's evaluation is there (JAX and PyTorch where installed).
    assert {"errors.parquet", "tensorflow/all/evaluations.parquet"} <= set(first)
    differ = sorted(name for name in first if first[name] != second[name])
    assert differ == []
    # The timings went elsewhere: seconds per method, mode and dtype, and the run's facts.
    assert {"backend", "piece", "method", "mode", "dtype", "seconds"} <= set(timings.columns)
    assert (timings.seconds > 0).all()
    facts = read_metadata(results / "softplus" / "reference.timings.parquet")
    assert facts["reference_counts"]["cached"] > 0 and "created" in facts
    meta = read_metadata(results / "softplus" / "errors.parquet")
    assert "created" not in meta and "seconds" not in read_table(
        results / "softplus" / "errors.parquet"
    )
