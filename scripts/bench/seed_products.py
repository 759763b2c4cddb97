#!/usr/bin/env python3
"""Seed an Eventual database (already migrated by the server) with products and votes.

Usage: seed_products.py DB OWNER_USER_ID BARCODES_OUT [--products N] [--votes N]
                        [--extra-users N] [--names CSV] [--seed S]

DB is an SQLite file path, or a postgres:// URL (loaded with psql's \\copy; psql must be installed).

Writes every seeded barcode (as posted: 13-digit EAN-13) to BARCODES_OUT, one per line.
The server must not be running while this writes.
"""
import argparse
import csv
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid


def check_digit(data):
    """GS1 mod-10: weights 3,1,3,1... from the rightmost data digit."""
    total = 0
    for offset, ch in enumerate(reversed(data)):
        total += int(ch) * (3 if offset % 2 == 0 else 1)
    return (10 - total % 10) % 10


def ean13(rng):
    # A leading non-zero digit keeps the code a "true" EAN-13 (not a padded UPC-A).
    data = str(rng.randint(1, 9)) + "".join(str(rng.randint(0, 9)) for _ in range(11))
    return data + str(check_digit(data))


def load_names(path):
    names = []
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                name = (row.get("product_name") or "").strip()
                brand = (row.get("brands") or "").split(",")[0].strip()
                if not name:
                    continue
                names.append(f"{brand} {name}" if brand else name)
    except OSError:
        return []
    return names


def psql(url, *commands):
    """Runs psql commands against url, stopping at the first error; returns the output."""
    arguments = ["psql", url, "-v", "ON_ERROR_STOP=1", "-X", "-q", "-t", "-A"]
    for command in commands:
        arguments += ["-c", command]
    return subprocess.run(arguments, check=True, capture_output=True, text=True).stdout


def store_postgres(url, users, products, votes):
    """Loads the rows with \\copy (one file per table), then analyses and checks the scores."""
    def cell(value):
        return "" if value is None else str(value)

    with tempfile.TemporaryDirectory() as folder:
        tables = [
            ("users", "id, username, username_key, email, email_key, password_hash, created_at, updated_at", users),
            ("products", "id, gtin, barcode, name, description, img, user_id, score, created_at, updated_at", products),
            ("votes", "id, product_id, user_id, rating, created_at, updated_at", votes),
        ]
        commands = []
        for name, columns, rows in tables:
            path = os.path.join(folder, f"{name}.csv")
            with open(path, "w", newline="", encoding="utf-8") as handle:
                writer = csv.writer(handle)
                for row in rows:
                    writer.writerow([cell(value) for value in row])
            commands.append(f"\\copy {name} ({columns}) FROM '{path}' WITH (FORMAT csv)")
        psql(url, "BEGIN", *commands, "COMMIT", "ANALYZE")
    counts = {t: int(psql(url, f"SELECT COUNT(*) FROM {t}").strip()) for t in ("users", "products", "votes")}
    mismatched = int(psql(url, "SELECT COUNT(*) FROM products p WHERE p.score != "
                               "(SELECT COALESCE(SUM(rating), 0) FROM votes v WHERE v.product_id = p.id)").strip())
    size = psql(url, "SELECT pg_size_pretty(pg_database_size(current_database()))").strip()
    return counts, mismatched, f"db {size}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("db")
    parser.add_argument("owner_id")
    parser.add_argument("barcodes_out")
    parser.add_argument("--products", type=int, default=100_000)
    parser.add_argument("--votes", type=int, default=150_000)
    parser.add_argument("--extra-users", type=int, default=20)
    parser.add_argument("--names", default="")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    started = time.time()
    now_ms = int(time.time() * 1000)
    year_ms = 365 * 24 * 3600 * 1000

    names = load_names(args.names) if args.names else []
    if names:
        print("Product names: © Open Food Facts contributors, ODbL")

    postgres = args.db.startswith(("postgres://", "postgresql://"))
    if not postgres:
        con = sqlite3.connect(args.db)
        con.execute("PRAGMA foreign_keys = ON")
        owner = con.execute("SELECT id FROM users WHERE id = ?", (args.owner_id,)).fetchone()
        if owner is None:
            sys.exit(f"seed: no user with id {args.owner_id} in {args.db}")

    # Extra voters, with a dummy password hash nobody can sign in with.
    run_tag = uuid.uuid4().hex[:6]
    users = []
    for i in range(args.extra_users):
        uid = str(uuid.uuid4())
        username = f"bench_voter_{run_tag}_{i:02d}"
        email = f"{username}@bench.invalid"
        created = now_ms - rng.randint(0, year_ms)
        users.append((uid, username, username.lower(), email, email.lower(), "!bench-dummy-hash", created, created))
    voter_ids = [args.owner_id] + [u[0] for u in users]

    # Products: most barcodes have one product, some two or three.
    products = []        # tuples in column order
    barcodes = []
    seen = set()
    while len(products) < args.products:
        code = ean13(rng)
        if code in seen:
            continue
        seen.add(code)
        barcodes.append(code)
        r = rng.random()
        count = 1 if r < 0.85 else (2 if r < 0.95 else 3)
        for _ in range(min(count, args.products - len(products))):
            n = len(products) + 1
            name = f"{names[(n - 1) % len(names)]} {n}" if names else f"Product {n}"
            created = now_ms - rng.randint(0, year_ms)
            products.append([str(uuid.uuid4()), "0" + code, code, name, None, None,
                             args.owner_id, 0, created, created])

    # Votes: distinct (product, user) pairs, ratings -5..5, scores summed per product.
    max_votes = len(products) * len(voter_ids)
    if args.votes > max_votes:
        sys.exit(f"seed: {args.votes} votes do not fit in {max_votes} (product, user) pairs")
    pairs = set()
    votes = []
    while len(votes) < args.votes:
        p = rng.randrange(len(products))
        u = rng.randrange(len(voter_ids))
        if (p, u) in pairs:
            continue
        pairs.add((p, u))
        rating = rng.randint(-5, 5)
        product = products[p]
        product[7] += rating
        created = rng.randint(product[8], now_ms)
        votes.append((str(uuid.uuid4()), product[0], voter_ids[u], rating, created, created))

    if postgres:
        counts, mismatched, size = store_postgres(args.db, users, products, votes)
    else:
        with con:  # one transaction
            con.executemany(
                "INSERT INTO users (id, username, username_key, email, email_key, password_hash, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)", users)
            con.executemany(
                "INSERT INTO products (id, gtin, barcode, name, description, img, user_id, score, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", products)
            con.executemany(
                "INSERT INTO votes (id, product_id, user_id, rating, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?)", votes)
        con.execute("ANALYZE")
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        counts = {t: con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("users", "products", "votes")}
        mismatched = con.execute(
            "SELECT COUNT(*) FROM products p WHERE p.score != "
            "(SELECT COALESCE(SUM(rating), 0) FROM votes v WHERE v.product_id = p.id)").fetchone()[0]
        con.close()
        size = f"db {os.path.getsize(args.db) / 1e6:.1f} MB"
    if mismatched:
        sys.exit(f"seed: {mismatched} products have a score that is not the sum of their votes")

    rng.shuffle(barcodes)
    with open(args.barcodes_out, "w") as out:
        out.write("\n".join(barcodes) + "\n")

    multi = len(products) - len(barcodes)
    print(f"seeded {counts['products']} products on {len(barcodes)} barcodes "
          f"({multi} extra products share a barcode), {counts['votes']} votes, "
          f"{counts['users']} users in {time.time() - started:.1f}s; {size}")


if __name__ == "__main__":
    main()
