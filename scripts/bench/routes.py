"""Reads the server's Prometheus text on stdin and prints, per route and status, how many
requests there were, their mean time, and the share of them over 100 ms and over 1 s."""
import re
import sys

rows = {}
for line in sys.stdin:
    match = re.match(r'http_request_duration_seconds_(bucket|sum|count)\{(.*?)\} (\S+)', line)
    if not match:
        continue
    kind, labels, value = match.groups()
    key = dict(re.findall(r'(\w+)="([^"]*)"', labels))
    le = key.pop("le", None)
    name = " ".join(key.get(k, "?") for k in ("method", "route", "status"))
    row = rows.setdefault(name, {"buckets": {}})
    if kind == "bucket":
        row["buckets"][le] = float(value)
    else:
        row[kind] = float(value)

for name, row in sorted(rows.items(), key=lambda item: -item[1].get("count", 0)):
    count = row.get("count", 0)
    if not count:
        continue

    def over(limit):
        under = max([v for k, v in row["buckets"].items() if k != "+Inf" and float(k) <= limit] or [0])
        return 100 * (count - under) / count

    mean = 1000 * row.get("sum", 0) / count
    print(f"  {name}: {int(count)}, {mean:.1f} ms, {over(0.1):.1f} % / {over(1.0):.1f} %")
