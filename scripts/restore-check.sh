#!/usr/bin/env bash
# The restore scenario of "Nothing lost when the server is restored", through the built `pantry`
# and `eventual-server` on a real server (SQLite): Alice (two devices) and Bob share a household;
# the database is backed up with `eventual-server backup` while the server runs; Alice adds Tea and
# Bob adds Figs, both synced; the server is stopped, the backup put back, the server started; Alice
# adds Jam and Bob adds Oats; everyone syncs three times; then every device, and a new one of
# Alice's, must list the same items, field by field (`pantry list --json`).
# Usage: scripts/restore-check.sh   (builds first; prints each device's items and PASS or FAIL)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
swift build >/dev/null 2>&1 || swift build >&2
BIN="$(swift build --show-bin-path)"
WORK="$(mktemp -d /tmp/eventual-restore.XXXXXX)"
PORT=$((20000 + RANDOM % 20000))
SERVER_PID=
trap '[[ -n "$SERVER_PID" ]] && kill "$SERVER_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT

start_server() {
    "$BIN/eventual-server" --database "$WORK/server.sqlite" --port "$PORT" --bcrypt-cost 4 --log-level error &
    SERVER_PID=$!
    for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$PORT/health" >/dev/null && return; sleep 0.1; done
    echo "the server did not start" >&2; exit 1
}
stop_server() { kill "$SERVER_PID"; wait "$SERVER_PID" || true; SERVER_PID=; }
pantry() { local device=$1; shift; timeout 60 "$BIN/pantry" --server "http://127.0.0.1:$PORT" --data-dir "$WORK/$device" "$@"; }
sync_all() { for device in a1 b a2; do pantry "$device" sync || true; done; }
items() { pantry "$1" list --json | python3 -c 'import json,sys; d=json.load(sys.stdin); items=d if isinstance(d,list) else d.get("items",d); print(json.dumps(sorted(({k:v for k,v in i.items() if k not in ("syncState",)} for i in items), key=lambda i:i["name"]), sort_keys=True))'; }

start_server
echo "alice-pass-1" | pantry a1 register --username alice --email alice@example.com --password-stdin >/dev/null
echo "bob-pass-12" | pantry b register --username bob --email bob@example.com --password-stdin >/dev/null
echo "alice-pass-1" | pantry a1 login --email alice@example.com --password-stdin >/dev/null
echo "bob-pass-12" | pantry b login --email bob@example.com --password-stdin >/dev/null
echo "alice-pass-1" | pantry a2 login --email alice@example.com --password-stdin >/dev/null
pantry a1 household create Home >/dev/null
pantry a1 household use Home >/dev/null
pantry a1 sync >/dev/null
pantry a1 household invite bob >/dev/null
pantry b sync >/dev/null
invitation="$(pantry b household invitations --json | python3 -c 'import json,sys; d=json.load(sys.stdin); l=d if isinstance(d,list) else d.get("invitations",[]); print(l[0]["id"])')"
pantry b household accept "$invitation" >/dev/null
pantry b household use Home >/dev/null
for name in Eggs Milk Rice; do pantry a1 add --name "$name" >/dev/null; done
sync_all; sync_all

echo "== backup while the server runs" >&2
"$BIN/eventual-server" backup "$WORK/backup.sqlite" --database "$WORK/server.sqlite" >&2
pantry a1 add --name Tea >/dev/null
pantry b add --name Figs >/dev/null
sync_all; sync_all

echo "== stop, put the backup back, start" >&2
stop_server
rm -f "$WORK/server.sqlite-wal" "$WORK/server.sqlite-shm"
cp "$WORK/backup.sqlite" "$WORK/server.sqlite"
start_server
pantry a1 add --name Jam >/dev/null
pantry b add --name Oats >/dev/null
for round in 1 2 3; do
    for device in a1 b a2; do echo "-- $device sync $round: $(pantry "$device" sync 2>&1 | tr '\n' ' ')" >&2; done
done
echo "alice-pass-1" | pantry a3 login --email alice@example.com --password-stdin >/dev/null

status=0
expected="$(items a3)"
for device in a1 a2 b a3; do
    got="$(items "$device")"
    echo "$device: $(pantry "$device" list --json | python3 -c 'import json,sys; d=json.load(sys.stdin); items=d if isinstance(d,list) else d.get("items",d); print(", ".join(sorted(i["name"] for i in items)))')" >&2
    [[ "$got" == "$expected" ]] || { echo "FAIL: $device differs from a new device of Alice's" >&2; status=1; }
done
for name in Eggs Figs Jam Milk Oats Rice Tea; do
    grep -q "\"name\": \"$name\"" <<<"$expected" || { echo "FAIL: $name is missing" >&2; status=1; }
done
((status == 0)) && echo "PASS: every device and a new one list the same items after the restore" >&2
exit "$status"
