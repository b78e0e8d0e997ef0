#!/usr/bin/env bash
# Interop check (issue 28), not run by CI: DuckDB and Spark in local mode read
# `stormlog export --parquet` and must reproduce stormlog's own figures per run
# and case: the measured request counts exactly, and p50/p95 TTFT over the
# successful ones (stormlog's `percentile`, the report's definition: linear
# interpolation at rank p*(n-1)). Each engine's candidate functions are shown
# beside ours with how many of them agree to the bit.
#   bench/interop/parquet.sh                # builds target/quick/stormlog
#   STORMLOG=path/to/stormlog bench/interop/parquet.sh
# Needs python3 and Java 17; installs duckdb and pyspark into bench/.venv.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(cd ../.. && pwd)
if [ -z "${STORMLOG:-}" ]; then
  (cd "$ROOT" && cargo build --profile quick -q)
  STORMLOG=$ROOT/target/quick/stormlog
fi
VENV=$ROOT/bench/.venv
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -c 'import duckdb, pyspark' 2>/dev/null || "$VENV/bin/pip" install -q duckdb pyspark
OUT=${OUT:-$ROOT/bench/out/interop-parquet}
rm -rf "$OUT"
mkdir -p "$OUT"
DB=$OUT/project.db
CASES=$ROOT/tests/fixtures/conformance/cases
files=()
for c in burst failures closed_matrix fixed_rate poisson large warmup deadline shared_prefix telemetry_joined; do
  files+=("$CASES/$c/artifact.jsonl")
done
files+=("$CASES/telemetry_joined/telemetry.jsonl")
"$STORMLOG" ingest --db "$DB" "${files[@]}" > "$OUT/ingest.log"
set -x
"$STORMLOG" export --db "$DB" --parquet "$OUT/lake" --all
"$STORMLOG" sql --db "$DB" --format json "
  SELECT run_id, case_key, count(*) AS requests,
         percentile(CASE WHEN ok = 1 THEN ttft_ms END, 50) AS ttft_p50,
         percentile(CASE WHEN ok = 1 THEN ttft_ms END, 95) AS ttft_p95
  FROM v_requests WHERE phase = 'measured'
  GROUP BY run_id, case_key ORDER BY run_id, case_key" > "$OUT/stormlog.jsonl"
set +x
"$VENV/bin/python" - "$OUT" <<'PY'
import json, sys, os
out = sys.argv[1]
lake = os.path.join(out, "lake")
ours = {(r["run_id"], r["case_key"]): r for r in map(json.loads, open(os.path.join(out, "stormlog.jsonl")))}

import duckdb
con = duckdb.connect()
duck_sql = f"""
  SELECT run_id, case_key, count(*) AS requests,
         quantile_cont(ttft_ms, 0.5) FILTER (WHERE ok = 1) AS p50_cont,
         quantile_cont(ttft_ms, 0.95) FILTER (WHERE ok = 1) AS p95_cont,
         quantile_disc(ttft_ms, 0.95) FILTER (WHERE ok = 1) AS p95_disc
  FROM read_parquet('{lake}/requests/*/*.parquet', hive_partitioning = true)
  WHERE phase = 'measured'
  GROUP BY run_id, case_key ORDER BY run_id, case_key"""
print("duckdb", duckdb.__version__, ":", " ".join(duck_sql.split()))
duck = {(r[0], r[1]): r for r in con.execute(duck_sql).fetchall()}

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
from pyspark.sql import SparkSession
import pyspark
spark = (SparkSession.builder.master("local[2]").appName("stormlog-interop")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false").config("spark.sql.session.timeZone", "UTC")
         # Spark has no nanosecond timestamps: it reads TIMESTAMP(NANOS) columns
         # as their INT64 nanoseconds only when asked to (docs/scale.md).
         .config("spark.sql.legacy.parquet.nanosAsLong", "true")
         .getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
spark.read.parquet(f"{lake}/requests").createOrReplaceTempView("requests")
spark_sql = """
  SELECT run_id, case_key, count(*) AS requests,
         percentile(CASE WHEN ok = 1 THEN ttft_ms END, 0.5) AS p50,
         percentile(CASE WHEN ok = 1 THEN ttft_ms END, 0.95) AS p95,
         percentile_approx(CASE WHEN ok = 1 THEN ttft_ms END, 0.95) AS p95_approx
  FROM requests WHERE phase = 'measured'
  GROUP BY run_id, case_key ORDER BY run_id, case_key"""
print("spark", pyspark.__version__, ":", " ".join(spark_sql.split()))
sp = {(r[0], r[1]): r for r in spark.sql(spark_sql).collect()}
spark.stop()

def same(a, b):
    return a is None and b is None or (a is not None and b is not None and float(a) == float(b))

print()
print(f"{'run':18} {'case':24} {'n':>5} {'duck':>5} {'spark':>5} | {'p50 ours':>20} {'duck cont':>20} {'spark pct':>20} | {'p95 ours':>20} {'duck cont':>20} {'duck disc':>20} {'spark pct':>20} {'spark approx':>20}")
tally = {k: 0 for k in ["count_duck", "count_spark", "p50_duck", "p95_duck", "p50_spark", "p95_spark", "p95_duck_disc", "p95_spark_approx"]}
worst = {"duck": 0.0, "spark": 0.0}
for key in sorted(ours):
    o, d, s = ours[key], duck.get(key), sp.get(key)
    assert d is not None and s is not None, f"{key}: missing in an engine"
    tally["count_duck"] += o["requests"] == d[2]
    tally["count_spark"] += o["requests"] == s[2]
    tally["p50_duck"] += same(o["ttft_p50"], d[3])
    tally["p95_duck"] += same(o["ttft_p95"], d[4])
    tally["p95_duck_disc"] += same(o["ttft_p95"], d[5])
    tally["p50_spark"] += same(o["ttft_p50"], s[3])
    tally["p95_spark"] += same(o["ttft_p95"], s[4])
    tally["p95_spark_approx"] += same(o["ttft_p95"], s[5])
    for name, a, b in [("duck", o["ttft_p50"], d[3]), ("duck", o["ttft_p95"], d[4]), ("spark", o["ttft_p50"], s[3]), ("spark", o["ttft_p95"], s[4])]:
        if a is not None and b is not None:
            worst[name] = max(worst[name], abs(a - b))
    f = lambda x: "NULL" if x is None else repr(float(x))
    print(f"{key[0]:18} {key[1]:24} {o['requests']:5} {d[2]:5} {s[2]:5} | {f(o['ttft_p50']):>20} {f(d[3]):>20} {f(s[3]):>20} | {f(o['ttft_p95']):>20} {f(d[4]):>20} {f(d[5]):>20} {f(s[4]):>20} {f(s[5]):>20}")
n = len(ours)
print()
for k, v in tally.items():
    print(f"{k:18} {v}/{n} bit-identical")
print(f"largest difference from ours: duckdb quantile_cont {worst['duck']:.3g} ms, spark percentile {worst['spark']:.3g} ms")
ok = tally["count_duck"] == n and tally["count_spark"] == n
print("request counts per case:", "exact in both engines" if ok else "MISMATCH")
sys.exit(0 if ok else 1)
PY
