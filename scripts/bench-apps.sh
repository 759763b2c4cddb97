#!/usr/bin/env bash
# Measures deployed apps: deploying N generated apps (default 50) to a fresh SQLite database, a
# server's start with them (to its first /health), and how long a running server takes to serve
# one more deployed by another process (to its first GET /v1/apps/{id} answered 200).
# Usage: scripts/bench-apps.sh [APPS]   (EVENTUAL_SERVER: the executable; default the debug build)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
apps=${1:-50}
[[ "$apps" =~ ^[0-9]+$ ]] && ((apps >= 1 && apps <= 1000)) || { echo "bench-apps: APPS must be 1 to 1000" >&2; exit 64; }
server=${EVENTUAL_SERVER:-.build/debug/eventual-server}
[[ -x "$server" ]] || timeout 1200 swift build --product eventual-server >/dev/null
work=$(mktemp -d)
pid=""
trap '[[ -n "$pid" ]] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
now_ms() { date +%s%3N; }
for i in $(seq 1 "$apps"); do
    cat > "$work/app$i.app.yaml" <<YAML
id: bench_app_$i
title: "Bench app $i"
collections:
  - name: bench_${i}_items
    scope: space
    fields:
      title: { type: string, nullable: false, maxLength: 200 }
      count: { type: counter }
      due: { type: date }
      done: { type: boolean }
    rules:
      - notBelow: { field: count, minimum: 0 }
YAML
done
database=(--database "$work/server.sqlite")
start=$(now_ms)
"$server" apps deploy "$work"/app*.app.yaml "${database[@]}" >/dev/null
echo "deploy $apps apps (one command): $(( $(now_ms) - start )) ms"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
start=$(now_ms)
"$server" --port "$port" --log-level error "${database[@]}" >/dev/null 2>&1 &
pid=$!
until curl -fs "http://127.0.0.1:$port/health" >/dev/null; do sleep 0.02; done
echo "server start with $((apps + 3)) apps served, to the first /health: $(( $(now_ms) - start )) ms"
curl -fs "http://127.0.0.1:$port/v1/apps/bench_app_$apps" >/dev/null || { echo "bench-apps: bench_app_$apps is not served" >&2; exit 1; }
cat > "$work/late.app.yaml" <<YAML
id: bench_late
title: "Deployed while running"
collections:
  - name: bench_late_items
    fields:
      title: { type: string }
YAML
start=$(now_ms)
"$server" apps deploy "$work/late.app.yaml" "${database[@]}" >/dev/null
until curl -fs "http://127.0.0.1:$port/v1/apps/bench_late" >/dev/null; do sleep 0.02; done
echo "deploy to a running server, to served: $(( $(now_ms) - start )) ms"
