#!/usr/bin/env bash
# The quota scenario of "Nothing lost when the server is restored, a person is over quota ...",
# through the built `pantry` on a real server with --max-sync-records-per-user 6: a device holds 5
# synced items; offline it adds 3, edits one item's quantity and removes another; the person's
# other device renames a third. On the next syncs the first device must receive the rename, send
# the edit and the removal, apply the one new item that fits, and list the other two as refused.
# Usage: scripts/quota-check.sh   (builds first; prints what each step said and PASS or FAIL)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
swift build >/dev/null 2>&1 || swift build >&2
BIN="$(swift build --show-bin-path)"
WORK="$(mktemp -d /tmp/eventual-quota.XXXXXX)"
PORT=$((20000 + RANDOM % 20000))
SERVER_PID=
trap '[[ -n "$SERVER_PID" ]] && kill "$SERVER_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT

"$BIN/eventual-server" --database "$WORK/server.sqlite" --port "$PORT" --bcrypt-cost 4 --log-level error \
    --max-sync-records-per-user 6 &
SERVER_PID=$!
for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$PORT/health" >/dev/null && break; sleep 0.1; done
pantry() { local device=$1; shift; timeout 60 "$BIN/pantry" --server "http://127.0.0.1:$PORT" --data-dir "$WORK/$device" "$@"; }
id_of() { pantry "$1" list --json | python3 -c "import json,sys; d=json.load(sys.stdin); items=d if isinstance(d,list) else d.get('items',d); print([i['id'] for i in items if i['name']=='$2'][0])"; }

echo "secret-pass-1" | pantry a register --username carol --email carol@example.com --password-stdin >/dev/null
echo "secret-pass-1" | pantry a login --email carol@example.com --password-stdin >/dev/null
for name in Eggs Milk Rice Tea Jam; do pantry a add --name "$name" --quantity 2 >/dev/null; done
pantry a sync >/dev/null
echo "secret-pass-1" | pantry b login --email carol@example.com --password-stdin >/dev/null

# Offline (the server stopped): three new items, an edit and a removal on device a
kill -STOP "$SERVER_PID"
for name in Figs Oats Kale; do pantry a add --name "$name" >/dev/null 2>&1 || true; done
pantry a edit "$(id_of a Milk)" --quantity 7 >/dev/null 2>&1 || true
pantry a remove "$(id_of a Rice)" >/dev/null 2>&1 || true
kill -CONT "$SERVER_PID"
# The other device renames a third item
pantry b edit "$(id_of b Tea)" --name "Green tea" >/dev/null
pantry b sync >/dev/null

echo "-- a sync: $(pantry a sync 2>&1 | tr '\n' ' ')" >&2
echo "-- a sync: $(pantry a sync 2>&1 | tr '\n' ' ')" >&2
echo "-- a failures: $(pantry a failures 2>&1 | tr '\n' ' ' | cut -c1-400)" >&2
pantry b sync >/dev/null 2>&1 || true

status=0
listing="$(pantry a list --json)"
names() { python3 -c "import json,sys; d=json.load(sys.stdin); items=d if isinstance(d,list) else d.get('items',d); print(','.join(sorted(i['name']+':'+str(i['quantity'])+':'+i['syncState']['state'] for i in items)))"; }
echo "a: $(names <<<"$listing")" >&2
echo "b: $(pantry b list --json | names)" >&2
grep -q '"Green tea"' <<<"$listing" || { echo "FAIL: the rename did not arrive" >&2; status=1; }
pantry b list --json | grep -q '"Rice"' && { echo "FAIL: the removal did not reach the other device" >&2; status=1; }
pantry b list --json | python3 -c "import json,sys; d=json.load(sys.stdin); items=d if isinstance(d,list) else d.get('items',d); sys.exit(0 if [i for i in items if i['name']=='Milk' and i['quantity']==7] else 1)" \
    || { echo "FAIL: the edit did not reach the other device" >&2; status=1; }
applied="$(pantry b list --json | python3 -c "import json,sys; d=json.load(sys.stdin); items=d if isinstance(d,list) else d.get('items',d); print(sum(1 for i in items if i['name'] in ('Figs','Oats','Kale')))")"
[[ "$applied" == 1 ]] || { echo "FAIL: $applied of the new items reached the server, expected the 1 that fits" >&2; status=1; }
refused="$(pantry a failures --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); l=d if isinstance(d,list) else d.get('failures',[]); print(sum(1 for f in l if 'uota' in json.dumps(f)))" || echo 0)"
[[ "$refused" == 2 ]] || { echo "FAIL: $refused changes listed as refused for the quota, expected 2" >&2; status=1; }
((status == 0)) && echo "PASS: the rename arrived, the edit and the removal went, one new item fits and two are refused" >&2
exit "$status"
