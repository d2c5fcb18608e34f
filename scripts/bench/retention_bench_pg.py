#!/usr/bin/env python3
"""Issue 48: retention on a large PostgreSQL store, and what a stored verification takes on disk there.

    swift build -c release --product gateway
    python3 scripts/bench/retention_bench_pg.py [--gateway .build/release/gateway] [--count 1000000]

The PostgreSQL twin of retention_bench.py. A throwaway cluster (initdb + pg_ctl, a free loopback port, stopped at
the end; the same class as multi_instance_check.py's) is the store of a sandbox gateway that makes one real
verification (started through the Twilio emulator, its code read, checked: approved) and stops. The script then
copies that verification and its events --count times inside PostgreSQL (`INSERT … SELECT` over
`generate_series`, each copy with its own id, number and provider reference, `*_at` moved back 50 ms per copy)
and ANALYZEs. The on-disk size of the two tables with their indexes and TOAST (`pg_total_relation_size`) over
the count is the bytes per stored verification. Every verification but the newest tenth is then aged 40 days,
`gateway retention --store …` with `verifications: 30d` deletes them and prints its batches and the longest; the
script times it, and reads the sizes again after, and after `VACUUM` (the space PostgreSQL keeps for reuse) and
`VACUUM FULL` (given back to the file system). Prints one `RESULT {json}` line.
"""
import argparse, json, os, re, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import bench  # noqa: E402
from multi_instance_check import Postgres  # noqa: E402

DAY = 86_400
TABLES = ("verifications", "verification_events")


def sql(pg, statement):
    """One statement through psql as the gateway user; the rows, `|`-separated."""
    done = pg.tool("psql", "-X", "-q", "-A", "-t", "-h", "127.0.0.1", "-p", str(pg.port), "-U", "gateway",
                   "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-c", statement)
    return [line.split("|") for line in done.stdout.strip().splitlines() if line]


def columns(pg, table):
    return [row[0] for row in sql(pg, "SELECT column_name FROM information_schema.columns WHERE table_name = '%s' "
                                      "ORDER BY ordinal_position" % table)]


def sizes(pg):
    return {table: int(sql(pg, "SELECT pg_total_relation_size('%s')" % table)[0][0]) for table in TABLES}


