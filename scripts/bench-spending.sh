#!/usr/bin/env bash
# Benchmarks SpendiQ (release build) through the `spendiq` command, as a person would run it: a
# server on a free loopback port (SQLite), one verified person, 100,000 transactions imported
# from a bank-style CSV and synced; then the wall time of `spendiq dashboard --json` as a process
# (the median of RUNS runs), then a batch of 10,000 written offline (an import with the server
# unreachable) and the wall time of the `spendiq sync` that sends it. The last line printed is:
#   dashboard process D ms | sync 10000 S s
# Usage: scripts/bench-spending.sh [TRANSACTIONS] [BATCH]     (targets: D < 150 ms, S < 3 s)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
TRANSACTIONS="${1:-100000}"
BATCH="${2:-10000}"
RUNS="${RUNS:-15}"
BUILD_ARGS="${BUILD_ARGS:-}"   # e.g. --scratch-path .build-release
CONFIG="${CONFIG:-release}"   # debug for a smoke run (CI): the figures are then not targets
for product in eventual-server spendiq; do
    echo "==> swift build -c "$CONFIG" --product $product" >&2
    swift build -c "$CONFIG" --product "$product" $BUILD_ARGS >&2
done
BIN="$(swift build -c "$CONFIG" --show-bin-path $BUILD_ARGS)"
WORK="$(mktemp -d /tmp/spendiq-bench.XXXXXX)"
PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
"$BIN/eventual-server" --port "$PORT" --database "$WORK/server.sqlite" --mail-dir "$WORK/mail" --log-level error \
    --bcrypt-cost 4 --max-sync-records-per-user $((TRANSACTIONS + BATCH + 1000)) >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
cleanup() { kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
for _ in $(seq 1 100); do
    curl -fsS "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break
    sleep 0.1
done
export SPENDIQ_SERVER="http://127.0.0.1:$PORT" SPENDIQ_DATA_DIR="$WORK/device" NO_COLOR=1 SPENDIQ_ANSWER_TIMEOUT=60
SPENDIQ="$BIN/spendiq"
echo "bench-password" | "$SPENDIQ" register --username bench --email bench@example.com --password-stdin >&2
CODE="$(grep -ho 'code is [0-9]\{6\}' "$WORK"/mail/*.eml | head -1 | grep -o '[0-9]\{6\}')"
"$SPENDIQ" verify "$CODE" >&2
echo "bench-password" | "$SPENDIQ" login --email bench@example.com --password-stdin >&2
"$SPENDIQ" accounts add Bank --kind bank --currency EUR --opening 10000 >&2

# A bank's export: one row every ~5 minutes over the last year, amounts in euros, a few incomes.
python3 - "$TRANSACTIONS" "$WORK/year.csv" "$BATCH" "$WORK/batch.csv" <<'PY'
import random, sys, datetime
random.seed(7)
def write(count, path, salt):
    now = datetime.datetime.utcnow()
    with open(path, "w") as out:
        out.write("date,amount,description\n")
        for i in range(count):
            when = now - datetime.timedelta(minutes=random.randint(0, 365 * 24 * 60))
            income = random.random() < 0.03
            amount = random.randint(100, 300000) if income else -random.randint(50, 20000)
            out.write(f"{when:%Y-%m-%dT%H:%M},{amount / 100:.2f},shop {salt}-{i % 997} #{i}\n")
write(int(sys.argv[1]), sys.argv[2], "y")
write(int(sys.argv[3]), sys.argv[4], "b")
PY
echo "==> importing $TRANSACTIONS transactions and syncing them" >&2
"$SPENDIQ" import --csv "$WORK/year.csv" --account Bank >&2
"$SPENDIQ" sync >&2

echo "==> spendiq dashboard --json, $RUNS runs" >&2
"$SPENDIQ" dashboard --json >/dev/null
DASHBOARD_MS="$(python3 - "$SPENDIQ" "$RUNS" <<'PY'
import subprocess, sys, time, statistics
times = []
for _ in range(int(sys.argv[2])):
    start = time.perf_counter()
    subprocess.run([sys.argv[1], "dashboard", "--json"], check=True, stdout=subprocess.DEVNULL)
    times.append((time.perf_counter() - start) * 1000)
print(f"{statistics.median(times):.1f}")
PY
)"

echo "==> $BATCH transactions written offline, then one sync" >&2
SPENDIQ_SERVER="http://127.0.0.1:1" "$SPENDIQ" import --csv "$WORK/batch.csv" --account Bank >&2
"$SPENDIQ" status | head -2 >&2
SYNC_S="$(python3 - "$SPENDIQ" <<'PY'
import subprocess, sys, time
start = time.perf_counter()
subprocess.run([sys.argv[1], "sync"], check=True, stdout=subprocess.DEVNULL)
print(f"{time.perf_counter() - start:.2f}")
PY
)"
"$SPENDIQ" status | head -2 >&2
echo "dashboard process $DASHBOARD_MS ms | sync $BATCH $SYNC_S s"
