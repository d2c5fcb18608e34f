#!/usr/bin/env python3
"""Added latency at a fixed rate for two (or more) gateway builds, interleaved on the same machine.

    python3 scripts/bench/latency_compare.py ROUNDS SECONDS name=BINARY [name=BINARY ...] [--rate N]

Each round starts every binary in turn (sandbox mode, a new data directory) and runs the suite's open-loop
client (`httpload.py rate`) at the fixed rate: starts through the gateway, then the same requests straight to
its Twilio emulator; it prints each round's p50/p90/p99 for both and the difference, then the medians per
build. Loopback only; every run stops by itself. Needs what scripts/bench/run.sh installs.
"""
import os, shutil, statistics, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
from compare import comparison_suite  # noqa: E402


def main():
    argv = list(sys.argv[1:])
    rate = 1000
    if "--rate" in argv:
        index = argv.index("--rate")
        rate = int(argv[index + 1])
        del argv[index:index + 2]
    if len(argv) < 3 or any("=" not in a for a in argv[2:]):
        sys.exit(__doc__)
    rounds, seconds = int(argv[0]), int(argv[1])
    builds = [a.split("=", 1) for a in argv[2:]]
    table = {}
    counter = 0
    for r in range(rounds):
        for name, binary in builds:
            suite = comparison_suite("latency-%s-%d" % (name, r), binary, seconds, rate)
            try:
                gateway = suite.gateway("main")
                gateway.start()
                time.sleep(0.3)
                cred = gateway.credentials()
                row = {}
                for kind in ("gateway", "direct"):
                    counter += 1
                    result = suite.httpload(
                        "rate_" + kind, "rate", "--kind", kind, "--base", gateway.base, "--key", bench.KEY,
                        "--rate", rate, "--seconds", seconds, "--warmup", 1, "--prefix", "+4475%d" % (counter % 10),
                        "--account-sid", cred["account_sid"], "--auth-token", cred["auth_token"],
                        "--service-sid", cred["service_sid"])
                    row[kind] = result["service"]
            finally:
                suite.cleanup()
                shutil.rmtree(suite.args.out, ignore_errors=True)
            added = {p: row["gateway"][p] - row["direct"][p] for p in ("p50_ms", "p90_ms", "p99_ms")}
            table.setdefault(name, []).append(added)
            print("round %d %-10s gateway p50 %.2f p90 %.2f p99 %.2f p99.9 %.2f | direct p50 %.2f p90 %.2f p99 %.2f "
                  "p99.9 %.2f | added p50 %+.2f p90 %+.2f p99 %+.2f" % (
                      r, name, row["gateway"]["p50_ms"], row["gateway"]["p90_ms"], row["gateway"]["p99_ms"],
                      row["gateway"]["p999_ms"], row["direct"]["p50_ms"], row["direct"]["p90_ms"],
                      row["direct"]["p99_ms"], row["direct"]["p999_ms"],
                      added["p50_ms"], added["p90_ms"], added["p99_ms"]), flush=True)
    print("load average:", open("/proc/loadavg").read().strip())
    for name, _ in builds:
        rows = table[name]
        print("%-10s added, medians of %d rounds: p50 %+.2f ms, p90 %+.2f ms, p99 %+.2f ms" % (
            name, len(rows), *(statistics.median(x[p] for x in rows) for p in ("p50_ms", "p90_ms", "p99_ms"))))


if __name__ == "__main__":
    main()
