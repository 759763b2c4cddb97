#!/usr/bin/env bash
# Benchmarks the release build of eventual-server with wrk: barcode look-ups
# (GET /products?barcode=, authenticated) against a database seeded with 100,000 products and
# 150,000 votes, then GET /health as a baseline.
#
# Usage: scripts/bench-server.sh [--database postgres://user@host:port/db]
#   Default: a fresh SQLite file. With a PostgreSQL URL, a scratch database is created on that
#   server (needs psql and the right to CREATE DATABASE), used, and dropped afterwards.
#
# The server is measured twice in one run: at LOG_LEVEL (warning: no line per request), then at
# its default settings (--log-level info: one access-log line per request). The last line is:
#   lookup R1 req/s p99 L1 ms | health R2 req/s | ratio R1/R2 | rss M MB | default: lookup R3 req/s (D3%) | health R4 req/s (D4%)
# where R1, R2 are at LOG_LEVEL and R3, R4 at the default, D3 and D4 their difference from R1, R2.
#
# Environment:
#   DURATION=15s CONNECTIONS=64 THREADS=2   wrk settings for every measured run
#   WARMUP=3s                               look-up warm-up before measuring
#   LOG_LEVEL=warning                       server --log-level of the first measurement
#   DEFAULT_RUN=1                           0 skips the measurement at the default settings
#   PRODUCTS=100000 VOTES=150000 EXTRA_USERS=20   seed sizes
#   BUILD_ARGS=""                           extra arguments for `swift build`
#   KEEP_BENCH_DIR=1                        keep the temp dir (database, logs) after a success
set -euo pipefail

POSTGRES_URL=""
while (($#)); do
    case "$1" in
        --database) POSTGRES_URL="$2"; shift 2 ;;
        --database=*) POSTGRES_URL="${1#--database=}"; shift ;;
        -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
        *) echo "bench-server: unknown argument $1" >&2; exit 2 ;;
    esac
done
if [[ -n "$POSTGRES_URL" && ! "$POSTGRES_URL" =~ ^postgres(ql)?:// ]]; then
    echo "bench-server: --database takes a postgres:// URL (SQLite is the default)" >&2
    exit 2
fi

DURATION="${DURATION:-15s}"
CONNECTIONS="${CONNECTIONS:-64}"
THREADS="${THREADS:-2}"
WARMUP="${WARMUP:-3s}"
LOG_LEVEL="${LOG_LEVEL:-warning}"
DEFAULT_RUN="${DEFAULT_RUN:-1}"
PRODUCTS="${PRODUCTS:-100000}"
VOTES="${VOTES:-150000}"
EXTRA_USERS="${EXTRA_USERS:-20}"
BUILD_ARGS="${BUILD_ARGS:-}"
CONFIG="${CONFIG:-release}"   # debug for a smoke run (CI): the figures are then not targets

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(cd "$SCRIPT_DIR/.." && pwd)"
# The product names come from the Open Food Facts sample in the shared folder beside the repository.
NAMES_CSV="${NAMES_CSV:-$REPO_DIR/SampleData/off-products-1000-slim.csv}"
BENCH_DIR="$SCRIPT_DIR/bench"

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'bench-server: ERROR: %s\n' "$*" >&2; exit 1; }

SERVER_PID=""
DIR=""
SUCCESS=0
# stop_server: SIGTERM, then SIGKILL if it has not exited after STOP_TIMEOUT seconds.
STOP_TIMEOUT="${STOP_TIMEOUT:-10}"
STOP_KILLED=0
stop_server() {
    [[ -n "$SERVER_PID" ]] || return 0
    local pid="$SERVER_PID" status=0 state i
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < STOP_TIMEOUT * 10; i++)); do
        # Exited (a zombie until reaped below) or gone?
        state="$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null || echo gone)"
        [[ "$state" == Z || "$state" == gone ]] && break
        sleep 0.1
    done
    if [[ "$state" != Z && "$state" != gone ]]; then
        echo "bench-server: warning: server (pid $pid) still running ${STOP_TIMEOUT}s after SIGTERM; sending SIGKILL" >&2
        kill -KILL "$pid" 2>/dev/null || true
        STOP_KILLED=$((STOP_KILLED + 1))
    fi
    wait "$pid" 2>/dev/null || status=$?
    SERVER_PID=""
    if [[ "$status" != 0 && "$status" != 137 ]]; then
        echo "bench-server: warning: server exited with status $status after SIGTERM" >&2
    fi
    return 0
}

