#!/usr/bin/env bash
# Benchmarks stormlog against the reference (stormlog 0.4.3) on the same inputs,
# in the same run. Figures go to stdout; see README.md "Performance".
#
#   bench/run.sh                 # 90,000 and 300,000 requests, 100-run re-judge
#   SIZES="30000" bench/run.sh   # other sizes
#   RUNS=0 bench/run.sh          # without the re-judging part
#   REPEAT=5 bench/run.sh        # stormlog's commands 5 times each (median; default 3)
#
# Needs python3 (stdlib) for the scaled inputs and the reference in a virtual
# environment (created in bench/.venv unless REF points at a `stormlog` binary).
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-"90000 300000"}
RUNS=${RUNS:-100}
DATA=${DATA:-bench/out}
mkdir -p "$DATA"
cargo build --release --locked -q
OURS=target/release/stormlog
if [ -z "${REF:-}" ]; then
  if [ ! -x bench/.venv/bin/stormlog ]; then
    python3 -m venv bench/.venv
    bench/.venv/bin/pip install -q stormlog==0.4.3
  fi
  REF=bench/.venv/bin/stormlog
fi

# A run of stormlog lasts well under a second, so a burst of the machine's
# noise can double it, where the reference's minute evens such bursts out:
# stormlog's commands run REPEAT times (default 3), and the median counts.
REPEAT=${REPEAT:-3}
timed() { # times, label, command...: the median wall time and peak RSS of that many runs
  local times=$1 label=$2; shift 2
  local walls=() mbs=()
  for _ in $(seq 1 "$times"); do
    /usr/bin/time -f "%e %M" -o "$DATA/time.txt" "$@" > /dev/null
    read -r wall kb < "$DATA/time.txt"
    walls+=("$wall") mbs+=("$((kb / 1024))")
  done
  last_wall=$(printf '%s\n' "${walls[@]}" | sort -g | sed -n "$(( (times + 1) / 2 ))p")
  last_mb=$(printf '%s\n' "${mbs[@]}" | sort -g | sed -n "$(( (times + 1) / 2 ))p")
  local runs=""
  [ "$times" -gt 1 ] && runs="   (runs: ${walls[*]} s)"
  printf '%-44s %8.2f s %8.0f MB%s\n' "$label" "$last_wall" "$last_mb" "$runs"
}
measure() { timed 1 "$@"; }                 # the reference's runs, and an ingest (once: again is a no-op)
measure_median() { timed "$REPEAT" "$@"; }  # stormlog's analyze and report

for n in $SIZES; do
  f="$DATA/large_$n.jsonl"
  [ -f "$f" ] || python3 bench/scale_large.py "$n" "$f"
  mb=$(( $(stat -c %s "$f") / 1000000 ))
  echo "== $n requests ($mb MB)"
  rm -f "$DATA/bench.db" "$DATA/bench.db-wal" "$DATA/bench.db-shm"
  measure "reference: infer analyze --format json" "$REF" infer analyze "$f" --format json
  ref_wall=$last_wall ref_mb=$last_mb
  measure_median "stormlog: infer analyze --format json" "$OURS" infer analyze "$f" --format json
  ours_wall=$last_wall ours_mb=$last_mb
  measure "stormlog: ingest" "$OURS" ingest --db "$DATA/bench.db" "$f"
  measure_median "stormlog: report --format json" "$OURS" report --db "$DATA/bench.db" large --format json
  echo "database: $(( $(stat -c %s "$DATA/bench.db") / 1000000 )) MB"
  python3 -c "import sys; r, a, rm, am, rep = map(float, sys.argv[1:]); print(f'analyze: {r / a:.1f}x the reference, 1/{rm / am:.1f} of its memory; report: {rep / a:.3f} of analyze')" \
    "$ref_wall" "$ours_wall" "$ref_mb" "$ours_mb" "$last_wall"
done

if [ "$RUNS" -eq 0 ]; then exit 0; fi # RUNS=0 bench/run.sh: analyze, ingest and report only
echo "== re-judging $RUNS stored runs of the large case (3,000 requests each)"
src=tests/fixtures/conformance/cases/large/artifact.jsonl
rm -f "$DATA/judge.db" "$DATA/judge.db-wal" "$DATA/judge.db-shm"
mkdir -p "$DATA/runs"
for i in $(seq 1 "$RUNS"); do
  sed "s/\"run_id\": \"large\"/\"run_id\": \"large-$i\"/" "$src" > "$DATA/runs/large-$i.jsonl"
done
"$OURS" ingest --db "$DATA/judge.db" "$DATA"/runs/*.jsonl > /dev/null
policy=examples/slo/interactive.json
measure "stormlog: report --all --slo-file ($RUNS runs)" "$OURS" report --db "$DATA/judge.db" --all --slo-file "$policy"
measure "reference: infer analyze --slo-file x $RUNS" bash -c "for f in $DATA/runs/*.jsonl; do $REF infer analyze \$f --slo-file $policy --format json > /dev/null; done"
