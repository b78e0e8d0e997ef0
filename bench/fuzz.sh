#!/usr/bin/env bash
# The mutation fuzzer of tests/it/fuzz.rs, for a longer run than the bounded
# sample `cargo test` runs: N mutants from SEED (decimal, or hex with 0x) of
# every conformance artifact and telemetry file (the larger ones included).
#   bench/fuzz.sh 5000 42
# Prints the mutants tried by kind and outcome (accepted, refused, FAILED)
# and each failure; failing mutants are kept in a temporary directory it
# names. A debug build: overflow checks stay on, so an overflow is a panic.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-5000}
SEED=${2:-0x5eed2301}
STORMLOG_FUZZ_MUTANTS=$N STORMLOG_FUZZ_SEED=$SEED STORMLOG_FUZZ_ALL=1 \
  cargo test --locked -q --test it fuzz:: -- --nocapture --test-threads 1
