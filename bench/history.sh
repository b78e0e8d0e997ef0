#!/usr/bin/env bash
# Times `stormlog history` and `stormlog history check` over a project of N
# made-up nightly runs (default 1,000; bench/make_history.py writes them from
# the corpus's compare runs). The goals: `history` under 2 s, `history check`
# under 0.5 s. `stormlog runs` over the same project is timed beside them, as
# a yardstick for the machine's speed at that moment.
#
#   bench/history.sh              # 1,000 runs, the quick profile
#   N=200 bench/history.sh
#   BIN=target/release/stormlog bench/history.sh
#
# The first `history` builds every run's cached entry (timed once, "cold");
# the later ones read the entries back ("warm"). Needs python3 (stdlib).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-1000}
REPEAT=${REPEAT:-3}
DATA=${DATA:-bench/out/history}
if [ -z "${BIN:-}" ]; then
  cargo build --profile quick --locked -q
  BIN=target/quick/stormlog
fi
mkdir -p "$DATA"
db="$DATA/history_$N.db"
if [ ! -f "$db" ]; then
  rm -rf "$DATA/runs_$N"
  python3 bench/make_history.py "$N" "$DATA/runs_$N"
  # In batches: one command line holds only so many paths.
  find "$DATA/runs_$N" -name '*.jsonl' | sort | xargs -n 200 "$BIN" ingest --db "$db" > /dev/null
fi
# Cached entries from an earlier run of the script are dropped, so "cold" is cold.
"$BIN" sql --db "$db" "SELECT count(*) AS kept_entries FROM history_entries" || true
python3 - "$db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("DELETE FROM history_entries"); c.commit()
PY

timed() { # times, label, command...: the median wall time of that many runs, and each run's CPU time
  # (user + system: on a shared machine the wall time is mostly waiting for a core)
  local times=$1 label=$2; shift 2
  local walls=() cpus=()
  for _ in $(seq 1 "$times"); do
    /usr/bin/time -f "%e %M %U %S" -o "$DATA/time.txt" "$@" > /dev/null || [ $? -eq 4 ]
    # The last line: time writes "Command exited with non-zero status 4" above it.
    read -r wall kb user sys < <(tail -n 1 "$DATA/time.txt")
    walls+=("$wall")
    cpus+=("$(python3 -c "print(f'{$user + $sys:.2f}')")")
  done
  local median
  median=$(printf '%s\n' "${walls[@]}" | sort -g | sed -n "$(( (times + 1) / 2 ))p")
  printf '%-52s %6.2f s %6d MB   (wall: %s s; cpu: %s s)\n' "$label" "$median" "$((kb / 1024))" "${walls[*]}" "${cpus[*]}"
}

last=$(printf 'night-%05d' $((N - 1)))
echo "== $N runs ($BIN)"
timed "$REPEAT" "stormlog runs (yardstick)" "$BIN" runs --db "$db"
timed 1 "stormlog history (cold: builds every entry)" "$BIN" history --db "$db"
timed "$REPEAT" "stormlog history (warm)" "$BIN" history --db "$db"
timed "$REPEAT" "stormlog history --format json (warm)" "$BIN" history --db "$db" --format json
timed "$REPEAT" "stormlog history check $last --baseline last:5" \
  "$BIN" history check "$last" --db "$db" --baseline last:5 --gate 'client.e2e.p50=non-inferiority:0.10'
timed "$REPEAT" "stormlog history check $last --baseline last:20" \
  "$BIN" history check "$last" --db "$db" --baseline last:20 --gate 'client.e2e.p50=non-inferiority:0.10'
