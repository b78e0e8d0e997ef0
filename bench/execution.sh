#!/usr/bin/env bash
# The cost of the vLLM execution block in `report`: the same scaled run with
# and without an execution import (one step per STEP requests, one
# membership and one hook request per request), each ingested into its own
# database, then `report --format json` timed REPEAT times each, alternating
# (the machine is noisy: the two are measured side by side).
#
#   bench/execution.sh                 # 90,000 requests, a step per 8, 5 runs each
# (the two ingests are timed once each, one after the other)
#   N=300000 STEP=4 REPEAT=3 bench/execution.sh
#   BIN=target/release/stormlog bench/execution.sh   # default: the quick profile
#
# Needs python3 (stdlib) for the inputs.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-90000}
STEP=${STEP:-8}
REPEAT=${REPEAT:-5}
DATA=${DATA:-bench/out}
BIN=${BIN:-target/quick/stormlog}
mkdir -p "$DATA"
[ "$BIN" = target/quick/stormlog ] && cargo build --profile quick --locked -q
base="$DATA/large_$N.jsonl"
exec_file="$DATA/large_${N}_exec$STEP.jsonl"
[ -f "$base" ] || python3 bench/scale_large.py "$N" "$base"
[ -f "$exec_file" ] || python3 bench/execution.py "$base" "$exec_file" "$STEP"
ingest_walls=()
for f in "$base" "$exec_file"; do
  db="${f%.jsonl}.db"
  rm -f "$db" "$db-wal" "$db-shm"
  /usr/bin/time -f "%e" -o "$DATA/time.txt" "$BIN" ingest --db "$db" "$f" > /dev/null 2>&1
  ingest_walls+=("$(cat "$DATA/time.txt")")
done
run_id=$("$BIN" runs --db "${base%.jsonl}.db" --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["run_id"])')
echo "== $N requests; base $(( $(stat -c %s "$base") / 1000000 )) MB, with the import $(( $(stat -c %s "$exec_file") / 1000000 )) MB"
"$BIN" report --db "${exec_file%.jsonl}.db" "$run_id" --format json \
  | python3 -c 'import json,sys; e=json.load(sys.stdin)["telemetry"]["execution"]; print("execution:", e["iterations"]["total"], "steps,", e["memberships"], "memberships,", e["requests"]["run_requests_bound"], "of", e["requests"]["run_requests_total"], "bound")'
echo "ingest without the import: ${ingest_walls[0]} s, with it: ${ingest_walls[1]} s"
walls_base=() walls_exec=()
for _ in $(seq 1 "$REPEAT"); do
  for which in base exec; do
    f=$base; [ "$which" = exec ] && f=$exec_file
    /usr/bin/time -f "%e" -o "$DATA/time.txt" "$BIN" report --db "${f%.jsonl}.db" "$run_id" --format json > /dev/null
    w=$(cat "$DATA/time.txt")
    if [ "$which" = base ]; then walls_base+=("$w"); else walls_exec+=("$w"); fi
  done
done
median() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }
mb=$(median "${walls_base[@]}") me=$(median "${walls_exec[@]}")
echo "report without the import: median $mb s (runs: ${walls_base[*]})"
echo "report with the import:    median $me s (runs: ${walls_exec[*]})"
python3 -c "print(f'ratio {float(\"$me\") / float(\"$mb\"):.2f}x (limit 1.5x)')"
