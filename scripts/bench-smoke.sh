#!/usr/bin/env bash
# Runs every benchmark at a tiny size on the debug build, so that a benchmark that no longer
# runs fails CI (one did: bench-sync pulled 0 of 10000 for weeks and nobody saw it). The
# figures printed here are not targets: the real runs are the scripts themselves, release build,
# default sizes (docs/performance.md).
#
# Usage: scripts/bench-smoke.sh        (needs wrk for bench-server and load)
# Prints each benchmark's last line; exits non-zero at the first that fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CONFIG=debug

run() {
    local name="$1"; shift
    local log; log="$(mktemp /tmp/bench-smoke.XXXXXX)"
    local start=$SECONDS
    if ! timeout 600 "$@" >"$log" 2>&1; then
        echo "bench-smoke: $name FAILED; its output ends:" >&2
        tail -20 "$log" >&2
        rm -f "$log"
        exit 1
    fi
    # NB: the last line that is not a log line: a server stopping after the figures may log one.
    local figures
    figures="$(grep -avE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]+[-+Z0-9:]* (trace|debug|info|notice|warning|error|critical) ' "$log" | tail -1 || true)"
    printf 'bench-smoke: %-18s %3ss  %s\n' "$name" "$((SECONDS - start))" "$figures"
    rm -f "$log"
}

run bench-sync scripts/bench-sync.sh 300
run bench-first-sync scripts/bench-first-sync.sh 2000
run bench-live scripts/bench-live.sh 50 2 10 3
run bench-attachments scripts/bench-attachments.sh 4 2
run bench-slow-link env RATE_KIB=512 scripts/bench-slow-link.sh 300 1 30
run bench-apps scripts/bench-apps.sh 5
run bench-backfill scripts/bench-backfill.sh 2000
run bench-pantry scripts/bench-pantry.sh 300
run bench-recycling env QUERIES=50 scripts/bench-recycling.sh 1000
run bench-spending env RUNS=2 scripts/bench-spending.sh 600 200
run bench-analytics scripts/bench-analytics.sh 3000
run bench-server env DURATION=2s WARMUP=1s PRODUCTS=500 VOTES=500 EXTRA_USERS=2 scripts/bench-server.sh
run load env DURATION=3s USERS=4 BCRYPT_COST=4 scripts/load.sh
