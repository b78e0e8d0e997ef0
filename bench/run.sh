#!/usr/bin/env bash
# Benchmarks stormlog against the reference (stormlog 0.4.3) on the same inputs,
# in the same run. Figures go to stdout; see README.md "Performance".
#
#   bench/run.sh                 # 90,000 and 300,000 requests, 100-run re-judge
#   SIZES="30000" bench/run.sh   # other sizes
#   RUNS=0 bench/run.sh          # without the re-judging part
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

measure() { # label, command...: wall seconds and peak RSS via /usr/bin/time
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$DATA/time.txt" "$@" > /dev/null
  read -r wall kb < "$DATA/time.txt"
  printf '%-44s %8.2f s %8.0f MB\n' "$label" "$wall" "$((kb / 1024))"
}

for n in $SIZES; do
  f="$DATA/large_$n.jsonl"
  [ -f "$f" ] || python3 bench/scale_large.py "$n" "$f"
  mb=$(( $(stat -c %s "$f") / 1000000 ))
  echo "== $n requests ($mb MB)"
  rm -f "$DATA/bench.db" "$DATA/bench.db-wal" "$DATA/bench.db-shm"
  measure "reference: infer analyze --format json" "$REF" infer analyze "$f" --format json
  measure "stormlog: infer analyze --format json" "$OURS" infer analyze "$f" --format json
  measure "stormlog: ingest" "$OURS" ingest --db "$DATA/bench.db" "$f"
  measure "stormlog: report --format json" "$OURS" report --db "$DATA/bench.db" large --format json
  echo "database: $(( $(stat -c %s "$DATA/bench.db") / 1000000 )) MB"
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
