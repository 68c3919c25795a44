#!/usr/bin/env bash
# Issue-25 cost benchmark: what the root causes (or the localisation alone) add to the
# default study.
#   BASE=commit [REV=commit] [BASE_CONFIG="key=value ..."] \
#     bash benchmarks/root_causes_cost.sh [ROUNDS=1] [CORES=2]
# Each round runs the default study (three back ends) from a cold start (empty results/,
# no reference cache) at BASE and at REV (default HEAD), interleaved, each from its own
# copy of the committed tree; BASE_CONFIG is passed to the BASE runs as Snakemake's
# --config. Two uses:
#   BASE=2168514                              the commit before the root causes;
#   BASE=HEAD BASE_CONFIG="localise=False"    the same tree without the localisation.
# Prints the wall times and their ratio (target: at most 1.15), then, from the last REV
# run's own records, each rule's job seconds and the localisation's share
# (benchmarks/localise_share.py): the walls of two runs move with the machine's speed
# that hour (300 s and 584 s for the same cold study here on 2026-11-25), the shares
# within one run do not.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-1}
CORES=${2:-2}
SNAKEMAKE=${SNAKEMAKE:-$(command -v snakemake || echo "$PWD/.venv/bin/snakemake")}
export PATH="$(dirname "$SNAKEMAKE"):$PATH" TF_CPP_MIN_LOG_LEVEL=2
PYTHON=${PYTHON:-$(dirname "$SNAKEMAKE")/python}
[ -x "$PYTHON" ] || PYTHON=python3
: "${BASE:?set BASE to the commit to compare with}"
REV=${REV:-HEAD}
read -r -a base_config <<<"${BASE_CONFIG:-}"
work=$(mktemp -d)
mkdir -p "$work/base" "$work/rev"
git archive "$BASE" | tar -x -C "$work/base"
git archive "$REV" | tar -x -C "$work/rev"
run() {  # variant round
  local dir="$work/$1" extra=()
  if [ "$1" = base ] && [ ${#base_config[@]} -gt 0 ]; then extra=(--config "${base_config[@]}"); fi
  rm -rf "$dir/results" "$dir/reports" "$dir/logs" "$dir/.snakemake"
  local t0=$(date +%s.%N)
  (cd "$dir" && "$SNAKEMAKE" --cores "$CORES" --quiet all "${extra[@]}" >"$work/$1.$2.log" 2>&1)
  echo "$(date +%s.%N) - $t0" | bc >"$work/$1.$2.wall"
}
for i in $(seq "$ROUNDS"); do
  if [ $((i % 2)) -eq 1 ]; then run base "$i"; run rev "$i"; else run rev "$i"; run base "$i"; fi
done
"$PYTHON" - "$work" "$ROUNDS" <<'PY'
import statistics, sys
from pathlib import Path
work, rounds = Path(sys.argv[1]), int(sys.argv[2])
read = lambda p: float(p.read_text())
base = [read(work / f"base.{i}.wall") for i in range(1, rounds + 1)]
rev = [read(work / f"rev.{i}.wall") for i in range(1, rounds + 1)]
print(f"rounds: {rounds}")
print("BASE (s):", [round(t, 1) for t in base], "median", round(statistics.median(base), 1))
print("REV (s):", [round(t, 1) for t in rev], "median", round(statistics.median(rev), 1))
print(f"ratio: {statistics.median(rev) / statistics.median(base):.3f} (target <= 1.15)")
PY
echo "the last REV run, from its own records:"
PYTHONPATH="$PWD" "$PYTHON" benchmarks/localise_share.py "$work/rev"
echo "work folder: $work"
