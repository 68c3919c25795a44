#!/usr/bin/env bash
# Issue-25 cost benchmark: what the root causes add to the default study.
#   BASE=commit [REV=commit] bash benchmarks/root_causes_cost.sh [ROUNDS=1] [CORES=2]
# Each round runs the default study (three back ends) from a cold start (empty results/,
# no reference cache) at BASE (before the root causes) and at REV (default HEAD),
# interleaved, each from its own copy of the committed tree. Prints the wall times, their
# ratio, and where REV's extra time goes: the localisation inside the evaluation jobs
# (localise_seconds in their timings), the reproduce_root_causes jobs and the compare
# jobs (Snakemake's benchmark files). Target: the root causes add at most 15%.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-1}
CORES=${2:-2}
SNAKEMAKE=${SNAKEMAKE:-$(command -v snakemake || echo "$PWD/.venv/bin/snakemake")}
export PATH="$(dirname "$SNAKEMAKE"):$PATH" TF_CPP_MIN_LOG_LEVEL=2
: "${BASE:?set BASE to the commit before the root causes}"
REV=${REV:-HEAD}
work=$(mktemp -d)
mkdir -p "$work/base" "$work/rev"
git archive "$BASE" | tar -x -C "$work/base"
git archive "$REV" | tar -x -C "$work/rev"
run() {  # variant round
  local dir="$work/$1"
  rm -rf "$dir/results" "$dir/reports" "$dir/logs" "$dir/.snakemake"
  local t0=$(date +%s.%N)
  (cd "$dir" && "$SNAKEMAKE" --cores "$CORES" --quiet all >"$work/$1.$2.log" 2>&1)
  echo "$(date +%s.%N) - $t0" | bc >"$work/$1.$2.wall"
}
for i in $(seq "$ROUNDS"); do
  if [ $((i % 2)) -eq 1 ]; then run base "$i"; run rev "$i"; else run rev "$i"; run base "$i"; fi
done
(cd "$work/rev" && python3 - "$work" "$ROUNDS") <<'PY'
import glob, statistics, sys
from pathlib import Path
from harness.results import read_metadata
work, rounds = Path(sys.argv[1]), int(sys.argv[2])
read = lambda p: float(p.read_text())
base = [read(work / f"base.{i}.wall") for i in range(1, rounds + 1)]
rev = [read(work / f"rev.{i}.wall") for i in range(1, rounds + 1)]
print(f"rounds: {rounds}")
print("before the root causes (s):", [round(t, 1) for t in base], "median", round(statistics.median(base), 1))
print("with them (s):", [round(t, 1) for t in rev], "median", round(statistics.median(rev), 1))
print(f"ratio: {statistics.median(rev) / statistics.median(base):.3f} (target <= 1.15)")
# Where the last round's time went (CPU seconds of jobs, one core each).
local = sum(
    (read_metadata(p).get("evaluation") or {}).get("localise_seconds") or 0
    for p in glob.glob(str(work / "rev/results/*/*/*/timings.parquet"))
)
evaluate = sum(
    (read_metadata(p).get("evaluation") or {}).get("seconds") or 0
    for p in glob.glob(str(work / "rev/results/*/*/*/timings.parquet"))
)
def job_seconds(pattern):
    total = 0.0
    for p in glob.glob(str(work / "rev" / pattern)):
        lines = Path(p).read_text().splitlines()[1:]
        total += sum(float(line.split("\t")[0]) for line in lines if line.strip())
    return total
print(f"localisation inside the evaluation jobs: {local:.1f} s (their evaluation: {evaluate:.1f} s)")
print(f"reproduce_root_causes jobs: {job_seconds('logs/reproduce_root_causes.*.benchmark.tsv'):.1f} s")
print(f"compare_case jobs: {job_seconds('logs/*/compare_case.benchmark.tsv'):.1f} s")
print(f"collect_results: {job_seconds('logs/collect_results.benchmark.tsv'):.1f} s")
PY
echo "work folder: $work"
