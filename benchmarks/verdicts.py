"""Issue-11 measurement: how many verdicts fail, by cause, and how many findings state them.

Usage: python benchmarks/verdicts.py [RESULTS=results]

Reads every ``RESULTS/<case>/errors.parquet`` (and the findings, where the results have
them) and prints:

- summary combinations (implementation x method x mode x dtype x derivative) and those
  with unexpected failures;
- rows judged, and the unexpected-failure rows;
- rows by cause: finite differences ``ok`` by their error model that the autodiff
  budget would have failed (``model``), rows the platform's subnormal flush explains
  (``flushed``), and the unexpected failures left (``real``), with how many of those
  are finite differences or have a subnormal input or true value;
- distinct unexpected findings (statements, as the index lists them) and findings per
  implementation, expected findings.

Works on results of earlier versions too (no findings, no ``flushed``): what it cannot
count there it prints as "-".
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.config import load_config  # noqa: E402
from harness.numerics.floats import FORMATS  # noqa: E402

FAILURES = ("inaccurate", "wrong", "nan", "inf", "zero", "missing", "error")
# The autodiff ulp budget per dtype and order (config/study.yaml), which finite
# differences were judged at before their error model.
TABLE = load_config(ROOT / "config" / "study.yaml").data["tolerances"]


def main(results: Path) -> None:
    frames = []
    for path in sorted(results.glob("*/errors.parquet")):
        cols = [
            "case",
            "method",
            "dtype",
            "order",
            "outcome",
            "expected",
            "subnormal",
            "reference_rounded",
            "ulps",
        ]
        frames.append(pd.read_parquet(path, columns=cols))
    e = pd.concat(frames, ignore_index=True)
    outcome = e["outcome"].astype(str)
    failing = outcome.isin(FAILURES)
    unexpected = failing & (e["expected"] == "")
    fd = e["method"] == "finite_difference"
    budget = np.array([TABLE[d][o] for d, o in zip(e["dtype"], e["order"])], dtype=float)
    ulps = pd.to_numeric(e["ulps"], errors="coerce").to_numpy(np.float64)
    model = fd & (outcome == "ok") & (e["order"] > 0) & (ulps > budget)
    rounded = e["reference_rounded"].to_numpy(np.float64)
    tiny = np.zeros(len(e), dtype=bool)
    for d, fmt in FORMATS.items():
        hit = (e["dtype"] == d).to_numpy()
        tiny |= hit & (np.abs(rounded) > 0) & (np.abs(rounded) < fmt.smallest_normal)
    summary = pd.read_parquet(results / "summary.parquet")
    print(f"results: {results}")
    print(
        f"summary combinations: {len(summary):,}; with unexpected failures: "
        f"{int((summary['unexpected_failures'] > 0).sum()):,}"
    )
    print(f"rows judged: {len(e):,}; unexpected-failure rows: {int(unexpected.sum()):,}")
    print("rows by cause:")
    print(
        f"  model   (finite differences ok by their error model, over the autodiff budget): "
        f"{int(model.sum()):,}"
    )
    flushed = int((outcome == "flushed").sum()) if (outcome == "flushed").any() else "-"
    print(
        f"  flushed (the platform's subnormal flush explains them): {flushed:,}"
        if flushed != "-"
        else "  flushed: -"
    )
    real = unexpected
    print(
        f"  real    (unexpected failures left): {int(real.sum()):,}; of which finite "
        f"differences {int((real & fd).sum()):,}, subnormal input "
        f"{int((real & ~fd & e['subnormal']).sum()):,}, subnormal truth "
        f"{int((real & ~fd & ~e['subnormal'] & tiny).sum()):,}"
    )
    found = results / "findings.parquet"
    if found.exists():
        from harness.judge.findings_text import statements

        f = pd.read_parquet(found)
        s = statements(f)
        un = s[s["expected"] == "unexpected"]
        print(
            f"findings: {len(un):,} distinct unexpected (statements), "
            f"{int((f['expected'] == 'unexpected').sum()):,} per implementation; "
            f"{int((s['expected'] == 'expected').sum()):,} expected"
        )
        print("unexpected findings by outcome:", un["outcome"].value_counts().to_dict())
    else:
        print("findings: -")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "results")
