#!/usr/bin/env bash
# Issue-3 speed benchmark: the full default study on this machine.
#   bash benchmarks/study.sh [RUNS=3] [CORES=2]
# Per run: a cold study from an empty results/ (and no reference cache), then a no-op
# rerun. Reports the medians of the wall times, the largest peak memory of any job (from
# Snakemake's benchmark: files, max_rss in MB), and how many jobs started TensorFlow
# (only evaluate_case imports it; compute_reference is checked not to).
# Targets: cold <= 180 s with 2 cores; no-op <= 5 s; TensorFlow starts <= number of
# cases; peak memory per job <= 1.5 GB.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
CORES=${2:-2}
SNAKEMAKE=${SNAKEMAKE:-$(command -v snakemake || echo .venv/bin/snakemake)}
export PATH="$(dirname "$SNAKEMAKE"):$PATH" TF_CPP_MIN_LOG_LEVEL=2
[ -x /usr/bin/time ] || { echo "needs GNU time (apt-get install time)" >&2; exit 2; }
out=$(mktemp -d)
cases=$(ls cases/*.yaml | wc -l)
for i in $(seq "$RUNS"); do
  rm -rf results reports logs .snakemake/incomplete
  /usr/bin/time -v -o "$out/cold.$i" "$SNAKEMAKE" --cores "$CORES" --quiet all >"$out/log.$i" 2>&1
  /usr/bin/time -v -o "$out/noop.$i" "$SNAKEMAKE" --cores "$CORES" --quiet all >>"$out/log.$i" 2>&1
  cat logs/*/*.benchmark.tsv logs/*.benchmark.tsv 2>/dev/null | grep -v '^s' >"$out/jobs.$i" || true
  grep -c "tensorflow imported" logs/*/compute_reference.log >/dev/null 2>&1 && {
    echo "a reference job imported TensorFlow" >&2; exit 1; }
  ls logs/*/evaluate_case.tensorflow.*.log | wc -l >"$out/tf.$i"
done
python3 - "$out" "$RUNS" "$cases" <<'PY'
import re, statistics, sys
out, runs, cases = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def wall(path):
    text = open(path).read()
    h, m, s = (["0"] + re.search(r"Elapsed \(wall clock\) time.*: (.*)", text).group(1).split(":"))[-3:]
    return int(h) * 3600 + int(m) * 60 + float(s)
cold = [wall(f"{out}/cold.{i}") for i in range(1, runs + 1)]
noop = [wall(f"{out}/noop.{i}") for i in range(1, runs + 1)]
rss = [float(line.split("\t")[2]) for i in range(1, runs + 1)
       for line in open(f"{out}/jobs.{i}") if line.strip()]
tf = [int(open(f"{out}/tf.{i}").read()) for i in range(1, runs + 1)]
print(f"cases: {cases}; runs: {runs}")
print(f"cold study (s): {[round(c, 1) for c in cold]}  median {statistics.median(cold):.1f}  target <= 180")
print(f"no-op rerun (s): {[round(n, 2) for n in noop]}  median {statistics.median(noop):.2f}  target <= 5")
print(f"TensorFlow starts per run: {tf}  target <= {cases}")
print(f"peak memory of any job (MB): {max(rss):.0f}  target <= 1536")
PY
