#!/usr/bin/env bash
# Benchmarks Tracking My Pantry (release build): seeds a pantry of ITEMS items straight into the
# signed-in user's database, then measures the p95 of the library's search call and the wall time
# of `pantry list --expiring 3d --json` as a process. A server runs on a free loopback port for
# the sign-in. The last line printed is:
#   search p95 S ms | list process T ms
# Usage: scripts/bench-pantry.sh [ITEMS]      (targets: S < 2 ms, T < 150 ms)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ITEMS="${1:-100000}"
BUILD_ARGS="${BUILD_ARGS:-}"   # e.g. --scratch-path .build-release
CONFIG="${CONFIG:-release}"   # debug for a smoke run (CI): the figures are then not targets
for product in eventual-server pantry pantry-bench; do
    echo "==> swift build -c "$CONFIG" --product $product" >&2
    swift build -c "$CONFIG" --product "$product" $BUILD_ARGS >&2
done
BIN="$(swift build -c "$CONFIG" --show-bin-path $BUILD_ARGS)"
WORK="$(mktemp -d /tmp/pantry-bench.XXXXXX)"
PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
"$BIN/eventual-server" --port "$PORT" --database "$WORK/server.sqlite" --log-level error >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
cleanup() { kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
for _ in $(seq 1 100); do
    curl -fsS "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break
    sleep 0.1
done
"$BIN/pantry-bench" "http://127.0.0.1:$PORT" "$WORK/device" "$BIN/pantry" "$ITEMS" SampleData/off-products-1000-slim.csv
