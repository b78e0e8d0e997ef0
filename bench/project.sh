#!/usr/bin/env bash
# Scale benchmark (issue 28), not run by CI: a project of RUNS runs of 3,000
# requests each (the conformance `large` case under fresh run ids), then
#   ingest of every file, the database's size against the artifacts',
#   `report --all --slo`, a `sql` percentile over every run,
#   `history` (its first pass and the next), `export --parquet` (time and
#   size) and the same percentile in DuckDB over the Parquet,
# each with its wall time and peak memory (GNU time), against the goals.
#   bench/project.sh                 # RUNS=1000, builds target/quick/stormlog
#   RUNS=100 bench/project.sh
#   STORMLOG=path/to/stormlog RUNS=100 bench/project.sh
# Artifacts are written CHUNK at a time (default 100), ingested, and deleted,
# so the disk holds one chunk of them besides the database. Data under
# bench/out/project-RUNS/. Needs python3; bench/.venv gets duckdb when it
# lacks it (as bench/run.sh makes its venv).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
RUNS=${RUNS:-1000}
CHUNK=${CHUNK:-100}
POLICY=${POLICY:-ttft:100}
if [ -z "${STORMLOG:-}" ]; then
  cargo build --profile quick -q
  STORMLOG=$ROOT/target/quick/stormlog
fi
PY=$ROOT/bench/.venv/bin/python
if ! "$PY" -c 'import duckdb' 2> /dev/null; then
  [ -x "$PY" ] || python3 -m venv "$ROOT/bench/.venv"
  "$ROOT/bench/.venv/bin/pip" install -q duckdb
fi
OUT=$ROOT/bench/out/project-$RUNS
rm -rf "$OUT"
mkdir -p "$OUT/artifacts"
DB=$OUT/project.db
LAKE=$OUT/lake

# On a shared machine the wall time counts other processes' turns too; the
# CPU time (user + system) of the command itself is printed beside it.
timed() { # label, command...: wall seconds, peak RSS in MB, CPU seconds, appended to the results
  local label=$1; shift
  /usr/bin/time -f "%e %M %U %S" -o "$OUT/time.txt" "$@" > "$OUT/$label.out" 2> "$OUT/$label.err" || {
    echo "$label failed:"; tail -5 "$OUT/$label.err"; exit 1; }
  read -r wall kb user sys < "$OUT/time.txt"
  cpu=$(python3 -c "print(round($user + $sys, 2))")
  echo "$label $wall $((kb / 1024)) $cpu" >> "$OUT/results.txt"
  printf '%-22s %8.2f s %6d MB  cpu %6.2f s\n' "$label" "$wall" "$((kb / 1024))" "$cpu"
}

: > "$OUT/results.txt"
artifact_bytes=0
ingest_s=0
ingest_cpu=0
ingest_mb=0
for ((start = 0; start < RUNS; start += CHUNK)); do
  end=$((start + CHUNK < RUNS ? start + CHUNK : RUNS))
  python3 - "$ROOT/tests/fixtures/conformance/cases/large/artifact.jsonl" "$OUT/artifacts" "$start" "$end" <<'PY'
import sys
src, out, start, end = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
text = open(src).read()
assert text.count('"run_id": "large"') == 1
for k in range(start, end):
    open(f"{out}/run-{k:05d}.jsonl", "w").write(text.replace('"run_id": "large"', f'"run_id": "proj-{k:05d}"'))
