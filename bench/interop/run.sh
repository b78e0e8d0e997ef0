#!/usr/bin/env bash
# Interop check (issue 7): stormlog's collector watches a loopback test server
# while the reference profiles it; the reference's own `infer analyze` must
# accept our telemetry and join it, and stormlog's analyze must agree with it.
#   bench/interop/run.sh          # needs the reference (bench/.venv or REF=...)
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(cd ../.. && pwd)
(cd "$ROOT" && cargo build --release --locked -q)
OURS="$ROOT/target/release/stormlog"
REF=${REF:-$ROOT/bench/.venv/bin/stormlog}
PY=$(dirname "$REF")/python
OUT=${OUT:-$ROOT/bench/out/interop}
mkdir -p "$OUT"
PORT=${PORT:-37111}
"$PY" tiny_server.py "$PORT" & server=$!
trap 'kill $server 2>/dev/null || true' EXIT
sleep 1
"$OURS" collect-server --no-gpu --pid "$server" --run-id interop --output "$OUT/telemetry.jsonl" --interval 0.05 & coll=$!
"$REF" infer profile --base-url "http://127.0.0.1:$PORT/v1" --model fake --tokenizer none --run-id interop \
  --concurrency 1,4 --input-tokens 128 --output-tokens 16 --requests 12 --system-sampler none \
  --server-probe none --output "$OUT/artifact.jsonl" > "$OUT/profile.log" 2>&1
kill -INT "$coll"; wait "$coll"
"$REF" infer analyze "$OUT/artifact.jsonl" --server-telemetry "$OUT/telemetry.jsonl" --direct-server --format json > "$OUT/reference.json"
"$OURS" infer analyze "$OUT/artifact.jsonl" --server-telemetry "$OUT/telemetry.jsonl" --direct-server --format json > "$OUT/stormlog.json"
python3 - "$OUT/reference.json" "$OUT/stormlog.json" <<'PY'
import json, sys
ref, ours = (json.load(open(p)) for p in sys.argv[1:3])
join = ref["telemetry"]["server_join"]
print("reference join:", join["status"], "| coverage:", join.get("case_coverage"))
assert join["status"] == "joined", join
assert ours["telemetry"]["server_join"] == join, "stormlog's join differs from the reference's"
print("stormlog's analyze gives the same server_join")
PY
