#!/usr/bin/env bash
# Benchmarks a new SpendiQ device's first sync (release build): a server on loopback (SQLite)
# holds one person's RECORDS records, half pantry items and half SpendiQ transactions over two
# years, a tenth of each deleted; a new SpendiQ device, in its own process, syncs from nothing
# with SpendiQ's subscriptions (accounts, budgets and the last 30 days first, then the rest).
# Prints the time to priority 0, the time to all, the records received (no deletion, no pantry
# item: the device checks that each record it received is a row and that every live one came),
# and the device process's peak memory. The last line is:
#   first sync 100000: priority0 T0 s, all T1 s, received N, peak M MB
# Usage: scripts/bench-first-sync.sh [RECORDS]     (targets: T0 < 1 s, T1 < 5 s, M < 150 MB)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RECORDS="${1:-100000}"
BUILD_ARGS="${BUILD_ARGS:-}"   # e.g. --scratch-path .build-release
CONFIG="${CONFIG:-release}"   # debug for a smoke run (CI): the figures are then not targets
echo "==> swift build -c $CONFIG --product eventual-bench-first-sync" >&2
swift build -c "$CONFIG" --product eventual-bench-first-sync $BUILD_ARGS >&2
BIN="$(swift build -c "$CONFIG" --show-bin-path $BUILD_ARGS)/eventual-bench-first-sync"

work="$(mktemp -d /tmp/bench-first-sync.XXXXXX)"
mkfifo "$work/stdin"
# NB: the server serves until its standard input closes: the fifo, held open by fd 3 here.
"$BIN" serve "$RECORDS" <"$work/stdin" >"$work/ready" &
server=$!
exec 3>"$work/stdin"
cleanup() { exec 3>&- 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
echo "==> seeding $RECORDS records" >&2
until grep -q '^ready ' "$work/ready" 2>/dev/null; do
    kill -0 "$server" 2>/dev/null || { echo "bench-first-sync: the server stopped before it was ready" >&2; exit 1; }
    sleep 0.2
done
read -r _ port email password live records <"$work/ready"
"$BIN" device "$port" "$email" "$password" "$live" "$records"
