#!/usr/bin/env bash
# Benchmarks analytics (release build) against a real server on loopback with SQLite:
# EVENTS usage events (1,000,000 by default) from 200 users posted through POST /v1/events in
# batches of 500 on 8 connections, then every question over the last 30 days (median of three).
# Prints one line per question; the last line is:
#   ingest E events/s | slowest question Q ms
# Usage: scripts/bench-analytics.sh [EVENTS]     (targets: E > 50,000, Q < 200)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
EVENTS="${1:-1000000}"
BUILD_ARGS="${BUILD_ARGS:-}"   # e.g. --scratch-path .build-release
CONFIG="${CONFIG:-release}"   # debug for a smoke run (CI): the figures are then not targets
echo "==> swift build -c "$CONFIG" --product eventual-bench-analytics" >&2
swift build -c "$CONFIG" --product eventual-bench-analytics $BUILD_ARGS >&2
"$(swift build -c "$CONFIG" --show-bin-path $BUILD_ARGS)/eventual-bench-analytics" "$EVENTS"
