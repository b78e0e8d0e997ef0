#!/usr/bin/env bash
# Ingest speed of other tools' results (docs/import.md): a 100,000-request run
# of each format (bench/peers_gen.py scales the fixtures), each ingested into a
# fresh database, beside the ingest of a stormlog artifact of 90,000 requests
# in the same run (bench/scale_large.py) as the baseline. Prints MB/s of the
# input and peak RSS.
#
#   bench/peers.sh                     # 100,000 requests, quick profile
#   N=20000 PROFILE=release bench/peers.sh
#   BIN=old/stormlog TOOLS="vllm aiperf" bench/peers.sh   # another build, some formats
#   DATA=/shared/peers bench/peers.sh  # inputs made before ($DATA/$N/<tool>/)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-100000}
PROFILE=${PROFILE:-quick}
DATA=${DATA:-bench/out/peers}
if [ -z "${BIN:-}" ]; then
  cargo build --profile "$PROFILE" --locked -q
  BIN=target/$PROFILE/stormlog
  [ "$PROFILE" = dev ] && BIN=target/debug/stormlog
fi
TOOLS=${TOOLS:-aiperf guidellm inference-perf vllm}
# The database and timings go to a writable folder even where DATA is not.
OUT=${OUT:-bench/out/peers}
mkdir -p "$OUT"
if [ ! -d "$DATA/$N/vllm" ]; then
  mkdir -p "$DATA"
  python3 bench/peers_gen.py "$N" "$DATA/$N"
fi
if [ -z "${NO_ARTIFACT:-}" ] && [ ! -f "$DATA/artifact_90000.jsonl" ]; then
  python3 bench/scale_large.py 90000 "$DATA/artifact_90000.jsonl"
fi
measure() { # label, input (file or folder), size in bytes
  local label=$1 input=$2 bytes=$3
  rm -f "$OUT/bench.db" "$OUT/bench.db-wal" "$OUT/bench.db-shm"
  /usr/bin/time -f "%e %U %S %M" -o "$OUT/time.txt" "$BIN" ingest --db "$OUT/bench.db" "$input" > /dev/null
  read -r wall user sys kb < "$OUT/time.txt"
  # CPU time too: on a shared machine the wall time is mostly other work.
  printf '%-16s %8.1f MB %7.2f s wall %7.1f MB/s %7.2f s CPU %7.1f MB/CPU-s %6d MB peak\n' "$label" \
    "$(python3 -c "print($bytes / 1e6)")" "$wall" "$(python3 -c "print($bytes / 1e6 / max($wall, 0.01))")" \
    "$(python3 -c "print($user + $sys)")" "$(python3 -c "print($bytes / 1e6 / max($user + $sys, 0.01))")" "$((kb / 1024))"
}
size_of() { du -b --apparent-size -s "$1" | cut -f1; }
main_file() { # the per-request (or result) file of a tool's folder
  case "$1" in
    aiperf) echo profile_export.jsonl ;;
    guidellm) echo benchmarks.json ;;
    inference-perf) echo per_request_lifecycle_metrics.json ;;
    vllm) echo vllm_bench_serve.json ;;
  esac
}
echo "$BIN, $N requests per format"
[ -z "${NO_ARTIFACT:-}" ] && measure artifact "$DATA/artifact_90000.jsonl" "$(size_of "$DATA/artifact_90000.jsonl")"
for tool in $TOOLS; do
  measure "$tool" "$DATA/$N/$tool" "$(size_of "$DATA/$N/$tool/$(main_file $tool)")"
done
