#!/usr/bin/env python3
"""Issue 48, item 5: does the gateway slow down as its SQLite store grows? Starts, `/v1/admin/stats` and memory
with 1 million and with 10 million verifications stored, measured in the same rounds.

    swift build -c release --product gateway
    python3 scripts/bench/growth_bench.py [--gateway .build/release/gateway] [--counts 1000000,10000000]
        [--rounds 3] [--seconds 10] [--stats 200]

A release gateway in sandbox mode makes one real verification (started through the Twilio emulator, its code read,
checked: approved) and stops. For each count, a copy of that data directory is seeded by `seed.py` with that many
copies of it, straight into `gateway.sqlite` (each with its five events; 50 ms apart, so the newest hour holds the
same 72,000 in every store). Then, round after round, each store in turn: the gateway is launched on it (launch to
the first `/healthz`, RSS idle), `wrk -t1 -c32` of starts through the sandbox's Twilio emulator for --seconds
(after one second of warm-up: starts per second, p50 and p99, the gateway's CPU per start), --stats sequential
`GET /v1/admin/stats` (the default one-hour window: p50 and p99), RSS after, and it stops. Interleaving the
stores round by round keeps the machine's drift out of the comparison.

Prints the medians per store, each figure's ratio to the first store's, and one `RESULT {json}` line.
"""
import argparse
import http.client
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402


def wrk_starts(gateway, seconds, counter_start, prefix):
    before = gateway.cpu_seconds()
    result = bench.wrk_starts(gateway.base, 32, seconds, "twilio", prefix, counter_start)
    cpu = gateway.cpu_seconds() - before
    return {"rps": result["rps"], "p50_ms": result["p50_ms"], "p99_ms": result["p99_ms"],
            "cpu_us_per_start": cpu / result["starts"] * 1e6}


