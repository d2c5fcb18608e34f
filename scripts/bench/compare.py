#!/usr/bin/env python3
"""Two (or more) gateway builds measured interleaved on the same machine: CPU µs per request and req/s.

    python3 scripts/bench/compare.py ROUNDS SECONDS name=BINARY [name=BINARY ...]

Each round starts every binary in turn (sandbox mode, a new data directory) and runs, with the bench
suite's own wrk scripts: /healthz, starts through the Twilio emulator, the emulator alone, wrong-code checks and
right-code checks; then the suite's start → read code → check flow with its Python client (CPU µs per flow,
and flows/s). Interleaving spreads the shared machine's drifting load over every build alike; the
median CPU µs per request (the gateway process's user + system time over the requests it answered) is the
reading to compare. Loopback only; every run stops by itself. Needs what scripts/bench/run.sh installs (wrk).
"""
import base64, os, shutil, statistics, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402


def comparison_suite(label, binary, seconds, rate=1000):
    """A bench Suite for one build in one round of an interleaved comparison: no django, phone numbers or
    profile, its output in a temporary directory (remove `suite.args.out` after `suite.cleanup()`)."""
    class Args:
        pass
    args = Args()
    args.gateway, args.quick, args.seconds = binary, False, seconds
    args.out = os.path.join(tempfile.gettempdir(), "compare-%s-%d" % (label, os.getpid()))
    args.keep, args.prepare_seconds, args.rate, args.seeded = False, 6, rate, 0
    args.skip_django = args.skip_phone = args.no_profile = True
    return bench.Suite(args)


def main():
    if len(sys.argv) < 4 or any("=" not in a for a in sys.argv[3:]):
        sys.exit(__doc__)
    rounds, seconds = int(sys.argv[1]), int(sys.argv[2])
    builds = [a.split("=", 1) for a in sys.argv[3:]]
    table = {}
    for r in range(rounds):
        for name, binary in builds:
            suite = comparison_suite("%s-%d" % (name, r), binary, seconds)
            try:
                gateway = suite.gateway("main")
                gateway.start()
                time.sleep(0.3)
                cred = gateway.credentials()
                basic = base64.b64encode(("%s:%s" % (cred["account_sid"], cred["auth_token"])).encode()).decode()
                key = {"BENCH_KEY": bench.KEY}
                prefix = "+4474"
                suite.wrk("healthz", gateway.base, "healthz.lua", gateway=gateway)
                suite.wrk("start", gateway.base, "start.lua", dict(key, BENCH_PREFIX=prefix + "1"), gateway=gateway)
                suite.wrk("direct", gateway.base, "direct.lua", {
                    "BENCH_PREFIX": prefix + "2", "BENCH_BASIC": basic, "BENCH_SERVICE_SID": cred["service_sid"]},
                    gateway=gateway)
                prepared = os.path.join(suite.tmp, "prepared.tsv")
                suite.httpload("prepare", "prepare", "--base", gateway.base, "--key", bench.KEY, "--count", 3000,
                               "--max-seconds", 6, "--concurrency", 32, "--prefix", prefix + "3", "--out", prepared)
                env = dict(key, BENCH_PREPARED=prepared, BENCH_THREADS="1")
                suite.wrk("check_wrong", gateway.base, "check.lua", dict(env, BENCH_MODE="wrong", BENCH_REPEAT="1"),
                          gateway=gateway)
                suite.wrk("check_right", gateway.base, "check.lua", dict(env, BENCH_MODE="right"), gateway=gateway)
                # The suite's start → read code → check flow (the django comparison's), with the gateway's CPU.
                cpu_before, began = gateway.cpu_seconds(), time.perf_counter()
                flow = suite.httpload("flow", "flow", "--target", "gateway", "--base", gateway.base, "--key", bench.KEY,
                                      "--seconds", seconds, "--concurrency", 32, "--prefix", prefix + "4")
                cores = (gateway.cpu_seconds() - cpu_before) / (time.perf_counter() - began)
                table.setdefault((name, "flow"), []).append(
                    (cores / max(flow["flows_per_s"], 1e-9) * 1e6, flow["flows_per_s"]))
            finally:
                suite.cleanup()
                shutil.rmtree(suite.args.out, ignore_errors=True)
            for phase, result in suite.results.items():
                if "gateway_cores" in result:
                    us = result["gateway_cores"] * result["seconds"] / max(result["counted"], 1) * 1e6
                    table.setdefault((name, phase), []).append((us, result.get("active_rps", result["rps"])))
    print("load average:", open("/proc/loadavg").read().strip())
    for phase in ["healthz", "start", "direct", "check_wrong", "check_right", "flow"]:
        for name, _ in builds:
            runs = table.get((name, phase), [])
            if not runs:
                continue
            print("%-12s %-8s CPU µs/request median %5.0f (runs %s)  req/s best %6.0f" % (
                phase, name, statistics.median(x[0] for x in runs), ", ".join("%.0f" % x[0] for x in runs),
                max(x[1] for x in runs)))


if __name__ == "__main__":
    main()
