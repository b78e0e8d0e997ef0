#!/usr/bin/env bash
# Counts the instructions stormlog's `report` and `infer analyze` execute on
# the `large` case scaled to N requests (default 30,000), under callgrind.
# Unlike wall time, the count does not move with the machine's load, so a
# change's effect shows on a noisy machine: compare two builds with
#
#   BIN=/path/to/other/stormlog bench/instructions.sh
#
# Needs valgrind and python3 (stdlib). About a minute for 30,000 requests.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-30000}
DATA=${DATA:-bench/out}
mkdir -p "$DATA"
if [ -z "${BIN:-}" ]; then
  cargo build --release --locked -q
  BIN=target/release/stormlog
fi
f="$DATA/large_$N.jsonl"
[ -f "$f" ] || python3 bench/scale_large.py "$N" "$f"
db="$DATA/instructions_$N.db"
rm -f "$db" "$db-wal" "$db-shm"
"$BIN" ingest --db "$db" "$f" > /dev/null
count() { # label, command...: instructions executed, all threads
  local label=$1; shift
  local n
  n=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
  printf '%-36s %14d instructions\n' "$label" "$n"
}
echo "== $N requests ($BIN)"
count "report --format json" "$BIN" report --db "$db" large --format json
count "infer analyze --format json" "$BIN" infer analyze "$f" --format json