SCRATCH_PG=""
cleanup() {
    local status=$?
    stop_server || true
    if [[ -n "$SCRATCH_PG" ]]; then
        psql "$POSTGRES_URL" -X -q -c "DROP DATABASE IF EXISTS $SCRATCH_PG WITH (FORCE)" >/dev/null 2>&1 || true
    fi
    if [[ -n "$DIR" && -d "$DIR" ]]; then
        if [[ "$SUCCESS" == 1 && "${KEEP_BENCH_DIR:-0}" != 1 ]]; then
            rm -rf "$DIR"
        else
            echo "bench-server: files kept in $DIR" >&2
        fi
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- 1. wrk -------------------------------------------------------------------------------
if ! command -v wrk >/dev/null 2>&1; then
    log "installing wrk"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y wrk; then
        apt-get update
        apt-get install -y wrk
    fi
fi
command -v wrk >/dev/null 2>&1 || die "wrk is not installed"
command -v curl >/dev/null 2>&1 || die "curl is required"
command -v python3 >/dev/null 2>&1 || die "python3 is required"

# ---- 2. release build ---------------------------------------------------------------------
cd "$REPO_DIR"
log "building eventual-server (release)"
# shellcheck disable=SC2086
swift build -c "$CONFIG" --product eventual-server $BUILD_ARGS
# shellcheck disable=SC2086
BIN_DIR="$(swift build -c "$CONFIG" --show-bin-path $BUILD_ARGS)"
BIN="$BIN_DIR/eventual-server"
[[ -x "$BIN" ]] || die "no executable at $BIN"
log "binary: $BIN"

# ---- helpers ------------------------------------------------------------------------------
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# start_server LEVEL LOGFILE: sets SERVER_PID, waits for /health.
start_server() {
    local level="$1" logfile="$2"
    PORT="$(free_port)"
    BASE="http://127.0.0.1:$PORT"
    "$BIN" --hostname 127.0.0.1 --port "$PORT" --database "$DB" --log-level "$level" >"$logfile" 2>&1 &
    SERVER_PID=$!
    local i
    for i in $(seq 1 300); do
        if curl -fsS "$BASE/health" >/dev/null 2>&1; then
            log "server up on port $PORT (pid $SERVER_PID)"
            return 0
        fi
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            cat "$logfile" >&2 || true
            die "server exited during start-up (log above)"
        fi
        sleep 0.1
    done
    cat "$logfile" >&2 || true
    die "server did not answer /health within 30 s"
}

json_field() { python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }

# ---- 3. migrate, register, log in ---------------------------------------------------------
DIR="$(mktemp -d "${TMPDIR:-/tmp}/eventual-bench.XXXXXX")"
DB="$DIR/bench.sqlite"
if [[ -n "$POSTGRES_URL" ]]; then
    command -v psql >/dev/null 2>&1 || die "psql is required for --database postgres://…"
    SCRATCH_PG="eventual_bench_$(python3 -c 'import uuid; print(uuid.uuid4().hex[:12])')"
    psql "$POSTGRES_URL" -X -q -v ON_ERROR_STOP=1 -c "CREATE DATABASE $SCRATCH_PG" >/dev/null || die "cannot create database $SCRATCH_PG"
    DB="$(python3 - "$POSTGRES_URL" "$SCRATCH_PG" <<'PY'
import sys, urllib.parse
parts = urllib.parse.urlsplit(sys.argv[1])
print(urllib.parse.urlunsplit(parts._replace(path="/" + sys.argv[2])))
PY
)"
    log "PostgreSQL scratch database $SCRATCH_PG"
fi
log "working in $DIR"

start_server info "$DIR/server-setup.log"

EMAIL="bench@example.com"
PASSWORD="bench-password-123"
code="$(curl -sS -o "$DIR/register.json" -w '%{http_code}' -X POST "$BASE/users" \
    -H 'Content-Type: application/json' \
    -d "{\"username\":\"bench_runner\",\"email\":\"$EMAIL\",\"password\":\"$PASSWORD\"}")"
[[ "$code" == 201 ]] || die "POST /users answered $code: $(cat "$DIR/register.json")"

code="$(curl -sS -o "$DIR/login.json" -w '%{http_code}' -X POST "$BASE/auth/login" \
    -H 'Content-Type: application/json' \
    -d "{\"email\":\"$EMAIL\",\"password\":\"$PASSWORD\"}")"
[[ "$code" == 201 ]] || die "POST /auth/login answered $code: $(cat "$DIR/login.json")"
TOKEN="$(json_field accessToken <"$DIR/login.json")"

