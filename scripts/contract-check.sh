#!/usr/bin/env bash
# Checks the running server against its own contract: builds `eventual-server`, starts it on a
# free loopback port with a throwaway SQLite database, signs a user up with curl and runs
# Schemathesis (`st`, from PyPI) over the document the server serves, with every check on.
#
#   scripts/contract-check.sh                 # debug build
#   BUILD_ARGS="-c release" scripts/contract-check.sh
#   EXAMPLES=50 SEED=7 scripts/contract-check.sh
#
# Exits non-zero on any failure; its last line is `contract: N operations, failures F`.
#
# NB: `POST /auth/logout` revokes the token it is sent with, and Schemathesis calls it in every
# phase with the one token it was given: every later request would be a 401 and test nothing.
# So each run gets a fresh token: the operations but logout, then logout alone, then the
# stateful phase (sequences of calls) last, on its own.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

EXAMPLES="${EXAMPLES:-100}"
SEED="${SEED:-20261123}"
read -r -a build_args <<<"${BUILD_ARGS:-}"

log() { printf '==> %s\n' "$*" >&2; }

command -v st >/dev/null || { echo "contract-check: Schemathesis is missing (pip install schemathesis)" >&2; exit 2; }

log "building eventual-server ${BUILD_ARGS:-}"
swift build "${build_args[@]}" --product eventual-server >&2
bin="$(swift build "${build_args[@]}" --show-bin-path)/eventual-server"

scratch="$(mktemp -d /tmp/eventual-contract.XXXXXX)"
server_pid=""
stop_server() {
    if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
        kill -TERM "$server_pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$scratch"
}
trap stop_server EXIT
trap 'exit 130' INT TERM

port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
base="http://127.0.0.1:$port"
log "starting eventual-server on $base"
# NB: a cheap bcrypt cost, and no throttles: Schemathesis registers many accounts and fails many
# sign-ins from one address, and a 429 is documented once for every operation (in the document's
# description) rather than under each: listing it under `login` would add a case to the generated
# client's answer, which the apps switch over exhaustively.
"$bin" serve --hostname 127.0.0.1 --port "$port" --database "$scratch/eventual.sqlite" --log-level warning \
    --bcrypt-cost 4 --max-registrations-per-hour 1000000 \
    --max-failed-logins 1000000 --max-failed-logins-per-address 1000000 \
    --max-failed-verifications 1000000 --max-failed-verifications-per-address 1000000 >"$scratch/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do
    curl -fsS "$base/health" >/dev/null 2>&1 && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$scratch/server.log" >&2; echo "contract-check: the server did not start" >&2; exit 1; }
    sleep 0.1
done

# A user, and an access token for each run.
suffix="$(date +%s)$$"
email="contract.$suffix@example.com" password="contract-$suffix"
curl -fsS -X POST "$base/users" -H 'Content-Type: application/json' \
    -d "{\"username\":\"contract_$suffix\",\"email\":\"$email\",\"password\":\"$password\"}" >/dev/null
token() {
    curl -fsS -X POST "$base/auth/login" -H 'Content-Type: application/json' \
        -d "{\"email\":\"$email\",\"password\":\"$password\"}" | python3 -c 'import json, sys; print(json.load(sys.stdin)["accessToken"])'
}

operations="$(python3 - "$base/openapi.yaml" <<'EOF'
import sys, urllib.request
# NB: counted without a YAML library: a method of a path is a key at four spaces under `paths:`.
text = urllib.request.urlopen(sys.argv[1]).read().decode()
methods = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
in_paths, count = False, 0
for line in text.splitlines():
    if line and not line.startswith(" "):
        in_paths = line.startswith("paths:")
    elif in_paths and line.startswith("    ") and not line.startswith("     ") and line.strip().rstrip(":") in methods:
        count += 1
print(count)
EOF
)"

failures=0
# Runs Schemathesis once with a fresh access token; adds the failures it found (and one for a
# run that failed without a report) to `failures`.
run_st() {
    local name="$1"; shift
    local report="$scratch/$name.json" status=0 found
    log "schemathesis: $name"
    st --config-file schemathesis.toml run "$base/openapi.yaml" -H "Authorization: Bearer $(token)" --checks all \
        --seed "$SEED" --max-examples "$EXAMPLES" --no-color --report json --report-json-path "$report" "$@" || status=$?
    found="$(python3 -c '
import json, sys
report = json.load(open(sys.argv[1]))
print(report["test_cases"]["unique_failures"] + len(report["errors"]))' "$report" 2>/dev/null || echo 1)"
    ((status == 0 || found > 0)) || found=1
    failures=$((failures + found))
}

# NB: `POST /auth/logout` revokes the token it is called with, in any phase; every later request
# of that run would be a 401 and test nothing. So it is tested on its own, with its own token.
run_st operations --phases examples,coverage,fuzzing --exclude-operation-id logout
run_st logout --phases examples,coverage,fuzzing --include-operation-id logout
run_st stateful --phases stateful

echo "contract: $operations operations, failures $failures"
((failures == 0))
