#!/usr/bin/env bash
# Benchmarks attachments through the outbox (release build) against a real server on loopback
# (SQLite, blobs in the database): COUNT photos of MIB MiB attached offline to pantry items, then
# sent (throughput in MiB/s); then another person's COUNT photos sent through a fault proxy that
# cuts the connection every 5 MiB, until all are in (bytes sent over bytes stored: what resuming
# costs). Every blob the server keeps is checked against its SHA-256. The last line is:
#   attachments 200 x 2 MiB: T MiB/s | with cuts: overhead O
# Usage: scripts/bench-attachments.sh [COUNT] [MIB]     (target: O < 1.1)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
COUNT="${1:-200}"
MIB="${2:-2}"
BUILD_ARGS="${BUILD_ARGS:-}"   # e.g. --scratch-path .build-release
CONFIG="${CONFIG:-release}"   # debug for a smoke run (CI): the figures are then not targets
echo "==> swift build -c $CONFIG --product eventual-bench-attachments" >&2
swift build -c "$CONFIG" --product eventual-bench-attachments $BUILD_ARGS >&2
"$(swift build -c "$CONFIG" --show-bin-path $BUILD_ARGS)/eventual-bench-attachments" "$COUNT" "$MIB"