code="$(curl -sS -o "$DIR/me.json" -w '%{http_code}' "$BASE/users/me" -H "Authorization: Bearer $TOKEN")"
[[ "$code" == 200 ]] || die "GET /users/me answered $code: $(cat "$DIR/me.json")"
USER_ID="$(json_field id <"$DIR/me.json")"
log "registered bench_runner ($USER_ID)"

stop_server

# ---- 4. seed ------------------------------------------------------------------------------
log "seeding $PRODUCTS products and $VOTES votes"
BARCODES="$DIR/barcodes.txt"
python3 "$BENCH_DIR/seed_products.py" "$DB" "$USER_ID" "$BARCODES" \
    --products "$PRODUCTS" --votes "$VOTES" --extra-users "$EXTRA_USERS" --names "$NAMES_CSV"

# ---- 5-7. measure: the server at a log level, checked, warmed up, wrk, peak memory --------
export BENCH_TOKEN="$TOKEN" BENCH_BARCODES="$BARCODES"

# measure LEVEL NAME: writes $DIR/wrk-{lookup,health}-NAME.txt, $DIR/server-NAME.log and $DIR/rss-NAME (kB).
measure() {
    local level="$1" name="$2"
    start_server "$level" "$DIR/server-$name.log"

    # Sanity check: a few random seeded barcodes must answer 200 with products.
    python3 - "$BASE" "$TOKEN" "$BARCODES" <<'EOF' || die "look-up sanity check failed"
import json, random, sys, urllib.request, urllib.error
base, token, path = sys.argv[1:4]
codes = [line.strip() for line in open(path) if line.strip()]
for code in random.sample(codes, min(20, len(codes))):
    req = urllib.request.Request(f"{base}/products?barcode={code}", headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            body = json.load(resp)
            status = resp.status
    except urllib.error.HTTPError as error:
        sys.exit(f"GET /products?barcode={code} answered {error.code}: {error.read()[:300]!r}")
    if status != 200 or not body.get("products") or not body.get("token"):
        sys.exit(f"GET /products?barcode={code}: status {status}, body {json.dumps(body)[:300]}")
    if any(p.get("barcode") != code for p in body["products"]):
        sys.exit(f"GET /products?barcode={code} returned another barcode's products")
print(f"sanity check: 20 look-ups answered 200 with products")
EOF

    local lookup_url="$BASE/products?barcode="
    log "warm-up ($WARMUP), --log-level $level"
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" -s "$BENCH_DIR/lookup.lua" "$lookup_url" >"$DIR/wrk-warmup-$name.txt" 2>&1 \
        || { cat "$DIR/wrk-warmup-$name.txt" >&2; die "wrk warm-up failed"; }

    log "look-up: wrk -t$THREADS -c$CONNECTIONS -d$DURATION --latency (--log-level $level)"
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -s "$BENCH_DIR/lookup.lua" "$lookup_url" \
        >"$DIR/wrk-lookup-$name.txt" 2>&1 || { cat "$DIR/wrk-lookup-$name.txt" >&2; die "wrk look-up run failed"; }

    log "health: wrk -t$THREADS -c$CONNECTIONS -d$DURATION --latency (--log-level $level)"
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency "$BASE/health" \
        >"$DIR/wrk-health-$name.txt" 2>&1 || { cat "$DIR/wrk-health-$name.txt" >&2; die "wrk health run failed"; }

    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$DIR/server-$name.log" >&2; die "server died during the benchmark"; }
    awk '/^VmHWM:/ { print $2 }' "/proc/$SERVER_PID/status" >"$DIR/rss-$name"
    [[ -s "$DIR/rss-$name" ]] || die "cannot read VmHWM of pid $SERVER_PID"
    stop_server
}

measure "$LOG_LEVEL" quiet
if [[ "$DEFAULT_RUN" == 1 ]]; then
    measure info default
fi
HWM_KB="$(cat "$DIR/rss-quiet")"
RSS_MB="$(awk -v kb="$HWM_KB" 'BEGIN { printf "%d", kb / 1024 + 0.5 }')"

# ---- 8. report ----------------------------------------------------------------------------
requests_per_sec() { awk '/^Requests\/sec:/ { print $2 }' "$1"; }
non_2xx() { awk -F: '/Non-2xx or 3xx responses/ { gsub(/ /, "", $2); print $2 }' "$1"; }
socket_errors() { grep -E '^ *Socket errors:' "$1" || true; }
# The 99% latency line of --latency, in milliseconds (wrk prints us, ms, s or m).
p99_ms() {
    awk '$1 == "99%" {
        v = $2; unit = v; sub(/^[0-9.]+/, "", unit); sub(/[a-z]+$/, "", v)
        f = (unit == "us") ? 0.001 : (unit == "ms") ? 1 : (unit == "s") ? 1000 : (unit == "m") ? 60000 : -1
        if (f < 0) { print "bad unit " unit > "/dev/stderr"; exit 1 }
        printf "%.2f", v * f; exit
    }' "$1"
}

