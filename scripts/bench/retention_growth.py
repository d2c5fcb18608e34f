#!/usr/bin/env python3
"""Issue 48, item 5: with retention on, does the SQLite store level off under steady traffic? A simulation of
--days days at a fixed rate of --per-day verifications a day.

    swift build -c release --product gateway
    python3 scripts/bench/retention_growth.py [--gateway .build/release/gateway] [--days 90] [--per-day 20000]

A release gateway in sandbox mode makes one real verification (started through the Twilio emulator, its code read,
checked: approved: the template) and stops. Then, for each simulated day d: `seed.py` writes that day's --per-day
copies of the template straight into the store, spread evenly over the day (each with its events and every other
row the template has); `gateway retention --as-of <end of day d>` then applies `retention: {verifications: 30d,
events: 30d}` as the background service would at that time, and the script reads the file: its size (with the
WAL), the pages SQLite keeps free for reuse, and the verifications stored. Time does not really pass: the copies
carry the simulated times, and `--as-of` is the retention's clock.

Prints a line per day while it runs, then a table every --every days, the size's change over the last third of
the run (where retention has long been deleting as much as arrives), and one `RESULT {json}` line.
"""
import argparse
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402

DAY = 86_400
DELETED = re.compile(r"deleted (\d+) verifications, (\d+) events and (\d+) other rows; anonymized (\d+); "
                     r"(\d+) batches, the longest (\d+) ms")


def file_figures(path):
    database = sqlite3.connect(path)
    try:
        stored = database.execute("SELECT count(*) FROM verifications").fetchone()[0]
        events = database.execute("SELECT count(*) FROM verification_events").fetchone()[0]
        free = database.execute("PRAGMA freelist_count").fetchone()[0]
        pages = database.execute("PRAGMA page_count").fetchone()[0]
        page_size = database.execute("PRAGMA page_size").fetchone()[0]
    finally:
        database.close()
    wal = path + "-wal"
    size = os.path.getsize(path) + (os.path.getsize(wal) if os.path.exists(wal) else 0)
    return {"verifications": stored, "events": events, "bytes": size, "free_bytes": free * page_size,
            "used_bytes": (pages - free) * page_size}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gateway", default=os.path.join(bench.ROOT, ".build", "release", "gateway"))
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--per-day", type=int, default=20_000, help="verifications started per simulated day")
    parser.add_argument("--every", type=int, default=10, help="days between the table's rows")
    args = parser.parse_args()
    if args.days * args.per_day >= 10_000_000:
        raise SystemExit("--days × --per-day must stay under 10,000,000 (the copies' numbers have 7 digits)")
    scratch = tempfile.mkdtemp(prefix="gateway-retention-growth-")
    template = os.path.join(scratch, "template")
    data = os.path.join(scratch, "data")
    os.makedirs(template)
    started, anchors = bench.template_verification(args.gateway, template, os.path.join(scratch, "gateway.log"))
    template_file = os.path.join(template, "gateway.sqlite")
    database = sqlite3.connect(template_file)
    created = database.execute("SELECT created_at FROM verifications WHERE id = ?", (started["id"],)).fetchone()[0]
    database.close()
    os.makedirs(data)
    shutil.copy(template_file, os.path.join(data, "gateway.sqlite"))
    path = os.path.join(data, "gateway.sqlite")
    config = os.path.join(scratch, "gateway.yaml")
    with open(config, "w") as handle:
        handle.write("sandbox: true\nretention: {verifications: 30d, events: 30d}\n")
    days = []
    began = time.monotonic()
    try:
        for day in range(1, args.days + 1):
            seeded = subprocess.run(
                [sys.executable, os.path.join(bench.HERE, "seed.py"), data, "--template", template,
                 "--only", "gateway.sqlite", "--count", str(args.per_day), "--first", str((day - 1) * args.per_day + 1),
                 "--shift", str(day * DAY), "--spacing", str(DAY / args.per_day), "--prefix", "+44748"] + anchors,
                capture_output=True, text=True)
            if seeded.returncode != 0:
                raise SystemExit("seed.py failed on day %d:\n%s%s" % (day, seeded.stdout, seeded.stderr))
            as_of = created + day * DAY + 1
            run_began = time.monotonic()
            run = subprocess.run([args.gateway, "retention", "--config", config, "--data-dir", data,
                                  "--as-of", "%.3f" % as_of], capture_output=True, text=True, timeout=3600)
            run_seconds = time.monotonic() - run_began
            if run.returncode != 0:
                raise SystemExit("gateway retention failed on day %d:\n%s%s" % (day, run.stdout, run.stderr))
            match = DELETED.search(run.stdout)
            if not match:
                raise SystemExit("gateway retention printed no figures on day %d: %s" % (day, run.stdout))
            figures = file_figures(path)
            figures.update(day=day, deleted=int(match.group(1)), events_deleted=int(match.group(2)),
                           batches=int(match.group(5)), longest_batch_ms=int(match.group(6)),
                           retention_seconds=round(run_seconds, 2))
            days.append(figures)
            bench.log("day %d: %d verifications, %.1f MB (%.1f MB free), deleted %d in %d batches (longest %d ms)"
                      % (day, figures["verifications"], figures["bytes"] / 1e6, figures["free_bytes"] / 1e6,
                         figures["deleted"], figures["batches"], figures["longest_batch_ms"]))
    finally:
        elapsed = time.monotonic() - began
    print("\n| day | verifications stored | events stored | file MB (with WAL) | of which free pages MB |"
          " deleted that day | batches | longest batch ms |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for figures in days:
        if figures["day"] % args.every == 0 or figures["day"] in (1, args.days):
            print("| %d | %s | %s | %.1f | %.1f | %s | %d | %d |" % (
                figures["day"], format(figures["verifications"], ","), format(figures["events"], ","),
                figures["bytes"] / 1e6, figures["free_bytes"] / 1e6, format(figures["deleted"], ","),
                figures["batches"], figures["longest_batch_ms"]))
    third = days[len(days) * 2 // 3 - 1]
    last = days[-1]
    growth = (last["bytes"] - third["bytes"]) / third["bytes"] * 100 if third["bytes"] else 0.0
    print("\nfile size from day %d to day %d: %.1f MB to %.1f MB (%+.1f%%); longest batch of the run: %d ms; %.0f s"
          % (third["day"], last["day"], third["bytes"] / 1e6, last["bytes"] / 1e6, growth,
             max(f["longest_batch_ms"] for f in days), elapsed))
    print("RESULT " + json.dumps({"days": days, "per_day": args.per_day, "growth_last_third_percent": round(growth, 2),
                                  "seconds": round(elapsed), "command": "python3 scripts/bench/retention_growth.py "
                                  + " ".join(sys.argv[1:])}))
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
