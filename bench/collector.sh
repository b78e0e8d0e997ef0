#!/usr/bin/env bash
# Collector overhead beside the reference's collector, on the same process, at
# the same time: CPU time (user+sys) and peak RSS of each over DURATION seconds
# at 10 Hz and 100 Hz (--no-gpu: RSS sampling only).
#   bench/collector.sh            # 60 s per rate
#   DURATION=20 bench/collector.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-60}
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
cargo build --release --locked -q
OURS=target/release/stormlog
REF=${REF:-bench/.venv/bin/stormlog}
sleep $((DURATION * 2 + 30)) &
target=$!
for hz in 10 100; do
  interval=$(python3 -c "print(1/$hz)")
  /usr/bin/time -f "%U %S %M" -o "$OUT/ours_$hz.time" "$OURS" collect-server --run-id bench --pid $target \
    --no-gpu --interval "$interval" --duration "$DURATION" --output "$OUT/ours_$hz.jsonl" > /dev/null &
  a=$!
  /usr/bin/time -f "%U %S %M" -o "$OUT/ref_$hz.time" "$REF" infer collect-server --run-id bench --pid $target \
    --no-gpu --interval "$interval" --duration "$DURATION" --output "$OUT/ref_$hz.jsonl" > /dev/null &
  b=$!
  wait $a $b
  for who in ours ref; do
    read -r u s m < "$OUT/${who}_$hz.time"
    printf '%-10s %4s Hz: %6.2f s CPU, %6.1f MB peak, %6d samples\n' "$who" "$hz" \
      "$(python3 -c "print($u+$s)")" "$(python3 -c "print($m/1024)")" "$(wc -l < "$OUT/${who}_$hz.jsonl")"
  done
done
kill $target 2>/dev/null || true
