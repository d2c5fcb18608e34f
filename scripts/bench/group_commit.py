#!/usr/bin/env python3
"""Issue 48, item 3: how well the SQLite store's group commit groups. File syncs per committed start at several
numbers of concurrent clients, with the latency and CPU they cost.

    swift build -c release --product gateway
    python3 scripts/bench/group_commit.py [--gateway .build/release/gateway] [--clients 1,8,32,64] [--rounds 3]
        [--seconds 5] [--variant NAME=YAML ...]

The set-up of cost_report.py: a *vendor* gateway serves the Twilio Verify emulator in a process of its own; the
*measured* gateway (SQLite store, `sqlite_sync: full`) starts verifications through it (`twilio_remote`, the
production path) under `wrk -t1 -cN` of `start.lua`, every start to a new number. The measured gateway runs with
`LD_PRELOAD` of `alloc_count.c`, which also counts every `fsync`, `fdatasync` and `sync_file_range` it makes (the
store's commits and its checkpoints, which sync the WAL and the database file): read by SIGUSR2 before and after
each run. `/metrics` gives the store's commit groups and the calls they carried
(`gateway_store_commit_groups_total`, `gateway_store_grouped_calls_total`).

Each `--variant NAME=YAML` runs its own measured gateway whose configuration adds that YAML (for instance
`off=sqlite_commit_delay: 0`), in the same rounds as the default one: every round runs each variant at each
number of clients, so they are compared under the same load of the machine. Without --variant, one gateway with
the default configuration.

Prints, per variant and number of clients, the medians over the rounds: syncs per start, commit groups per
start, the mean calls per group, starts per second, p50 and p99 latency, and the gateway's CPU per start. And
one `RESULT {json}` line.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
import cost_report  # noqa: E402

GROUPS = re.compile(r"^gateway_store_(commit_groups|grouped_calls)_total ([0-9.e+]+)$", re.M)


def group_counts(port):
    status, body = bench.http_get(port, "/metrics", timeout=10)
    if status != 200:
        raise SystemExit("/metrics answered %d" % status)
    text = body.decode() if isinstance(body, bytes) else body
    counts = {name: float(value) for name, value in GROUPS.findall(text)}
    return counts.get("commit_groups", 0.0), counts.get("grouped_calls", 0.0)


class Variant:
    """One measured gateway beside the shared vendor gateway, its configuration with `extra` added."""

    def __init__(self, name, extra, scratch, library, vendor):
        self.name, self.extra = name, extra
        directory = os.path.join(scratch, "variant-" + name)
        os.makedirs(directory, exist_ok=True)
        self.counter_path = os.path.join(directory, "counts.txt")
        config = os.path.join(directory, "gateway.yaml")
        self.gateway = bench.Gateway(os.environ["GROUP_COMMIT_BINARY"], os.path.join(directory, "data"),
                                     os.path.join(directory, "gateway.log"), extra=["--config", config])
        self.gateway.port = bench.free_port()
        cost_report.write_config(config, vendor.base, self.gateway.base)
        if extra:
            with open(config, "a") as handle:
                handle.write(extra.rstrip() + "\n")
        os.makedirs(self.gateway.data_dir, exist_ok=True)
        bench.start_with_environment(self.gateway, LD_PRELOAD=library, ALLOC_COUNT_OUT=self.counter_path)
        self.counter = cost_report.Allocations(self.counter_path)
        self.counter.totals(self.gateway.process.pid)

    def run(self, clients, seconds, prefix, counter_start):
        pid = self.gateway.process.pid
        syncs_before = self.counter.totals(pid)[2]
        groups_before, calls_before = group_counts(self.gateway.port)
        cpu_before = self.gateway.cpu_seconds()
        result = bench.wrk_starts(self.gateway.base, clients, seconds, "twilio_remote", prefix, counter_start)
        cpu = self.gateway.cpu_seconds() - cpu_before
        syncs = self.counter.totals(pid)[2] - syncs_before
        groups_after, calls_after = group_counts(self.gateway.port)
        starts = result["starts"]
        groups = groups_after - groups_before
        return {"starts": starts, "syncs_per_start": syncs / starts, "groups_per_start": groups / starts,
                "calls_per_group": (calls_after - calls_before) / groups if groups else 0.0,
                "rps": result["rps"], "p50_ms": result["p50_ms"], "p99_ms": result["p99_ms"],
                "cpu_us_per_start": cpu / starts * 1e6}

    def stop(self):
        self.gateway.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gateway", default=os.path.join(bench.ROOT, ".build", "release", "gateway"))
    parser.add_argument("--clients", default="1,8,32,64", help="numbers of concurrent clients, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=5, help="seconds of load per run")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=YAML",
                        help="a measured gateway whose configuration adds YAML (repeatable)")
    args = parser.parse_args()
    clients = [int(part) for part in args.clients.split(",")]
    variants = [("default", "")] + [tuple(v.split("=", 1)) for v in args.variant]
    if any(len(v) != 2 for v in variants):
        raise SystemExit("--variant takes NAME=YAML")
    os.environ["GROUP_COMMIT_BINARY"] = args.gateway
    os.environ.update(COST_GATEWAY_KEY=bench.KEY, COST_TWILIO_TOKEN=cost_report.TOKEN)
    scratch = tempfile.mkdtemp(prefix="gateway-group-commit-")
    library = os.path.join(scratch, "alloc_count.so")
    built = subprocess.run([shutil.which("cc") or "cc", "-O2", "-shared", "-fPIC", "-o", library,
                            os.path.join(bench.HERE, "alloc_count.c")], capture_output=True, text=True)
    if built.returncode != 0:
        raise SystemExit("cc alloc_count.c failed:\n" + built.stderr)
    vendor = bench.Gateway(args.gateway, os.path.join(scratch, "vendor"), os.path.join(scratch, "vendor.log"))
    os.makedirs(vendor.data_dir, exist_ok=True)
    running = []
    results = {name: {n: [] for n in clients} for name, _ in variants}
    try:
        vendor.start()
        for name, extra in variants:
            running.append(Variant(name, extra, scratch, library, vendor))
        # Numbers: a prefix per number of clients, a block of the counter per round (start.lua adds the thread's
        # digit and six digits of the counter), so that no start repeats a number.
        block = 999999 // (args.rounds + 1)
        for round_index in range(args.rounds + 1):
            for client_index, n in enumerate(clients):
                for variant in running:
                    seconds = args.seconds if round_index else 1
                    figures = variant.run(n, seconds, "+4475%d" % client_index, round_index * block)
                    if round_index:  # round 0 warms each variant and number of clients up
                        results[variant.name][n].append(figures)
                        bench.log("round %d, %s, %d clients: %.3f syncs per start, %.0f starts/s, p99 %.1f ms"
                                  % (round_index, variant.name, n, figures["syncs_per_start"], figures["rps"],
                                     figures["p99_ms"]))
    finally:
        for variant in running:
            variant.stop()
        vendor.stop()
    fields = ("syncs_per_start", "groups_per_start", "calls_per_group", "rps", "p50_ms", "p99_ms", "cpu_us_per_start")
    table = {name: {n: {field: round(statistics.median(r[field] for r in results[name][n]), 3) for field in fields}
                    for n in clients} for name, _ in variants}
    print("\n| variant | clients | syncs per start | commit groups per start | calls per group | starts/s | p50 ms |"
          " p99 ms | gateway CPU µs per start |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, _ in variants:
        for n in clients:
            f = table[name][n]
            print("| %s | %d | %.3f | %.3f | %.1f | %.0f | %.2f | %.2f | %.0f |" % (
                name, n, f["syncs_per_start"], f["groups_per_start"], f["calls_per_group"], f["rps"], f["p50_ms"],
                f["p99_ms"], f["cpu_us_per_start"]))
    print("\nmedians of %d rounds of %d s per variant and number of clients" % (args.rounds, args.seconds))
    print("RESULT " + json.dumps({"variants": dict(variants), "table": table, "rounds": results,
                                  "command": "python3 scripts/bench/group_commit.py " + " ".join(sys.argv[1:])}))
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
