#!/usr/bin/env bash
# Issue-25 cost benchmark: what the localisation adds to the default study.
#   [REV=commit] bash benchmarks/localise_cost.sh [ROUNDS=1] [CORES=2]
# Each round runs the default study (three back ends) from a cold start (empty results/,
# no reference cache) twice from one copy of the committed tree REV (default HEAD): with
# the localisation (the default) and with `localise=False` (Snakemake's --config: every
# other job is the same), in alternating order. Prints the wall times, their ratio (the
# target: at most 1.15) and, from the localised run's own records, the jobs' seconds and
# the localisation's share (benchmarks/localise_share.py): the walls of two runs differ
# with the machine's speed that hour (300 s and 584 s for the same cold study here), the
# share within one run does not.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-1}
CORES=${2:-2}
SNAKEMAKE=${SNAKEMAKE:-$(command -v snakemake || echo "$PWD/.venv/bin/snakemake")}
export PATH="$(dirname "$SNAKEMAKE"):$PATH" TF_CPP_MIN_LOG_LEVEL=2
REV=${REV:-HEAD}
work=$(mktemp -d)
mkdir -p "$work/tree"
git archive "$REV" | tar -x -C "$work/tree"
run() {  # variant round
  local dir="$work/tree" extra=()
  [ "$1" = off ] && extra=(--config localise=False)
  rm -rf "$dir/results" "$dir/reports" "$dir/logs" "$dir/.snakemake"
  local t0=$(date +%s.%N)
  (cd "$dir" && "$SNAKEMAKE" --cores "$CORES" --quiet all "${extra[@]}" >"$work/$1.$2.log" 2>&1)
  echo "$(date +%s.%N) - $t0" | bc >"$work/$1.$2.wall"
  if [ "$1" = on ]; then
    (cd "$dir" && python3 benchmarks/localise_share.py . >"$work/on.$2.share")
  fi
}
for i in $(seq "$ROUNDS"); do
  if [ $((i % 2)) -eq 1 ]; then run off "$i"; run on "$i"; else run on "$i"; run off "$i"; fi
done
python3 - "$work" "$ROUNDS" <<'PY'
import statistics, sys
from pathlib import Path
work, rounds = Path(sys.argv[1]), int(sys.argv[2])
read = lambda p: float(p.read_text())
off = [read(work / f"off.{i}.wall") for i in range(1, rounds + 1)]
on = [read(work / f"on.{i}.wall") for i in range(1, rounds + 1)]
print(f"rounds: {rounds}")
print("localise=false (s):", [round(t, 1) for t in off], "median", round(statistics.median(off), 1))
print("localise=true (s):", [round(t, 1) for t in on], "median", round(statistics.median(on), 1))
print(f"ratio: {statistics.median(on) / statistics.median(off):.3f} (target <= 1.15)")
for i in range(1, rounds + 1):
    print(f"round {i}, from the run's own records:")
    print((work / f"on.{i}.share").read_text())
PY
rm -rf "$work"
