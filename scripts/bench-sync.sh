#!/usr/bin/env bash
# Benchmarks the sync engine (release build) against a real server on loopback with SQLite:
# 10,000 changes made offline then drained in batches; the same sent one request per change;
# then a pull of 10,000 records into an empty second device; then a household of 3 people who
# share a space: one drains 10,000 changes into it, each of the other two pulls it into an empty
# device. Then the floor: SQLite alone writes the rows the batched drain left in the server's
# tables (one transaction, the server's pragmas) and reads the records back. The last three
# lines printed are:
#   drain 10000: batched T1 s, one-by-one T2 s, ratio R, B bytes/change | pull 10000: T3 s
#   floor (SQLite alone, the server's tables): write W rows F1 s, read N F2 s | drain D x its floor, pull P x
#   household of 3: drain 10000 into the shared space T4 s | pull 9000 by each of 2 members: T5 s, T6 s
# Usage: scripts/bench-sync.sh [CHANGES]      (targets: T1 < 2 s, R >= 25, T3 < 2 s, D and P within 5; T4 near T1, T5 and T6 near T3)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
CHANGES="${1:-10000}"
BUILD_ARGS="${BUILD_ARGS:-}"   # e.g. --scratch-path .build-release
CONFIG="${CONFIG:-release}"   # debug for a smoke run (CI): the figures are then not targets
echo "==> swift build -c "$CONFIG" --product eventual-bench-sync" >&2
swift build -c "$CONFIG" --product eventual-bench-sync $BUILD_ARGS >&2
"$(swift build -c "$CONFIG" --show-bin-path $BUILD_ARGS)/eventual-bench-sync" "$CHANGES"
