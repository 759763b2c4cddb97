#!/usr/bin/env bash
# Benchmarks sync over a slow link: a real server on loopback (SQLite) behind a fault proxy that
# carries 32 KiB/s each way with 300 ms of latency, and a device whose requests end at 5 s of
# silence, never for taking long. A new device's first sync of RECORDS pantry items (real product
# names), with pull pages plain and then gzip-compressed; a photo of PHOTO_MIB MiB; a drain of
# CHANGES offline edits. Each must complete with everything in. The last line is:
#   slow link 32 KiB/s: first sync plain P s (B B/record), gzip G s (b B/record) | photo ... | drain ...
# Usage: scripts/bench-slow-link.sh [RECORDS] [PHOTO_MIB] [CHANGES]   (default 10000 5 1000)
# The link, not the CPU, sets these figures: CONFIG=debug gives the same ones. RATE_KIB sets
# another link speed (the CI smoke run's: 512).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_ARGS="${BUILD_ARGS:-}"   # e.g. --scratch-path .build-release
CONFIG="${CONFIG:-release}"
echo "==> swift build -c $CONFIG --product eventual-bench-slow-link" >&2
swift build -c "$CONFIG" --product eventual-bench-slow-link $BUILD_ARGS >&2
"$(swift build -c "$CONFIG" --show-bin-path $BUILD_ARGS)/eventual-bench-slow-link" "${1:-10000}" "${2:-5}" "${3:-1000}" "${RATE_KIB:-32}"