def seed(pg, anchor, count):
    """`count` copies of verification `anchor` and its events, inside PostgreSQL."""
    copied = []
    for name in columns(pg, "verifications"):
        if name == "id":
            copied.append("'vf_' || lpad(to_hex(g), 32, '0')")
        elif name == "destination_value":
            copied.append("'+44748' || lpad(g::text, 7, '0')")
        elif name == "provider_reference":
            copied.append("v.provider_reference || '-' || g")
        elif name.endswith("_at") or name.endswith("_until"):
            copied.append("v.%s - g * 0.05" % name if name != "check_lease_until" else "v.%s" % name)
        else:
            copied.append("v." + name)
    sql(pg, "INSERT INTO verifications (%s) SELECT %s FROM verifications v, generate_series(1, %d) g WHERE v.id = '%s'"
        % (", ".join(columns(pg, "verifications")), ", ".join(copied), count, anchor))
    event_columns = [name for name in columns(pg, "verification_events") if name != "seq"]
    copied = []
    for name in event_columns:
        if name == "verification_id":
            copied.append("'vf_' || lpad(to_hex(g), 32, '0')")
        elif name == "at":
            copied.append("e.at - g * 0.05")
        else:
            copied.append("e." + name)
    sql(pg, "INSERT INTO verification_events (%s) SELECT %s FROM verification_events e, generate_series(1, %d) g "
            "WHERE e.verification_id = '%s'" % (", ".join(event_columns), ", ".join(copied), count, anchor))
    sql(pg, "ANALYZE")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gateway", default=os.path.join(bench.ROOT, ".build", "release", "gateway"))
    parser.add_argument("--count", type=int, default=1_000_000)
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="gateway-retention-pg-")
    pg = Postgres(scratch)
    watchdog = pg.watchdog(scratch)
    pg.init()
    try:
        data = os.path.join(scratch, "data")
        os.makedirs(data)
        # A shared store needs the token signing key from the environment (README, "PostgreSQL").
        key = subprocess.run([args.gateway, "token-key", "generate"], capture_output=True, text=True, check=True)
        os.environ["GATEWAY_TOKEN_SIGNING_KEY"] = key.stdout.strip()
        log = os.path.join(scratch, "gateway.log")
        gateway = bench.Gateway(args.gateway, data, log, extra=["--store", pg.url])
        try:
            gateway.start()
        except SystemExit:
            with open(log) as handle:
                print(handle.read()[-2000:], file=sys.stderr)
            raise
        try:
            started = bench.approved_verification(gateway.port, "+447480000001")
        finally:
            gateway.stop()
        began = time.monotonic()
        seed(pg, started["id"], args.count)
        total = int(sql(pg, "SELECT count(*) FROM verifications")[0][0])
        events = int(sql(pg, "SELECT count(*) FROM verification_events")[0][0])
        bench.log("seeded %d verifications and %d events (%.1f s)" % (total, events, time.monotonic() - began))
        before = sizes(pg)
        newest = sql(pg, "SELECT created_at FROM verifications ORDER BY created_at DESC LIMIT 1 OFFSET %d"
                         % (total // 10))[0][0]
        sql(pg, "UPDATE verifications SET created_at = created_at - %d, updated_at = updated_at - %d, "
                "expires_at = expires_at - %d WHERE created_at < %s" % (40 * DAY, 40 * DAY, 40 * DAY, newest))
        sql(pg, "VACUUM ANALYZE")
        aged = int(sql(pg, "SELECT count(*) FROM verifications WHERE created_at < %s - %d" % (newest, 30 * DAY))[0][0])
        config = os.path.join(scratch, "gateway.yaml")
        with open(config, "w") as handle:
            handle.write("sandbox: true\nretention: {verifications: 30d}\n")
        began = time.monotonic()
        run = subprocess.run([args.gateway, "retention", "--config", config, "--data-dir", data, "--store", pg.url],
                             capture_output=True, text=True, timeout=3600)
        seconds = time.monotonic() - began
        if run.returncode != 0:
            raise SystemExit("gateway retention failed:\n" + run.stdout + run.stderr)
        bench.log("gateway retention: %s (%.1f s)" % (run.stdout.strip(), seconds))
        match = re.search(r"deleted (\d+) verifications, (\d+) events .*; (\d+) batches, the longest (\d+) ms",
                          run.stdout)
        left = int(sql(pg, "SELECT count(*) FROM verifications")[0][0])
        after = sizes(pg)
        sql(pg, "VACUUM")
        vacuumed = sizes(pg)
        began = time.monotonic()
        sql(pg, "VACUUM FULL")
        full_seconds = time.monotonic() - began
        compacted = sizes(pg)
        result = {
            "stored": total, "events": events, "aged": aged,
            "deleted": int(match.group(1)) if match else None,
            "events_deleted": int(match.group(2)) if match else None,
            "batches": int(match.group(3)) if match else None,
            "longest_batch_ms": int(match.group(4)) if match else None, "seconds": round(seconds, 1),
            "verifications_left": left, "bytes_before": before,
            "bytes_per_verification": round(sum(before.values()) / total),
            "bytes_after": after, "bytes_after_vacuum": vacuumed, "bytes_after_vacuum_full": compacted,
            "vacuum_full_seconds": round(full_seconds, 1),
            "command": "python3 scripts/bench/retention_bench_pg.py --count %d" % args.count,
        }
        print("RESULT " + json.dumps(result))
    finally:
        pg.stop("immediate")
        watchdog.kill()
        import shutil
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
