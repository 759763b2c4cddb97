#!/usr/bin/env bash
# Load test of the release build of eventual-server with wrk: 256 connections for 60 s against a
# mix of barcode look-ups, product posts, sync pushes and logins (scripts/bench/mix.lua), on a
# knowledge base imported from Open Food Facts (scripts: eventual-server import-products).
#
# Usage: scripts/load.sh [--database postgres://…]   (default: a fresh SQLite file in a temp dir;
#        a PostgreSQL database is used as is: give it an empty one)
#
# The last line printed is:
#   load: R req/s, errors E, p99 L ms
# where E counts non-2xx answers and socket errors (connect, read, write, timeout).
#
# Environment:
#   DURATION=60s CONNECTIONS=256 THREADS=2   wrk settings
#   USERS=32                                 accounts that share the load
#   LOGIN_SHARE=0.0005 POST_SHARE=0.05 PUSH_SHARE=0.10  shares of the mix (the rest are look-ups).
#       NB: a login is ~0.25 s of one core at bcrypt cost 12 and tokens last 7 days: at 0.2 % of
#       ~2,500 req/s the logins alone need more than the hashing pool's core and queue past wrk's
#       10 s timeout on a 2-core machine.
#   BCRYPT_COST=12                           the server's bcrypt cost (a login is ~0.2 s of CPU at 12)
#   BUILD_ARGS=""                            extra arguments for `swift build`
#   LOG_LEVEL=warning                        server --log-level
#   KEEP_LOAD_DIR=1                          keep the temp dir (database, logs, wrk output)
#   SERVER_ARGS=""                           extra arguments for the server, e.g. "--bcrypt-threads 2"
#   ROUTES=1                                 also print each route's requests and mean time, from the
#                                            server's GET /metrics (a token is made for the run)
set -euo pipefail

