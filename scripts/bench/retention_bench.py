#!/usr/bin/env python3
"""Issue 48: what retention costs on a large SQLite store, and how long it holds the store at a time.

    swift build -c release --product gateway
    python3 scripts/bench/retention_bench.py [--gateway .build/release/gateway] [--count 1000000]

A release gateway in sandbox mode makes one real verification (started through the Twilio emulator, its code read,
checked: approved) and stops; `seed.py` copies it --count times inside the store (each with its events); every
verification is then aged by 40 days (an UPDATE, as if that much time had passed) but the newest tenth, which stays
young. `gateway retention` with `verifications: 30d` then deletes the old ones and prints its batches and the
longest one; this script times the whole run, and reads the file's size and page counts before and after (SQLite
keeps the freed pages for its next writes; `VACUUM`, timed too, gives them back). Prints one `RESULT {json}` line.
"""
import argparse, json, os, re, sqlite3, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402

DAY = 86_400


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gateway", default=os.path.join(bench.ROOT, ".build", "release", "gateway"))
    parser.add_argument("--count", type=int, default=1_000_000)
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="gateway-retention-bench-")
    data = os.path.join(scratch, "data")
    os.makedirs(data)
    _, anchors = bench.template_verification(args.gateway, data, os.path.join(scratch, "gateway.log"))
    path = os.path.join(data, "gateway.sqlite")
    seeded = subprocess.run([sys.executable, os.path.join(bench.HERE, "seed.py"), data, "--count", str(args.count),
                             "--prefix", "+44748"] + anchors, capture_output=True, text=True)
    if seeded.returncode != 0:
        raise SystemExit("seed.py failed:\n" + seeded.stdout + seeded.stderr)
    database = sqlite3.connect(path)
    total = database.execute("SELECT count(*) FROM verifications").fetchone()[0]
    events = database.execute("SELECT count(*) FROM verification_events").fetchone()[0]
    newest = database.execute("SELECT created_at FROM verifications ORDER BY created_at DESC LIMIT 1 OFFSET ?",
                              (total // 10,)).fetchone()[0]
    began = time.monotonic()
    database.execute("UPDATE verifications SET created_at = created_at - ?, updated_at = updated_at - ?,"
                     " expires_at = expires_at - ? WHERE created_at < ?", (40 * DAY, 40 * DAY, 40 * DAY, newest))
    aged = database.execute("SELECT changes()").fetchone()[0]
    database.commit()
    database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    database.close()
    bench.log("seeded %d verifications and %d events; aged %d by 40 days (%.1f s)"
              % (total, events, aged, time.monotonic() - began))
    size_before = os.path.getsize(path)
    config = os.path.join(scratch, "gateway.yaml")
    with open(config, "w") as handle:
        handle.write("sandbox: true\nretention: {verifications: 30d}\n")
    began = time.monotonic()
    run = subprocess.run([args.gateway, "retention", "--config", config, "--data-dir", data],
                         capture_output=True, text=True, timeout=3600)
    seconds = time.monotonic() - began
    if run.returncode != 0:
        raise SystemExit("gateway retention failed:\n" + run.stdout + run.stderr)
    bench.log("gateway retention: %s (%.1f s)" % (run.stdout.strip(), seconds))
    match = re.search(r"deleted (\d+) verifications, (\d+) events .*; (\d+) batches, the longest (\d+) ms", run.stdout)
    database = sqlite3.connect(path)
    left = database.execute("SELECT count(*) FROM verifications").fetchone()[0]
    free_pages = database.execute("PRAGMA freelist_count").fetchone()[0]
    page_size = database.execute("PRAGMA page_size").fetchone()[0]
    database.close()
    size_after = os.path.getsize(path)
    began = time.monotonic()
    database = sqlite3.connect(path)
    database.execute("VACUUM")
    database.close()
    vacuum_seconds = time.monotonic() - began
    size_vacuumed = os.path.getsize(path)
    result = {
        "stored": total, "events": events, "aged": aged, "deleted": int(match.group(1)) if match else None,
        "events_deleted": int(match.group(2)) if match else None, "batches": int(match.group(3)) if match else None,
        "longest_batch_ms": int(match.group(4)) if match else None, "seconds": round(seconds, 1),
        "verifications_left": left, "bytes_before": size_before, "bytes_after": size_after,
        "free_bytes_after": free_pages * page_size, "bytes_after_vacuum": size_vacuumed,
        "vacuum_seconds": round(vacuum_seconds, 1),
        "command": "python3 scripts/bench/retention_bench.py --count %d" % args.count,
    }
    print("RESULT " + json.dumps(result))
    import shutil
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