RUNS="quiet"
[[ "$DEFAULT_RUN" == 1 ]] && RUNS="quiet default"
level_of() { [[ "$1" == quiet ]] && echo "$LOG_LEVEL" || echo "info, the default"; }

for run in $RUNS; do
    echo
    echo "---- look-up at --log-level $(level_of "$run"): GET /products?barcode=<random seeded> ($(wc -l <"$BARCODES") barcodes) ----"
    cat "$DIR/wrk-lookup-$run.txt"
    echo
    echo "---- health at --log-level $(level_of "$run"): GET /health ----"
    cat "$DIR/wrk-health-$run.txt"
done
echo

NON2XX=0
for run in $RUNS; do
    lookup_non2xx="$(non_2xx "$DIR/wrk-lookup-$run.txt")"; lookup_non2xx="${lookup_non2xx:-0}"
    health_non2xx="$(non_2xx "$DIR/wrk-health-$run.txt")"; health_non2xx="${health_non2xx:-0}"
    echo "non-2xx responses at --log-level $(level_of "$run"): look-up $lookup_non2xx, health $health_non2xx"
    [[ "$lookup_non2xx" == 0 && "$health_non2xx" == 0 ]] || NON2XX=1
    for f in "wrk-lookup-$run" "wrk-health-$run"; do
        errors="$(socket_errors "$DIR/$f.txt")"
        [[ -z "$errors" ]] || echo "warning: $f:$errors"
    done
    server_errors="$(grep -ciE 'error|critical' "$DIR/server-$run.log" || true)"
    echo "server log: $(wc -l <"$DIR/server-$run.log") lines, $server_errors mentioning error/critical (level $(level_of "$run"))"
    if [[ "$server_errors" != 0 ]]; then
        grep -iE 'error|critical' "$DIR/server-$run.log" | head -5
    fi
    echo "server peak RSS (VmHWM): $(cat "$DIR/rss-$run") kB"
done
if [[ "$STOP_KILLED" != 0 ]]; then
    echo "warning: the server ignored SIGTERM (no exit within ${STOP_TIMEOUT}s) $STOP_KILLED time(s) and was killed"
fi
echo

[[ "$NON2XX" == 0 ]] || die "wrk saw non-2xx responses (above); see $DIR"

R1="$(requests_per_sec "$DIR/wrk-lookup-quiet.txt")"
R2="$(requests_per_sec "$DIR/wrk-health-quiet.txt")"
L1="$(p99_ms "$DIR/wrk-lookup-quiet.txt")"
[[ -n "$R1" && -n "$R2" && -n "$L1" ]] || die "cannot parse wrk output in $DIR"
DEFAULT_PART=""
if [[ "$DEFAULT_RUN" == 1 ]]; then
    R3="$(requests_per_sec "$DIR/wrk-lookup-default.txt")"
    R4="$(requests_per_sec "$DIR/wrk-health-default.txt")"
    [[ -n "$R3" && -n "$R4" ]] || die "cannot parse wrk output in $DIR"
    DEFAULT_PART="$(awk -v r1="$R1" -v r2="$R2" -v r3="$R3" -v r4="$R4" 'BEGIN {
        printf " | default: lookup %d req/s (%+.0f%%) | health %d req/s (%+.0f%%)",
            r3 + 0.5, (r1 > 0 ? (r3 - r1) * 100 / r1 : 0), r4 + 0.5, (r2 > 0 ? (r4 - r2) * 100 / r2 : 0)
    }')"
fi

SUCCESS=1
awk -v r1="$R1" -v r2="$R2" -v l1="$L1" -v m="$RSS_MB" -v rest="$DEFAULT_PART" 'BEGIN {
    printf "lookup %d req/s p99 %s ms | health %d req/s | ratio %.2f | rss %d MB%s\n",
        r1 + 0.5, l1, r2 + 0.5, (r2 > 0 ? r1 / r2 : 0), m, rest
}'
