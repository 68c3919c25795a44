#!/usr/bin/env bash
# Issue-12 speed benchmark: the default study with three back ends against TensorFlow only.
#   [REV=commit] bash benchmarks/backends_speed.sh [ROUNDS=3] [CORES=2]
# Each round runs both variants from a cold start (empty results/, no reference cache),
# interleaved (TensorFlow only first in odd rounds, last in even rounds) in two copies of
# the study folder, then three no-op reruns of the three-back-end study. Prints the
# medians and the ratio. Targets: three back ends <= 2x TensorFlow only; no-op <= 5 s.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
CORES=${2:-2}
SNAKEMAKE=${SNAKEMAKE:-$(command -v snakemake || echo "$PWD/.venv/bin/snakemake")}
export PATH="$(dirname "$SNAKEMAKE"):$PATH" TF_CPP_MIN_LOG_LEVEL=2
work=$(mktemp -d)
# Each variant runs the committed tree (REV, default HEAD) from its own folder: the jobs'
# `python -m harness` imports that folder's package, whatever the checkout holds meanwhile.
REV=${REV:-HEAD}
for variant in tf all; do
  mkdir -p "$work/$variant"
  git archive "$REV" | tar -x -C "$work/$variant"
done
sed -i 's/^backends: .*/backends: [tensorflow]/' "$work/tf/config/study.yaml"
run() {  # variant round
  local dir="$work/$1"
  rm -rf "$dir/results" "$dir/reports" "$dir/logs" "$dir/.snakemake"
  local t0=$(date +%s.%N)
  (cd "$dir" && "$SNAKEMAKE" --cores "$CORES" --quiet all >"$work/$1.$2.log" 2>&1)
  echo "$(date +%s.%N) - $t0" | bc >"$work/$1.$2.wall"
}
for i in $(seq "$ROUNDS"); do
  if [ $((i % 2)) -eq 1 ]; then run tf "$i"; run all "$i"; else run all "$i"; run tf "$i"; fi
done
for k in 1 2 3; do
  t0=$(date +%s.%N)
  (cd "$work/all" && "$SNAKEMAKE" --cores "$CORES" --quiet all >/dev/null 2>&1)
  echo "$(date +%s.%N) - $t0" | bc >"$work/noop.$k.wall"
done
python3 - "$work" "$ROUNDS" <<'PY'
import statistics, sys
from pathlib import Path
work, rounds = Path(sys.argv[1]), int(sys.argv[2])
read = lambda p: float(p.read_text())
tf = [read(work / f"tf.{i}.wall") for i in range(1, rounds + 1)]
three = [read(work / f"all.{i}.wall") for i in range(1, rounds + 1)]
noop = [read(work / f"noop.{k}.wall") for k in (1, 2, 3)]
jobs = sorted(p.parent.name + "/" + p.name for p in (work / "all" / "logs").glob("*/evaluate_case*.log"))
print(f"rounds: {rounds}")
print("TensorFlow only (s):", [round(t, 1) for t in tf], "median", round(statistics.median(tf), 1))
print("three back ends (s):", [round(t, 1) for t in three], "median", round(statistics.median(three), 1))
ratio = statistics.median(three) / statistics.median(tf)
print(f"ratio: {ratio:.2f} (target <= 2)")
print("no-op rerun (s):", [round(t, 2) for t in noop], "median", round(statistics.median(noop), 2),
      "(target <= 5)")
print(f"evaluate jobs (three back ends): {len(jobs)}")
PY
echo "work folder: $work"
