#!/usr/bin/env bash
# Renders stormlog's HTML pages in a real browser (Debian's Chromium,
# headless) and checks each screenshot is not blank. Not part of CI.
#
#   apt-get update && apt-get install -y chromium   # once
#   bench/browser.sh [OUT_DIR]                      # default: target/browser
#   HEIGHT=9000 PAGES="sweep cmp" bench/browser.sh  # taller shots, some pages
#
# Builds the pages from the examples and conformance fixtures (a run, a
# sweep, vLLM metrics and spans, the project, a comparison, slo frontier,
# binding and diff),
# then writes OUT_DIR/<page>.png and says how many distinct colours each
# has (a blank page has one or two).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-target/browser}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cargo build -q
B=$PWD/target/debug/stormlog
DB="$OUT/pages.db"
rm -f "$DB"
"$B" --db "$DB" ingest examples/telemetry_joined.jsonl examples/telemetry_joined.telemetry.jsonl \
  examples/fixed_rate.jsonl >/dev/null
"$B" --db "$DB" report telemetry_joined --direct-server --slo-file examples/slo/interactive.toml \
  --format html -o "$OUT/run.html" >/dev/null
"$B" --db "$DB" report --all --slo-file examples/slo/interactive.toml --format html \
  -o "$OUT/project.html" >/dev/null
"$B" compare --baseline examples/compare/baseline_b1.jsonl examples/compare/baseline_b2.jsonl \
  --candidate examples/compare/candidate_b1.jsonl examples/compare/candidate_b2.jsonl \
  --format html -o "$OUT/cmp.html" >/dev/null
F=tests/fixtures/conformance/cases
"$B" --db "$DB" ingest "$F/vllm_metrics/artifact.jsonl" "$F/vllm_spans/artifact.jsonl" >/dev/null
cat >"$OUT/tight.toml" <<'TOML'
format = "stormlog.infer.slo"
version = 1
name = "tight"
attainment_target = 0.9
[[criteria]]
metric = "ttft"
boundary = "client"
max_ms = 50
attainment_target = 0.95
[[criteria]]
metric = "e2e"
boundary = "client"
max_ms = 400
TOML
# A sweep whose capacity is bracketed (the run page's capacity chart).
"$B" --db "$DB" report telemetry_joined --direct-server --slo-file "$OUT/tight.toml" \
  --format html -o "$OUT/sweep.html" >/dev/null
"$B" --db "$DB" report vllm_metrics --format html -o "$OUT/vllm_metrics.html" >/dev/null
"$B" --db "$DB" report vllm_spans --format html -o "$OUT/vllm_spans.html" >/dev/null
"$B" --db "$DB" slo frontier telemetry_joined --target 0.9 --criterion ttft --criterion e2e \
  --format html -o "$OUT/frontier.html" >/dev/null
"$B" --db "$DB" slo binding telemetry_joined --slo-file "$OUT/tight.toml" \
  --format html -o "$OUT/binding.html" >/dev/null
"$B" --db "$DB" slo diff telemetry_joined --slo-file "$OUT/tight.toml" \
  --against ttft:500 --against e2e:4000 --format html -o "$OUT/diff.html" >/dev/null
CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROME" ]; then
  echo "no chromium: apt-get install -y chromium" >&2
  exit 2
fi
fail=0
for page in ${PAGES:-run project cmp sweep vllm_metrics vllm_spans frontier binding diff}; do
  for scheme in light dark; do
    png="$OUT/$page-$scheme.png"
    rm -f "$png"
    extra=()
    if [ "$scheme" = dark ]; then extra=(--force-dark-mode --blink-settings=preferredColorScheme=0); fi
    timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --disable-background-networking \
      --disable-component-update --disable-sync --no-first-run --user-data-dir="$(mktemp -d)" \
      "${extra[@]}" --screenshot="$png" --window-size=1280,"${HEIGHT:-2000}" "file://$OUT/$page.html" \
      >/dev/null 2>&1 || true
    if [ ! -s "$png" ]; then
      echo "$page ($scheme): no screenshot"; fail=1; continue
    fi
    colours=$(python3 - "$png" <<'PY'
import sys, zlib, struct
data = open(sys.argv[1], 'rb').read()
# A PNG's IDAT chunks, inflated: count distinct bytes triples (a blank
# page has one colour and filter bytes; a drawn one has hundreds).
pos, idat = 8, b''
while pos < len(data):
    n, kind = struct.unpack('>I4s', data[pos:pos + 8])
    if kind == b'IDAT':
        idat += data[pos + 8:pos + 8 + n]
    pos += 12 + n
raw = zlib.decompress(idat)
print(len({raw[i:i + 3] for i in range(0, min(len(raw), 3_000_000), 3)}))
PY
)
    echo "$page ($scheme): $png, $colours distinct byte triples"
    if [ "$colours" -lt 20 ]; then echo "  looks blank"; fail=1; fi
  done
done
exit $fail