PY
  bytes=$(cat "$OUT"/artifacts/*.jsonl | wc -c)
  artifact_bytes=$((artifact_bytes + bytes))
  /usr/bin/time -f "%e %M %U %S" -o "$OUT/time.txt" "$STORMLOG" ingest --db "$DB" "$OUT"/artifacts/*.jsonl > /dev/null 2> "$OUT/ingest.err"
  read -r wall kb user sys < "$OUT/time.txt"
  ingest_s=$(python3 -c "print($ingest_s + $wall)")
  ingest_cpu=$(python3 -c "print(round($ingest_cpu + $user + $sys, 2))")
  ingest_mb=$(( kb / 1024 > ingest_mb ? kb / 1024 : ingest_mb ))
  rm -f "$OUT"/artifacts/*.jsonl
  echo "ingested runs $start..$((end - 1)): $wall s"
done
echo "ingest $ingest_s $ingest_mb $ingest_cpu" >> "$OUT/results.txt"
db_bytes=$(stat -c %s "$DB")

timed report_all_slo "$STORMLOG" report --db "$DB" --all --slo "$POLICY"
timed sql_p95 "$STORMLOG" sql --db "$DB" \
  "SELECT count(*) AS requests, percentile(ttft_ms, 95) AS ttft_p95 FROM v_requests WHERE phase = 'measured' AND ok = 1"
# history: its first pass builds and keeps an entry per run, the next
# reads them back.
timed history_first "$STORMLOG" history --db "$DB"
timed history_again "$STORMLOG" history --db "$DB"
timed export_parquet "$STORMLOG" export --db "$DB" --parquet "$LAKE" --all
timed export_again "$STORMLOG" export --db "$DB" --parquet "$LAKE" --all
lake_bytes=$(du -sb "$LAKE" | cut -f1)
timed duckdb_p95 "$PY" -c "
import duckdb
print(duckdb.sql(\"SELECT count(*) AS requests, quantile_cont(ttft_ms, 0.95) AS ttft_p95 FROM read_parquet('$LAKE/requests/*/*.parquet') WHERE phase = 'measured' AND ok = 1\").fetchall())"

echo
echo "stormlog sql:  $(tail -1 "$OUT/sql_p95.out")"
echo "duckdb:        $(cat "$OUT/duckdb_p95.out")"
echo "export:        $(cat "$OUT/export_parquet.out")"
echo "export again:  $(head -1 "$OUT/export_again.out")"
python3 - "$OUT/results.txt" "$RUNS" "$artifact_bytes" "$db_bytes" "$lake_bytes" <<'PY'
import sys
rows = {l.split()[0]: (float(l.split()[1]), int(l.split()[2]), float(l.split()[3])) for l in open(sys.argv[1])}
runs, art, db, lake = (int(x) for x in sys.argv[2:6])
requests = runs * 3000
mb = 1e6
ingest = rows["ingest"][0]
print()
print(f"{runs} runs, {requests:,} requests; artifacts {art / mb:,.0f} MB")
cpu = lambda k: f" (cpu {rows[k][2]:.2f} s)"
goals = [
    ("ingest", f"{ingest:.2f} s = {art / mb / ingest:,.0f} MB/s" + cpu("ingest"), art / mb / ingest >= 250, ">= 250 MB/s"),
    ("database size", f"{db / mb:,.0f} MB = {100 * db / art:.0f}% of the artifacts", db <= 0.4 * art, "<= 40%"),
    ("report --all --slo", f"{rows['report_all_slo'][0]:.2f} s" + cpu("report_all_slo"), rows["report_all_slo"][0] < 2, "< 2 s"),
    ("sql p95 over all", f"{rows['sql_p95'][0]:.2f} s" + cpu("sql_p95"), True, "-"),
    ("export --parquet", f"{rows['export_parquet'][0]:.2f} s = {requests / rows['export_parquet'][0]:,.0f} requests/s, {lake / mb:,.0f} MB" + cpu("export_parquet"),
     requests / rows["export_parquet"][0] >= 2e6, ">= 2,000,000 requests/s"),
    ("export again", f"{rows['export_again'][0]:.2f} s" + cpu("export_again"), True, "-"),
    ("history, first", f"{rows['history_first'][0]:.2f} s" + cpu("history_first"), True, "-"),
    ("history, again", f"{rows['history_again'][0]:.2f} s" + cpu("history_again"), True, "-"),
    ("duckdb p95 over all", f"{rows['duckdb_p95'][0]:.2f} s" + cpu("duckdb_p95"), True, "-"),
]
for name, got, ok, goal in goals:
    print(f"{name:20} {got:72} goal {goal:26} {'met' if ok else 'NOT met'}")
peak = {k: v[1] for k, v in rows.items() if k != "duckdb_p95"}
worst = max(peak, key=peak.get)
print(f"{'peak memory':20} {', '.join(f'{k} {v} MB' for k, v in peak.items())}")
print(f"{'':20} {'highest: ' + worst + f' {peak[worst]} MB':72} goal < 200 MB each            {'met' if peak[worst] < 200 else 'NOT met'}")
PY