DATABASE=""
while (($#)); do
    case "$1" in
        --database) (($# >= 2)) || { echo "load: --database takes a postgres:// URL" >&2; exit 2; }; DATABASE="$2"; shift 2 ;;
        --database=*) DATABASE="${1#--database=}"; shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "load: unknown argument $1" >&2; exit 2 ;;
    esac
done

if [[ -n "$DATABASE" && ! "$DATABASE" =~ ^postgres(ql)?:// ]]; then
    echo "load: --database takes a postgres:// URL (a fresh SQLite file is the default)" >&2
    exit 2
fi

DURATION="${DURATION:-60s}"
CONNECTIONS="${CONNECTIONS:-256}"
THREADS="${THREADS:-2}"
USERS="${USERS:-32}"
BCRYPT_COST="${BCRYPT_COST:-12}"
BUILD_ARGS="${BUILD_ARGS:-}"
CONFIG="${CONFIG:-release}"   # debug for a smoke run (CI): the figures are then not targets
LOG_LEVEL="${LOG_LEVEL:-warning}"

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(cd "$SCRIPT_DIR/.." && pwd)"
CSV="${CSV:-$REPO_DIR/SampleData/off-products-1000-slim.csv}"

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'load: ERROR: %s\n' "$*" >&2; exit 1; }

SERVER_PID=""
DIR=""
SUCCESS=0
cleanup() {
    local status=$?
    if [[ -n "$SERVER_PID" ]]; then
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 1 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    if [[ -n "$DIR" && -d "$DIR" ]]; then
        if [[ "$SUCCESS" == 1 && "${KEEP_LOAD_DIR:-0}" != 1 ]]; then rm -rf "$DIR"; else echo "load: files kept in $DIR" >&2; fi
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

command -v wrk >/dev/null 2>&1 || die "wrk is not installed (apt-get install wrk)"
command -v curl >/dev/null 2>&1 || die "curl is required"
command -v python3 >/dev/null 2>&1 || die "python3 is required"

cd "$REPO_DIR"
log "building eventual-server (release)"
# shellcheck disable=SC2086
swift build -c "$CONFIG" --product eventual-server $BUILD_ARGS >&2
# shellcheck disable=SC2086
BIN="$(swift build -c "$CONFIG" --show-bin-path $BUILD_ARGS)/eventual-server"
[[ -x "$BIN" ]] || die "no executable at $BIN"

DIR="$(mktemp -d "${TMPDIR:-/tmp}/eventual-load.XXXXXX")"
DB="${DATABASE:-$DIR/load.sqlite}"
log "working in $DIR"

log "importing $CSV"
"$BIN" import-products "$CSV" --database "$DB" >&2

PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
BASE="http://127.0.0.1:$PORT"
METRICS_ARGS=()
if [[ "${ROUTES:-0}" == 1 ]]; then METRICS_ARGS=(--metrics-token "load-$RANDOM$RANDOM"); fi
# shellcheck disable=SC2086
"$BIN" --hostname 127.0.0.1 --port "$PORT" --database "$DB" --log-level "$LOG_LEVEL" "${METRICS_ARGS[@]}" ${SERVER_ARGS:-} \
    --bcrypt-cost "$BCRYPT_COST" --max-registrations-per-hour 100000 --max-failed-logins-per-address 100000 \
    --max-products-per-user 1000000 --max-connections 4096 >"$DIR/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 300); do
    curl -fsS "$BASE/health" >/dev/null 2>&1 && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$DIR/server.log" >&2; die "server exited during start-up"; }
    sleep 0.1
done
curl -fsS "$BASE/health" >/dev/null || die "server did not answer /health"
log "server up on port $PORT (pid $SERVER_PID)"

log "registering $USERS users and taking session tokens"
python3 - "$BASE" "$DIR" "$USERS" "$CSV" <<'PY' || die "setup failed"
import csv, json, sys, urllib.request, uuid
base, folder, count, csv_path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]

def call(method, path, body=None, token=None):
    headers = {"Content-Type": "application/json"}
    if token: headers["Authorization"] = f"Bearer {token}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, headers=headers, method=method)
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)

def valid(code):
    if not code.isdigit() or len(code) not in (8, 12, 13, 14): return False
    digits = [int(c) for c in code]
    total = sum(d * (3 if i % 2 == 0 else 1) for i, d in enumerate(reversed(digits[:-1])))
    return (10 - total % 10) % 10 == digits[-1]

barcodes = []
with open(csv_path, newline="", encoding="utf-8") as handle:
    for row in csv.DictReader(handle):
        if valid(row["code"].strip()) and row["product_name"].strip():
            barcodes.append(row["code"].strip())
barcodes = list(dict.fromkeys(barcodes))

users = []
for index in range(count):
    suffix = uuid.uuid4().hex[:8]
    email, password = f"load{index}.{suffix}@example.com", f"load-pass-{suffix}"
    call("POST", "/users", {"username": f"load{index}_{suffix}", "email": email, "password": password})
    token = call("POST", "/auth/login", {"email": email, "password": password})["accessToken"]
    users.append((email, password, token))

with open(f"{folder}/users.txt", "w") as out:
    for user in users: out.write(" ".join(user) + "\n")
with open(f"{folder}/barcodes.txt", "w") as out:
    for code in barcodes: out.write(code + "\n")
with open(f"{folder}/posts.txt", "w") as out:
    for index, user in enumerate(users):
        for code in barcodes[index * 4:(index + 1) * 4]:
            session = call("GET", f"/products?barcode={code}", token=user[2])["token"]
            out.write(f"{index + 1} {code} {session}\n")
print(f"{len(users)} users, {len(barcodes)} barcodes", file=sys.stderr)
PY

log "wrk -t$THREADS -c$CONNECTIONS -d$DURATION (mix: logins ${LOGIN_SHARE:-0.0005}, posts ${POST_SHARE:-0.05}, pushes ${PUSH_SHARE:-0.10}, look-ups the rest)"
LOAD_DIR="$DIR" LOGIN_SHARE="${LOGIN_SHARE:-0.0005}" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --timeout 10s --latency -s "$SCRIPT_DIR/bench/mix.lua" "$BASE" \
    >"$DIR/wrk.txt" 2>&1 || { cat "$DIR/wrk.txt" >&2; die "wrk failed"; }
cat "$DIR/wrk.txt"
kill -0 "$SERVER_PID" 2>/dev/null || { tail -20 "$DIR/server.log" >&2; die "the server died under load"; }
echo "server log: $(wc -l <"$DIR/server.log") lines, $(grep -ciE 'error|critical' "$DIR/server.log" || true) mentioning error/critical"
if [[ "${ROUTES:-0}" == 1 ]]; then
    echo "per route (method route status: requests, mean ms, share of requests over 100 ms / 1 s):"
    curl -fsS -H "Authorization: Bearer ${METRICS_ARGS[1]}" "$BASE/metrics" | python3 "$SCRIPT_DIR/bench/routes.py" \
        || echo "  (metrics unavailable)"
fi

RPS="$(awk '/^Requests\/sec:/ { print $2 }' "$DIR/wrk.txt")"
NON2XX="$(awk -F: '/Non-2xx or 3xx responses/ { gsub(/ /, "", $2); print $2 }' "$DIR/wrk.txt")"
SOCKET="$(awk '/Socket errors:/ { gsub(/,/, ""); print $4 + $6 + $8 + $10 }' "$DIR/wrk.txt")"
P99="$(awk '$1 == "99%" {
    v = $2; unit = v; sub(/^[0-9.]+/, "", unit); sub(/[a-z]+$/, "", v)
    f = (unit == "us") ? 0.001 : (unit == "ms") ? 1 : (unit == "s") ? 1000 : (unit == "m") ? 60000 : -1
    printf "%.2f", v * f; exit }' "$DIR/wrk.txt")"
[[ -n "$RPS" && -n "$P99" ]] || die "cannot parse wrk output in $DIR"
SUCCESS=1
printf 'load: %d req/s, errors %d, p99 %s ms\n' "$(printf '%.0f' "$RPS")" "$(( ${NON2XX:-0} + ${SOCKET:-0} ))" "$P99"
