#!/usr/bin/env bash
# Renders stormlog's HTML pages in a real browser (Debian's Chromium,
# headless) and checks each screenshot is not blank. Not part of CI.
#
#   apt-get update && apt-get install -y chromium   # once
#   bench/browser.sh [OUT_DIR]                      # default: target/browser
#
# Builds the pages from the examples (a run, the project, a comparison),
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
CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROME" ]; then
  echo "no chromium: apt-get install -y chromium" >&2
  exit 2
fi
fail=0
for page in run project cmp; do
  for scheme in light dark; do
    png="$OUT/$page-$scheme.png"
    rm -f "$png"
    extra=()
    if [ "$scheme" = dark ]; then extra=(--force-dark-mode --blink-settings=preferredColorScheme=0); fi
    timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --disable-background-networking \
      --disable-component-update --disable-sync --no-first-run --user-data-dir="$(mktemp -d)" \
      "${extra[@]}" --screenshot="$png" --window-size=1280,2000 "file://$OUT/$page.html" \
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