def stats_latency(port, count):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    headers = {"Authorization": "Bearer " + bench.KEY}
    times = []
    for _ in range(count):
        began = time.perf_counter()
        connection.request("GET", "/v1/admin/stats", headers=headers)
        response = connection.getresponse()
        body = response.read()
        times.append((time.perf_counter() - began) * 1000)
        if response.status != 200:
            raise SystemExit("/v1/admin/stats answered %d: %s" % (response.status, body[:300]))
    connection.close()
    times.sort()
    return {"stats_p50_ms": times[len(times) // 2], "stats_p99_ms": times[min(len(times) - 1, len(times) * 99 // 100)],
            "stats_starts_in_window": json.loads(body).get("totals", {}).get("starts")}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gateway", default=os.path.join(bench.ROOT, ".build", "release", "gateway"))
    parser.add_argument("--counts", default="1000000,10000000", help="verifications stored, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=10, help="seconds of starts per round")
    parser.add_argument("--stats", type=int, default=200, help="sequential /v1/admin/stats requests per round")
    parser.add_argument("--keep", action="store_true", help="keep the seeded data directories")
    parser.add_argument("--reuse", metavar="DIR",
                        help="measure the stores a run with --keep seeded in DIR (its store-<count> directories)")
    args = parser.parse_args()
    counts = [int(part) for part in args.counts.split(",")]
    if any(count >= 10_000_000 + 1 for count in counts):
        raise SystemExit("--counts: at most 10,000,000 (the copies' numbers have 7 digits)")
    scratch = args.reuse or tempfile.mkdtemp(prefix="gateway-growth-bench-")
    if args.reuse:
        args.keep = True
    else:
        template = os.path.join(scratch, "template")
        os.makedirs(template)
        _, anchors = bench.template_verification(args.gateway, template, os.path.join(scratch, "template.log"))
    stores = []
    for count in counts:
        directory = os.path.join(scratch, "store-%d" % count)
        if args.reuse:
            database = sqlite3.connect(os.path.join(directory, "gateway.sqlite"))
            stored = database.execute("SELECT count(*) FROM verifications").fetchone()[0]
            database.close()
            stores.append({"count": count, "stored": stored, "directory": directory, "seed_seconds": None,
                           "bytes": os.path.getsize(os.path.join(directory, "gateway.sqlite"))})
            continue
        shutil.copytree(template, directory)
        began = time.monotonic()
        seeded = subprocess.run([sys.executable, os.path.join(bench.HERE, "seed.py"), directory, "--only",
                                 "gateway.sqlite", "--count", str(count), "--prefix", "+44748"] + anchors,
                                capture_output=True, text=True)
        if seeded.returncode != 0:
            raise SystemExit("seed.py failed:\n" + seeded.stdout + seeded.stderr)
        seconds = time.monotonic() - began
        subprocess.run(["sync"])
        size = os.path.getsize(os.path.join(directory, "gateway.sqlite"))
        bench.log("seeded %s verifications in %.0f s: gateway.sqlite %.1f MB" % (format(count, ","), seconds, size / 1e6))
        stores.append({"count": count, "stored": count + 1, "directory": directory, "seed_seconds": round(seconds),
                       "bytes": size})
    results = {store["count"]: [] for store in stores}
    block = 999999 // (args.rounds + 1)
    try:
        for round_index in range(1, args.rounds + 1):
            for index, store in enumerate(stores):
                gateway = bench.Gateway(args.gateway, store["directory"],
                                        os.path.join(scratch, "gateway-%d.log" % store["count"]))
                ready = gateway.start(timeout=600)
                time.sleep(1)
                figures = {"launch_to_ready_ms": ready * 1000, "rss_idle_mb": gateway.rss_mb()}
                prefix = "+4475%d" % (index + 1)
                wrk_starts(gateway, 1, round_index * block, prefix)  # warm-up
                figures.update(wrk_starts(gateway, args.seconds, round_index * block + block // 2, prefix))
                figures.update(stats_latency(gateway.port, args.stats))
                figures["rss_after_mb"] = gateway.rss_mb()
                gateway.stop()
                results[store["count"]].append(figures)
                bench.log("round %d, %s stored: %.0f starts/s, p50 %.1f ms, p99 %.1f ms; stats p50 %.1f ms, p99 %.1f ms;"
                          " RSS %.1f MB" % (round_index, format(store["count"], ","), figures["rps"],
                                            figures["p50_ms"], figures["p99_ms"], figures["stats_p50_ms"],
                                            figures["stats_p99_ms"], figures["rss_after_mb"]))
    finally:
        if not args.keep:
            for store in stores:
                shutil.rmtree(store["directory"], ignore_errors=True)
    fields = ("rps", "p50_ms", "p99_ms", "cpu_us_per_start", "stats_p50_ms", "stats_p99_ms", "launch_to_ready_ms",
              "rss_idle_mb", "rss_after_mb")
    medians = {count: {field: statistics.median(r[field] for r in rounds) for field in fields}
               for count, rounds in results.items()}
    base = medians[counts[0]]
    print("\n| stored | file MB | starts/s | p50 ms | p99 ms | CPU µs per start | stats p50 ms | stats p99 ms |"
          " launch → ready ms | RSS idle MB | RSS after MB |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for store in stores:
        m = medians[store["count"]]
        print("| %s | %.0f | %.0f | %.2f | %.2f | %.0f | %.2f | %.2f | %.0f | %.1f | %.1f |" % (
            format(store["stored"], ","), store["bytes"] / 1e6, m["rps"], m["p50_ms"], m["p99_ms"],
            m["cpu_us_per_start"], m["stats_p50_ms"], m["stats_p99_ms"], m["launch_to_ready_ms"], m["rss_idle_mb"],
            m["rss_after_mb"]))
    for store in stores[1:]:
        m = medians[store["count"]]
        print("\n%s against %s: " % (format(store["count"], ","), format(counts[0], ",")) + ", ".join(
            "%s %+.1f%%" % (field, (m[field] / base[field] - 1) * 100) for field in fields if base[field]))
    print("\nmedians of %d rounds" % args.rounds)
    print("RESULT " + json.dumps({"stores": [{k: v for k, v in s.items() if k != "directory"} for s in stores],
                                  "medians": medians, "rounds": results,
                                  "command": "python3 scripts/bench/growth_bench.py " + " ".join(sys.argv[1:])}))
    if not args.keep:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
