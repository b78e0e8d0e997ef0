#!/usr/bin/env bash
# Size and speed of the HTML pages: a run of N requests (bench/scale_large.py)
# and the project page of RUNS runs (copies of examples/telemetry_joined).
# Times are wall seconds of the `quick` profile, each beside the JSON report
# of the same data in the same loop (the machine is noisy: compare ratios).
#
#   bench/html.sh [N] [RUNS]          # default 300000 100
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-300000}
RUNS=${2:-100}
OUT=target/bench-html
mkdir -p "$OUT"
cargo build -q --profile quick
Q=$PWD/target/quick/stormlog
[ -s "$OUT/large_$N.jsonl" ] || python3 bench/scale_large.py "$N" "$OUT/large_$N.jsonl"
rm -f "$OUT/large.db" "$OUT/many.db"
"$Q" --db "$OUT/large.db" ingest "$OUT/large_$N.jsonl" >/dev/null
t() { local s e; s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N); echo "$e - $s" | bc; }
for i in 1 2 3 4 5; do
  j=$(t "$Q" --db "$OUT/large.db" report large --slo ttft:500@95% --format json -o "$OUT/large.json")
  h=$(t "$Q" --db "$OUT/large.db" report large --slo ttft:500@95% --format html -o "$OUT/large.html")
  echo "run of $N requests: json ${j}s html ${h}s"
done
echo "page size: $(stat -c %s "$OUT/large.html") bytes"
mkdir -p "$OUT/many"
python3 - "$OUT/many" "$RUNS" <<'PY'
import sys
out, n = sys.argv[1], int(sys.argv[2])
src = open('examples/telemetry_joined.jsonl').read()
for i in range(n):
    open(f'{out}/r{i:03}.jsonl', 'w').write(src.replace('"run_id": "telemetry_joined"', f'"run_id": "r{i:03}"'))
PY
"$Q" --db "$OUT/many.db" ingest "$OUT"/many/r*.jsonl >/dev/null
for i in 1 2 3; do
  j=$(t "$Q" --db "$OUT/many.db" report --all --slo ttft:500@95% --format json -o "$OUT/project.json")
  h=$(t "$Q" --db "$OUT/many.db" report --all --slo ttft:500@95% --format html -o "$OUT/project.html")
  echo "project of $RUNS runs: judgements json ${j}s, page ${h}s"
done
echo "project page size: $(stat -c %s "$OUT/project.html") bytes"
