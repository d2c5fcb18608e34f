#!/usr/bin/env python3
"""Seeds a stopped gateway's data directory with N stored verifications, fast (scripts/bench/run.sh).

    seed.py DATA_DIR --count 1000000 --anchor vf_… --anchor +447490000001 --anchor VE… [--prefix +44740]

The template is one real verification the gateway made through the sandbox Twilio emulator (started,
its code read, checked: approved), so the seeded rows are whatever this build of the gateway writes,
whatever its schema: every row of every table in every SQLite file under DATA_DIR that mentions one of
the anchors (the gateway's id, the number, the Twilio SID) is copied N times inside SQLite, with each SID
and id of the template (`vf_`/`VE`/`VL`… and 32 hex digits) and the number replaced by distinct ones
(numbers PREFIX + 7 digits), `INTEGER PRIMARY KEY` columns left to SQLite, and REAL `*_at` columns moved
back 50 ms per copy (a million verifications over about 14 hours; --spacing and --shift change that).
Copies are numbered from --first (1 by default), so runs into one directory with disjoint ranges make
distinct ids; --template DIR reads the template's rows from another data directory (one kept aside, when
the template in DATA_DIR may be gone: scripts/bench/retention_growth.py deletes old rows between runs). This covers the gateway's own store
and any emulator that keeps its state as rows in SQLite. An emulator that keeps its state as one JSON
snapshot (`sandbox/<plugin>.json`) is reported and left alone: every call of such an emulator rewrites
the whole snapshot, so a million entries would make each call take seconds.
Prints one `RESULT {json}` line.
"""
import argparse
import json
import os
import re
import sqlite3
import sys
import time

TOKEN = re.compile(r"(?:vf_|[A-Z]{2})[0-9a-f]{32}")
SHARED_SID_PREFIXES = {"AC", "VA", "SK", "MG"}


def sqlite_files(root):
    for folder, _, files in os.walk(root):
        for name in sorted(files):
            path = os.path.join(folder, name)
            if name.endswith(("-wal", "-shm", "-journal")):
                continue
            try:
                with open(path, "rb") as handle:
                    if handle.read(16) == b"SQLite format 3\x00":
                        yield path
            except OSError:
                pass


def text_of(value):
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="ignore")
    return None


def seed_file(path, count, anchors, prefix, report, root, template=None, first=1, shift=0.0, spacing=0.05):
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA synchronous=OFF")
    source = sqlite3.connect(template) if template else connection
    tables = [row[0] for row in connection.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid")]
    for table in tables:
        if table == "schema_migrations":
            continue
        columns = list(connection.execute("PRAGMA table_info(%s)" % quote(table)))
        # (cid, name, type, notnull, default, pk)
        names = [column[1] for column in columns]
        try:
            rows = [row for row in source.execute("SELECT %s FROM %s" % (", ".join(map(quote, names)), quote(table)))
                    if any(anchor in (text_of(value) or "") for value in row for anchor in anchors)]
        except sqlite3.OperationalError:
            rows = []  # the template file has no such table
        if not rows:
            continue
        began = time.perf_counter()
        tokens = []
        for row in rows:
            for value in row:
                for token in TOKEN.findall(text_of(value) or ""):
                    # Account, service and API-key SIDs are configuration every verification shares.
                    if token[:2] in SHARED_SID_PREFIXES:
                        continue
                    if token not in tokens:
                        tokens.append(token)
        connection.execute("BEGIN")
        for row in rows:
            insert_names, expressions, parameters = [], [], []
            for (cid, name, kind, notnull, default, pk), value in zip(columns, row):
                if pk == 1 and kind.upper() == "INTEGER" and sum(1 for c in columns if c[5]) == 1:
                    continue  # the rowid: SQLite numbers the copies
                insert_names.append(quote(name))
                text = text_of(value)
                if text is not None and (any(t in text for t in tokens) or any(a in text for a in anchors)):
                    expression = "?"
                    parameters.append(value)
                    for index, token in enumerate(tokens):
                        if token in text:
                            # Copy n of a token is the same in every file and every run: prefix, the
                            # template's first two hex digits, n in 30 more.
                            expression = "replace(%s, '%s', '%s' || printf('%%030x', n))" % (
                                expression, token, token[:-30])
                    for anchor in anchors:
                        if anchor.startswith("+") and anchor in text:
                            expression = "replace(%s, '%s', '%s' || printf('%%0%dd', n %% 10000000))" % (
                                expression, anchor, prefix, 7)
                    if isinstance(value, bytes):
                        expression = "CAST(%s AS BLOB)" % expression
                    expressions.append(expression)
                elif isinstance(value, float) and name.endswith("_at"):
                    # Copy k of this run (k = n - first + 1) is k spacings before the template's time + shift.
                    expressions.append("(? + ? - (n - ? + 1) * ?)")
                    parameters.extend([value, shift, first, spacing])
                else:
                    expressions.append("?")
                    parameters.append(value)
            connection.execute(
                "WITH RECURSIVE c(n) AS (SELECT %d UNION ALL SELECT n + 1 FROM c WHERE n < %d) "
                "INSERT INTO %s (%s) SELECT %s FROM c" % (first, first + count - 1, quote(table),
                                                          ", ".join(insert_names), ", ".join(expressions)),
                parameters)
        connection.execute("COMMIT")
        report.append({"file": os.path.relpath(path, root), "table": table, "template_rows": len(rows),
                       "rows_added": len(rows) * count, "seconds": round(time.perf_counter() - began, 1)})
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    if source is not connection:
        source.close()


def quote(name):
    return '"%s"' % name.replace('"', '""')


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data_dir")
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--anchor", action="append", required=True,
                        help="a value only the template's rows contain (its id, number, vendor SID)")
    parser.add_argument("--prefix", default="+44740", help="numbers of the copies: PREFIX + 7 digits")
    parser.add_argument("--only", action="append",
                        help="seed only these SQLite files (paths under DATA_DIR, e.g. gateway.sqlite)")
    parser.add_argument("--template", metavar="DIR",
                        help="read the template's rows from the same files under DIR instead of DATA_DIR's")
    parser.add_argument("--first", type=int, default=1,
                        help="number of the first copy: runs into one directory need disjoint ranges")
    parser.add_argument("--shift", type=float, default=0.0, help="seconds added to every copied time")
    parser.add_argument("--spacing", type=float, default=0.05, help="seconds between consecutive copies")
    args = parser.parse_args()
    if len(args.prefix) != 6:
        raise SystemExit("--prefix must be +44 and three digits, e.g. +44740")
    began = time.perf_counter()
    report = []
    for path in sqlite_files(args.data_dir):
        if args.only and os.path.relpath(path, args.data_dir) not in args.only:
            continue
        template = None
        if args.template:
            template = os.path.join(args.template, os.path.relpath(path, args.data_dir))
            if not os.path.exists(template):
                continue
        seed_file(path, args.count, args.anchor, args.prefix, report, args.data_dir, template=template,
                  first=args.first, shift=args.shift, spacing=args.spacing)
    snapshots = []
    sandbox_files = [os.path.relpath(p, args.data_dir) for p in sqlite_files(args.data_dir)]
    sandbox = os.path.join(args.data_dir, "sandbox")
    if os.path.isdir(sandbox):
        snapshots = sorted(name for name in os.listdir(sandbox) if name.endswith(".json"))
    print("RESULT " + json.dumps({"count": args.count, "seconds": round(time.perf_counter() - began, 1),
                                  "tables": report, "json_snapshots_not_seeded": snapshots,
                                  "sqlite_files": sandbox_files}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
