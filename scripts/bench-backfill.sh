#!/usr/bin/env bash
# Measures a back fill of a field that version 2 of an app added, as a device that kept nothing
# while it ran version 1 asks for it (docs/engine.md, A new version of an app): a server on a
# fresh SQLite database holds RECORDS records (default 100,000) written at version 2, each with a
# `brand` from Open Food Facts (SampleData/off-products-1000-slim.csv; a product without one
# leaves the record without), and the device pulls `field=bench_books.brand` in pages of 1000
# with gzip, as EventualKit does. Prints the time, the records sent, and the bytes on the wire
# against the bytes of the new values alone (each value's JSON) and of the values with their
# record ids (the least a device must be told to put a value in its row). Goal: under 2x.
# Usage: scripts/bench-backfill.sh [RECORDS]   (EVENTUAL_SERVER: the executable; default the debug build)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
records=${1:-100000}
[[ "$records" =~ ^[0-9]+$ ]] && ((records >= 1 && records <= 2000000)) || { echo "bench-backfill: RECORDS must be 1 to 2000000" >&2; exit 64; }
server=${EVENTUAL_SERVER:-.build/debug/eventual-server}
[[ -x "$server" ]] || timeout 1200 swift build --product eventual-server >/dev/null
work=$(mktemp -d)
pid=""
trap '[[ -n "$pid" ]] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
cat > "$work/books.app.yaml" <<'YAML'
id: bench_books
title: Bench books
version: 2
collections:
  - name: bench_books
    scope: space
    fields:
      name: { type: string, nullable: false, maxLength: 200 }
      brand: { type: string, maxLength: 200 }
YAML
database=(--database "$work/server.sqlite")
"$server" apps deploy "$work/books.app.yaml" "${database[@]}" >/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
"$server" --port "$port" --log-level error --bcrypt-cost 4 "${database[@]}" >"$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 200); do
    curl -fs "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
    kill -0 "$pid" 2>/dev/null || { cat "$work/server.log" >&2; echo "bench-backfill: the server did not start" >&2; exit 1; }
    sleep 0.05
done
python3 - "http://127.0.0.1:$port" "$records" SampleData/off-products-1000-slim.csv <<'PY'
import csv, gzip, json, sys, time, urllib.request

base, records, products = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def call(method, path, body=None, token=None, gzipped=False):
    request = urllib.request.Request(base + path, method=method, data=None if body is None else json.dumps(body).encode())
    request.add_header("Content-Type", "application/json")
    if token: request.add_header("Authorization", "Bearer " + token)
    if gzipped: request.add_header("Accept-Encoding", "gzip")
    with urllib.request.urlopen(request) as answer:
        raw = answer.read()
        text = gzip.decompress(raw) if answer.headers.get("Content-Encoding") == "gzip" else raw
        return json.loads(text), len(raw), len(text)

call("POST", "/users", {"username": "bench", "email": "bench@example.com", "password": "bench-password"})
token = call("POST", "/auth/login", {"email": "bench@example.com", "password": "bench-password"})[0]["accessToken"]
with open(products, newline="", encoding="utf-8") as file:
    catalog = [(row["product_name"] or row["code"], row["brands"].split(",")[0].strip()) for row in csv.DictReader(file)]

# Written at version 2: every record its name, and its brand where the product has one.
now = int(time.time() * 1000)
values = {}
for start in range(0, records, 500):
    changes = []
    for i in range(start, min(records, start + 500)):
        name, brand = catalog[i % len(catalog)]
        fields = {"name": name[:200]}
        if brand:
            fields["brand"] = brand[:200]
            values["book-%07d" % i] = brand[:200]
        changes.append({"id": "c%07d" % i, "collection": "bench_books", "recordId": "book-%07d" % i,
                        "hlc": "%013d-%05d-bench" % (now, i % 100000), "fields": fields, "deleted": False})
    answer = call("POST", "/v1/sync/push", {"changes": changes, "app": {"id": "bench_books", "version": 2}}, token)[0]
    refused = [r for r in answer["results"] if r["status"] != "applied"]
    if refused: sys.exit("bench-backfill: the server refused a record: %s" % refused[0])

# The back fill, as a device that kept nothing asks it: pages of 1000 with gzip until none is left.
began = time.monotonic()
since, pages, wire, plain, sent, got = None, 0, 0, 0, 0, {}
while True:
    query = "/v1/sync/pull?limit=1000&app=bench_books@2&collection=bench_books&field=bench_books.brand" + ("&since=" + since if since else "")
    page, raw, text = call("GET", query, token=token, gzipped=True)
    pages, wire, plain = pages + 1, wire + raw, plain + text
    for record in page["changes"]:
        sent += 1
        got[record["recordId"]] = record["fields"].get("brand")
    since = page["cursor"]
    if not page["hasMore"] or not page["changes"]: break
seconds = time.monotonic() - began
if got != values: sys.exit("bench-backfill: the back fill brought %d values, %d were written" % (len(got), len(values)))
alone = sum(len(json.dumps(v, ensure_ascii=False).encode()) for v in values.values())
with_ids = sum(len(json.dumps(k).encode()) + 1 + len(json.dumps(v, ensure_ascii=False).encode()) for k, v in values.items())
print("back fill of %d records (%d with a brand): %d pages in %.2f s, %d records sent (%d left out)"
      % (records, len(values), pages, seconds, sent, records - sent))
print("bytes: on the wire %d (gzip; %d unzipped), the values alone %d, values with their ids %d" % (wire, plain, alone, with_ids))
print("back fill %d records: %.2f s, wire/values %.2fx, wire/values-with-ids %.2fx"
      % (records, seconds, wire / max(1, alone), wire / max(1, with_ids)))
PY
