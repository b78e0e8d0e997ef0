#!/usr/bin/env bash
# Times `stormlog slo` on stored runs (docs/slo.md), beside `report --slo` on
# the same database as a baseline measured in the same run:
#   - a 1,000-threshold curve over one run of N requests (default 300,000);
#   - `slo frontier --all` over RUNS stored runs of the large case (3,000
#     requests each, default 100).
# Figures are the median wall time and peak RSS of REPEAT runs (default 3).
#
#   bench/slo.sh                       # quick profile (cargo build --profile quick)
#   N=90000 RUNS=50 bench/slo.sh
#   PROFILE=release bench/slo.sh       # the shipped build
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-300000}
RUNS=${RUNS:-100}
REPEAT=${REPEAT:-3}
DATA=${DATA:-bench/out}
PROFILE=${PROFILE:-quick}
mkdir -p "$DATA"
cargo build --profile "$PROFILE" --locked -q
OURS=target/$PROFILE/stormlog

# CPU time (user + sys) beside the wall time: on a shared machine the wall
# time waits for the cores, the CPU time much less so.
timed() { # label, command...: median wall and CPU time and peak RSS of REPEAT runs
  local label=$1; shift
  local walls=() cpus=() mbs=()
  for _ in $(seq 1 "$REPEAT"); do
    /usr/bin/time -f "%e %U %S %M" -o "$DATA/time.txt" "$@" > /dev/null
    read -r wall user sys kb < "$DATA/time.txt"
    walls+=("$wall") cpus+=("$(echo "$user + $sys" | bc)") mbs+=("$((kb / 1024))")
  done
  local mid=$(( (REPEAT + 1) / 2 ))
  med() { printf '%s\n' "$@" | sort -g | sed -n "${mid}p"; }
  printf '%-58s %6.2f s wall %6.2f s CPU %6d MB   (walls: %s)\n' "$label" \
    "$(med "${walls[@]}")" "$(med "${cpus[@]}")" "$(med "${mbs[@]}")" "${walls[*]}"
}

echo "== one run of $N requests ($PROFILE build)"
big="$DATA/slo-large-$N.jsonl"
[ -f "$big" ] || python3 bench/scale_large.py "$N" "$big"
db="$DATA/slo-$N.db"
[ -f "$db" ] || "$OURS" ingest --db "$db" "$big" > /dev/null
run=$("$OURS" runs --db "$db" --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["run_id"])')
timed "report --slo ttft:100 --format json (baseline)" "$OURS" report --db "$db" "$run" --slo ttft:100 --format json
timed "slo curve --criterion ttft --range 1:2000:1000 --format csv" "$OURS" slo curve --db "$db" "$run" --criterion ttft --range 1:2000:1000 --format csv
timed "slo curve, three criteria, 1,000 thresholds each" "$OURS" slo curve --db "$db" "$run" --criterion ttft --criterion e2e --criterion tpot --range 1:2000:1000 --format csv
timed "slo frontier --target 0.99 (every criterion)" "$OURS" slo frontier --db "$db" "$run" --target 0.99

echo "== $RUNS stored runs of the large case (3,000 requests each)"
src=tests/fixtures/conformance/cases/large/artifact.jsonl
jdb="$DATA/slo-runs-$RUNS.db"
if [ ! -f "$jdb" ]; then
  mkdir -p "$DATA/slo-runs"
  for i in $(seq 1 "$RUNS"); do
    sed "s/\"run_id\": \"large\"/\"run_id\": \"large-$i\"/" "$src" > "$DATA/slo-runs/large-$i.jsonl"
  done
  "$OURS" ingest --db "$jdb" "$DATA"/slo-runs/*.jsonl > /dev/null
fi
timed "report --all --slo ttft:100 (baseline)" "$OURS" report --db "$jdb" --all --slo ttft:100
timed "slo frontier --all --target 0.99 (every criterion)" "$OURS" slo frontier --db "$jdb" --all --target 0.99
timed "slo frontier --all --target 0.99 --criterion ttft" "$OURS" slo frontier --db "$jdb" --all --target 0.99 --criterion ttft
