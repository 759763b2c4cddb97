#!/usr/bin/env bash
# Benchmarks live changes (release build). The server runs in a process of its own (two with
# DATABASE_URL: replicas on one PostgreSQL database, each device talking to one of them); a
# second process holds DEVICES devices with a live channel each, people in households of five,
# and ENGINES real engines, live, with a live query of their household's items and their timer an
# hour away. A writer pushes a new item into a household RATE times a second for SECONDS. Prints
#   live N devices: signal p50 A ms p95 B ms p99 C ms | visible p95 D ms | rss per device E KB | replicas p95 F ms
# signal: from a push's start to another member's channel hearing of it; visible: to the item
# showing in an engine's live query (the signal, the engine's pull, the live query's read);
# rss per device: the servers' resident memory grown by opening the channels, per channel;
# replicas: signals heard through the other server (PostgreSQL's NOTIFY between them).
# Usage: scripts/bench-live.sh [DEVICES] [ENGINES] [RATE] [SECONDS]   (default 10000 20 100 30)
#   DATABASE_URL=postgres://… runs two servers on that database (its tables are kept; each run
#   registers its own people).
# Targets (10,000 devices, this 2-core machine): B < 100 ms, D < 250 ms, E < 20 KB, F < 150 ms.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
DEVICES="${1:-10000}"
ENGINES="${2:-20}"
RATE="${3:-100}"
SECONDS_="${4:-30}"
BUILD_ARGS="${BUILD_ARGS:-}"   # e.g. --scratch-path .build-release
CONFIG="${CONFIG:-release}"   # debug for a smoke run (CI): the figures are then not targets
echo "==> swift build -c $CONFIG --product eventual-bench-live" >&2
swift build -c "$CONFIG" --product eventual-bench-live $BUILD_ARGS >&2
BIN="$(swift build -c "$CONFIG" --show-bin-path $BUILD_ARGS)/eventual-bench-live"
# NB: a descriptor per channel on each side, and some for the database and the setup's requests.
ulimit -n "$(ulimit -Hn)"
if (( $(ulimit -n) < DEVICES + 512 )); then
    echo "bench-live: $DEVICES channels need $((DEVICES + 512)) file descriptors; this shell may have $(ulimit -n)" >&2
    exit 1
fi

work="$(mktemp -d /tmp/bench-live.XXXXXX)"
mkfifo "$work/stdin"
servers=()
exec 3<>"$work/stdin"
cleanup() {
    exec 3>&- 2>/dev/null || true
    for pid in "${servers[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

# Starts one server; the next starts after it is ready (each migrates the database at start).
start_server() {
    local name="$1"; shift
    # NB: every server serves until its standard input closes: the fifo, held open by fd 3 here.
    "$BIN" serve "$@" <"$work/stdin" >"$work/$name" 3>&- &
    servers+=("$!")
    until grep -q '^ready ' "$work/$name" 2>/dev/null; do
        kill -0 "${servers[-1]}" 2>/dev/null || { echo "bench-live: the server stopped before it was ready" >&2; exit 1; }
        sleep 0.2
    done
}

if [[ -n "${DATABASE_URL:-}" ]]; then
    start_server a "$DATABASE_URL"
    start_server b "$DATABASE_URL"
    read -r _ port_a pid_a <"$work/a"
    read -r _ port_b pid_b <"$work/b"
    ports="$port_a,$port_b"; pids="$pid_a,$pid_b"
else
    start_server a
    read -r _ ports pids <"$work/a"
fi
echo "==> $DEVICES devices, $ENGINES engines, $RATE pushes a second for $SECONDS_ s (servers on $ports)" >&2
"$BIN" devices "$DEVICES" "$ENGINES" "$RATE" "$SECONDS_" "$ports" "$pids" 3>&-
