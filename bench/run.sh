#!/usr/bin/env bash
# Benchmarks stormlog against the reference (stormlog 0.4.3) on the same inputs,
# in the same run. Figures go to stdout; see README.md "Performance".
#
#   bench/run.sh                 # 90,000 and 300,000 requests, 100-run re-judge
#   SIZES="30000" bench/run.sh   # other sizes
#   RUNS=0 bench/run.sh          # without the re-judging part
#   REPEAT=5 bench/run.sh        # stormlog's commands 5 times each (median; default 3)
#   REF_ROUNDS=1 bench/run.sh    # the reference in every round too (its ratio per round)
#
# Needs python3 (stdlib) for the scaled inputs and the reference in a virtual
# environment (created in bench/.venv unless REF points at a `stormlog` binary).
# Inputs have a dispatch and a first-content record beside every request, as
# real artifacts do (bench/scale_large.py). Each size also prints the read
# floor (benches/floor.rs: read, find lines, scan every member on all cores)
# and our commands as multiples of it (also from interleaved rounds: the
# `rounds:` lines), and, when python3 can import duckdb
# (`pip install duckdb`, or bench/.venv), DuckDB's whole process computing
# the per-case percentiles alone, beside our analyze.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-"90000 300000"}
RUNS=${RUNS:-100}
DATA=${DATA:-bench/out}
mkdir -p "$DATA"
cargo build --release --locked -q
OURS=target/release/stormlog
cargo bench --locked --no-run -q --bench floor 2>/dev/null
FLOOR=$(ls -t target/release/deps/floor-* | grep -v '\.d$' | head -1)
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
    [ -n "${BEFORE:-}" ] && eval "$BEFORE" # untimed: e.g. a fresh database for each ingest
    # GNU time gives the peak memory, but its wall time comes in 10 ms
    # steps, coarse beside a 60 ms report: the wall time is read from the
    # clock in nanoseconds around it (GNU time's own start, about a
    # millisecond, counts in).
    local t0 t1
    t0=$(date +%s%N)
    /usr/bin/time -f "%e %M" -o "$DATA/time.txt" "$@" > /dev/null
    t1=$(date +%s%N)
    read -r _ kb < "$DATA/time.txt"
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
    walls+=("$wall") mbs+=("$((kb / 1024))")
  done
  last_wall=$(printf '%s\n' "${walls[@]}" | sort -g | sed -n "$(( (times + 1) / 2 ))p")
  last_mb=$(printf '%s\n' "${mbs[@]}" | sort -g | sed -n "$(( (times + 1) / 2 ))p")
  local runs=""
  [ "$times" -gt 1 ] && runs="   (runs: ${walls[*]} s)"
  printf '%-44s %8.3f s %8.0f MB%s\n' "$label" "$last_wall" "$last_mb" "$runs"
}
clock() { # command...: its wall time in seconds, from the clock in nanoseconds
  local t0 t1
  t0=$(date +%s%N)
  "$@" > /dev/null
  t1=$(date +%s%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", (b - a) / 1e9 }'
}
measure() { timed 1 "$@"; }                 # the reference's runs
measure_median() { timed "$REPEAT" "$@"; }  # stormlog's analyze, ingest and report

DUCK_PY=""
for py in python3 bench/.venv/bin/python; do
  if command -v "$py" > /dev/null && "$py" -c 'import duckdb' 2> /dev/null; then DUCK_PY=$py; break; fi
done

for n in $SIZES; do
  # "real_": requests with their dispatch and first-content records (files
  # named large_N.jsonl from older runs of this script have requests only).
  f="$DATA/real_$n.jsonl"
  [ -f "$f" ] || python3 bench/scale_large.py "$n" "$f"
  mb=$(( $(stat -c %s "$f") / 1000000 ))
  echo "== $n requests ($mb MB)"
  rm -f "$DATA/bench.db" "$DATA/bench.db-wal" "$DATA/bench.db-shm"
  measure "reference: infer analyze --format json" "$REF" infer analyze "$f" --format json
  ref_wall=$last_wall ref_mb=$last_mb
  measure_median "stormlog: infer analyze --format json" "$OURS" infer analyze "$f" --format json
  ours_wall=$last_wall ours_mb=$last_mb
  # Each ingest into a new database (a second into the same one is a no-op).
  BEFORE='rm -f "$DATA/bench.db" "$DATA/bench.db-wal" "$DATA/bench.db-shm"' \
    measure_median "stormlog: ingest (new database)" "$OURS" ingest --db "$DATA/bench.db" "$f"
  ingest_wall=$last_wall ingest_mb=$last_mb
  measure_median "stormlog: report --format json" "$OURS" report --db "$DATA/bench.db" large --format json
  report_wall=$last_wall
  measure_median "stormlog: report --slo ttft:500@95% --format json" "$OURS" report --db "$DATA/bench.db" large --slo ttft:500@95% --format json
  slo_wall=$last_wall
  floor_wall=$("$FLOOR" "$f" "$REPEAT" | sed -n 's/^floor: *\([0-9.]*\) s.*/\1/p')
  printf '%-44s %8.3f s\n' "floor (read, lines, scan; median of $REPEAT)" "$floor_wall"
  duck_wall=0
  if [ -n "$DUCK_PY" ]; then
    measure_median "duckdb: count, ok, p50/p95 ttft, e2e per case" "$DUCK_PY" -c "
import duckdb
print(duckdb.sql(\"\"\"SELECT case_id, count(*), count(*) FILTER (status = 'ok'),
  quantile_cont(ttft_ms, [0.5, 0.95]), quantile_cont(e2e_latency_ms, [0.5, 0.95])
FROM read_json('$f', format = 'newline_delimited', columns = {event_type: 'VARCHAR', case_id: 'VARCHAR',
  phase: 'VARCHAR', status: 'VARCHAR', ttft_ms: 'DOUBLE', e2e_latency_ms: 'DOUBLE'})
WHERE event_type = 'infer.request' AND phase = 'measured' GROUP BY case_id ORDER BY case_id\"\"\").fetchall())"
    duck_wall=$last_wall
  fi
  # The two ratios the issue sets against our own commands, again from
  # REPEAT rounds in which each command runs once, one after another: a
  # burst of the machine's noise then slows a round's commands together,
  # where the medians above can take one command's runs from a quiet
  # moment and another's from a busy one. Each round gives its ratios; the
  # median of those is printed.
  # REF_ROUNDS=1: the reference's analyze runs in each round too, just
  # before ours, so that its ratio is taken per round as well (a minute of
  # the reference per round at 300,000 requests).
  rounds=()
  for _ in $(seq 1 "$REPEAT"); do
    r=0
    [ "${REF_ROUNDS:-0}" = 1 ] && r=$(clock "$REF" infer analyze "$f" --format json)
    a=$(clock "$OURS" infer analyze "$f" --format json)
    s=$(clock "$OURS" report --db "$DATA/bench.db" large --slo ttft:500@95% --format json)
    rm -f "$DATA/round.db" "$DATA/round.db-wal" "$DATA/round.db-shm"
    i=$(clock "$OURS" ingest --db "$DATA/round.db" "$f")
    fl=$("$FLOOR" "$f" 1 | sed -n 's/^floor: *\([0-9.]*\) s.*/\1/p')
    rounds+=("$a $s $i $fl $r")
  done
  rm -f "$DATA/round.db" "$DATA/round.db-wal" "$DATA/round.db-shm"
  python3 - "${rounds[@]}" <<'PY'
import statistics, sys
rows = [tuple(map(float, r.split())) for r in sys.argv[1:]]
slo = [s / a for a, s, i, f, r in rows]
ing = [i / f for a, s, i, f, r in rows]
ana = [a / f for a, s, i, f, r in rows]
show = lambda xs, fmt: ", ".join(format(x, fmt) for x in xs)
print(f"rounds: report --slo {statistics.median(slo):.3f} of analyze ({show(slo, '.3f')})")
print(f"rounds: ingest {statistics.median(ing):.2f}x the floor ({show(ing, '.2f')})")
print(f"rounds: analyze {statistics.median(ana):.2f}x the floor ({show(ana, '.2f')})")
if all(r > 0 for *_, r in rows):
    ref = [r / a for a, s, i, f, r in rows]
    print(f"rounds: analyze {statistics.median(ref):.1f}x the reference ({show(ref, '.1f')})")
PY
  echo "database: $(( $(stat -c %s "$DATA/bench.db") / 1000000 )) MB of $mb MB ($(( 100 * $(stat -c %s "$DATA/bench.db") / $(stat -c %s "$f") ))% of the artifact)"
  python3 - "$ref_wall" "$ours_wall" "$ref_mb" "$ours_mb" "$ingest_wall" "$ingest_mb" "$report_wall" "$slo_wall" "$floor_wall" "$duck_wall" <<'PY'
import sys
r, a, rm, am, i, im, rep, slo, fl, duck = map(float, sys.argv[1:])
print(f"analyze: {r / a:.1f}x the reference, 1/{rm / am:.1f} of its memory; {a / fl:.2f}x the floor")
print(f"ingest: {r / i:.1f}x the reference's analyze, peak {im:.0f} MB; {i / fl:.2f}x the floor")
print(f"report: {rep / a:.3f} of analyze; report --slo: {slo / a:.3f} of analyze")
if duck > 0:
    print(f"duckdb's whole process for the percentiles alone: {duck:.2f} s; our analyze is {a / duck:.2f}x of it")
PY
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
