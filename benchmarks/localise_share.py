"""What the localisation costs in a finished study, from that study's own records.

    python benchmarks/localise_share.py [STUDY_DIR=.]

Reads Snakemake's benchmark files (``logs/**/*.benchmark.tsv``: each job's wall seconds)
and the evaluation jobs' timings (``results/*/*/*/timings.parquet``: the seconds the
localisation took inside them), and prints the jobs' seconds per rule and the
localisation's share. Both come from the same run, so the share does not depend on how
fast the machine was that day (this 2-core machine ran the same cold study in 300 s and
in 584 s on one afternoon)."""

from __future__ import annotations

import glob
import sys
from pathlib import Path

from harness.results import read_metadata


def shares(study: Path) -> dict[str, float]:
    rules: dict[str, float] = {}
    for p in glob.glob(str(study / "logs" / "**" / "*.benchmark.tsv"), recursive=True):
        rule = Path(p).name.split(".")[0]
        rows = Path(p).read_text().splitlines()[1:]
        rules[rule] = rules.get(rule, 0.0) + sum(float(r.split("\t")[0]) for r in rows if r)
    local = sum(
        (read_metadata(p).get("evaluation") or {}).get("localise_seconds") or 0.0
        for p in glob.glob(str(study / "results" / "*" / "*" / "*" / "timings.parquet"))
    )
    return {**rules, "localise": local}


def main() -> None:
    study = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    s = shares(study)
    local = s.pop("localise")
    total = sum(s.values())
    evaluate = s.get("evaluate_case", 0.0)
    for rule, seconds in sorted(s.items(), key=lambda kv: -kv[1]):
        print(f"{rule:24s} {seconds:7.1f} s")
    print(f"{'all jobs':24s} {total:7.1f} s")
    if total - local <= 0 or evaluate - local <= 0:
        print(f"localisation: {local:.1f} s; no job records to compare it with")
        return
    print(
        f"localisation: {local:.1f} s, inside the evaluation jobs' {evaluate:.1f} s; it adds "
        f"{100 * local / (evaluate - local):.1f}% to them and {100 * local / (total - local):.1f}% "
        "to the study's jobs (target: at most 15%)"
    )


if __name__ == "__main__":
    main()
