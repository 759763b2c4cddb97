#!/usr/bin/env bash
# Fills a server with a realistic week of usage from a few hundred simulated people, recorded
# through EventualKit's Analytics the way the apps record it and sent by the sync engine, so the
# dashboard has something to show. Makes an admin to look at it with.
#
# Usage: scripts/demo-analytics.sh [USERS]
#   Without DEMO_SERVER it starts eventual-server on ./data/demo.sqlite at http://127.0.0.1:8090
#   (left running; its pid is printed). With DEMO_SERVER=http://HOST:PORT it fills that server
#   (which must allow USERS registrations from this address) and DEMO_DATABASE (its --database)
#   is needed to make the admin.
# Then open http://127.0.0.1:8090/dashboard and sign in as demo-admin@demo.example / demo-password.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
USERS="${1:-300}"
echo "==> swift build --product eventual-demo-analytics --product eventual-server" >&2
swift build --product eventual-demo-analytics >&2
swift build --product eventual-server >&2
BIN="$(swift build --show-bin-path)"
SERVER="${DEMO_SERVER:-}"
DATABASE="${DEMO_DATABASE:-}"
if [[ -z "$SERVER" ]]; then
    DATABASE="./data/demo.sqlite"
    SERVER="http://127.0.0.1:8090"
    mkdir -p data
    "$BIN/eventual-server" serve --port 8090 --database "$DATABASE" --bcrypt-cost 4 \
        --max-registrations-per-hour 100000 --log-level warning >data/demo-server.log 2>&1 &
    echo "==> eventual-server pid $! on $SERVER (log: data/demo-server.log)" >&2
    for _ in $(seq 1 100); do curl -fsS "$SERVER/health" >/dev/null 2>&1 && break; sleep 0.2; done
fi
ADMIN="demo-admin@demo.example"
curl -fsS -X POST "$SERVER/users" -H 'Content-Type: application/json' \
    -d "{\"username\":\"demo_admin_$RANDOM\",\"email\":\"$ADMIN\",\"password\":\"demo-password\"}" >/dev/null 2>&1 \
    || echo "==> $ADMIN exists already" >&2
if [[ -n "$DATABASE" ]]; then
    "$BIN/eventual-server" user grant-admin "$ADMIN" --database "$DATABASE" >&2
else
    echo "==> set DEMO_DATABASE to make $ADMIN an admin (eventual-server user grant-admin $ADMIN)" >&2
fi
"$BIN/eventual-demo-analytics" --server "$SERVER" --users "$USERS"
echo "==> dashboard: $SERVER/dashboard ($ADMIN / demo-password)" >&2
