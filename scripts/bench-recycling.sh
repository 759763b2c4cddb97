#!/usr/bin/env bash
# Benchmarks SustainU's nearest-point search (release build): seeds POINTS recycling points
# (copies of the real Salzburg and Málaga points, jittered over a city-sized region around
# each), imports them with `eventual-server import-points`, then measures
#   - the p95 of GET /v1/recycling/points?near=LAT,LON&limit=20 on the server, over real HTTP,
#     one request at a time (the server keeps an in-memory index; visit counts are read fresh);
#   - the p95 of the library's offline nearest search (NearestSearch, the code the apps run on
#     their saved copy) over the same points.
# The last line printed is:
#   near server p95 S ms | near local p95 L ms          (targets: S < 5 ms, L < 5 ms)
# Usage: scripts/bench-recycling.sh [POINTS]   (default 100000)
# Environment: QUERIES=2000 (measured queries each), BUILD_ARGS="" (extra `swift build` arguments),
#   KEEP_BENCH_DIR=1 (keep the temp dir).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
POINTS="${1:-100000}"
QUERIES="${QUERIES:-2000}"
BUILD_ARGS="${BUILD_ARGS:-}"
CONFIG="${CONFIG:-release}"   # debug for a smoke run (CI): the figures are then not targets
DATA="${DATA:-SampleData}"
[[ "$POINTS" =~ ^[0-9]+$ && "$POINTS" -gt 0 ]] || { echo "bench-recycling: POINTS must be a positive number" >&2; exit 2; }
for product in eventual-server recycling-bench; do
    echo "==> swift build -c "$CONFIG" --product $product" >&2
    # shellcheck disable=SC2086
    swift build -c "$CONFIG" --product "$product" $BUILD_ARGS >&2
done
# shellcheck disable=SC2086
BIN="$(swift build -c "$CONFIG" --show-bin-path $BUILD_ARGS)"
WORK="$(mktemp -d /tmp/recycling-bench.XXXXXX)"
SERVER_PID=""
cleanup() {
    if [[ -n "$SERVER_PID" ]]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    if [[ "${KEEP_BENCH_DIR:-0}" == 1 ]]; then echo "bench-recycling: files kept in $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

echo "==> seeding $POINTS points around the real Salzburg and Málaga points" >&2
"$BIN/recycling-bench" seed "$WORK/points.geojson" "$POINTS" \
    "$DATA/osm-recycling-salzburg.geojson" "$DATA/osm-recycling-malaga-centre.geojson" >&2
echo "==> eventual-server import-points" >&2
start=$(date +%s.%N)
"$BIN/eventual-server" import-points "$WORK/points.geojson" --database "$WORK/server.sqlite" >&2
echo "    import took $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s" >&2

PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
"$BIN/eventual-server" --port "$PORT" --database "$WORK/server.sqlite" --log-level error >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 300); do
    curl -fsS "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; echo "bench-recycling: the server exited" >&2; exit 1; }
    sleep 0.1
done

echo "==> server: $QUERIES x GET /v1/recycling/points?near=…&limit=20 over HTTP" >&2
server_line="$("$BIN/recycling-bench" server "http://127.0.0.1:$PORT" "$WORK/points.geojson" "$QUERIES")"
echo "    $server_line" >&2
echo "==> local: $QUERIES x NearestSearch.nearest(limit: 20)" >&2
local_line="$("$BIN/recycling-bench" local "$WORK/points.geojson" "$QUERIES")"
echo "    $local_line" >&2

p95() { sed -E 's/.* p95 ([0-9.]+) ms.*/\1/' <<<"$1"; }
echo "near server p95 $(p95 "$server_line") ms | near local p95 $(p95 "$local_line") ms"
