#!/usr/bin/env bash
# Benchmarks the sync engine (release build) against a real server on loopback with SQLite:
# 10,000 changes made offline then drained in batches; the same sent one request per change;
# then a pull of 10,000 records into an empty second device. The last line printed is:
#   drain 10000: batched T1 s, one-by-one T2 s, ratio R, B bytes/change | pull 10000: T3 s
# Usage: scripts/bench-sync.sh [CHANGES]      (targets: T1 < 2 s, R >= 25, T3 < 2 s)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
CHANGES="${1:-10000}"
BUILD_ARGS="${BUILD_ARGS:-}"   # e.g. --scratch-path .build-release
CONFIG="${CONFIG:-release}"   # debug for a smoke run (CI): the figures are then not targets
echo "==> swift build -c "$CONFIG" --product eventual-bench-sync" >&2
swift build -c "$CONFIG" --product eventual-bench-sync $BUILD_ARGS >&2
"$(swift build -c "$CONFIG" --show-bin-path $BUILD_ARGS)/eventual-bench-sync" "$CHANGES"
