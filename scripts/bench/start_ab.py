#!/usr/bin/env python3
"""Two or more gateway builds, interleaved: the production-path start's CPU as a ratio to /healthz, per build.

    python3 scripts/bench/start_ab.py [--rounds 8] [--seconds 3] name=BINARY name=BINARY [...]

Each build runs as cost_report.py runs it: a measured gateway (with the allocation counter preloaded) and a
vendor gateway of the same build serving the Twilio Verify emulator in a process of its own. All are up for the
whole run; each round then measures every build in turn (the order alternates from round to round): `wrk -t1
-c32` of `/healthz`, then of starts through the vendor process, and divides the two CPU figures of that build
in that round. A build's reading is the median of its rounds' ratios with a bootstrap 90% interval, and the
comparison is the median of the per-round quotients of the builds' ratios: a round in which the machine was
slow is slow for every build alike. Only starts and /healthz, so a comparison takes minutes, not the quarter
of an hour a full cost report with checks takes. Loopback only; every process stops at the end.
"""
import argparse, os, shutil, statistics, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
from cost_report import Report  # noqa: E402
from facade_cpu import run_wrk  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("builds", nargs="+", metavar="name=BINARY")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--seconds", type=int, default=3)
    args = parser.parse_args()
    builds = []
    for spec in args.builds:
        name, _, binary = spec.partition("=")
        if not binary or not os.path.exists(binary):
            raise SystemExit("expected name=BINARY with an existing binary, got %r" % spec)
        builds.append((name, binary))
    block = 10000 * max(2, args.seconds)
    if not 1 <= args.rounds <= 999999 // block - 1:
        raise SystemExit("--rounds takes 1 to %d at --seconds %d" % (999999 // block - 1, args.seconds))
    reports = []
    try:
        for name, binary in builds:
            report = Report(argparse.Namespace(gateway=binary))
            reports.append((name, report))
            report.start()
        ratios = {name: [] for name, _ in builds}
        figures = {name: [] for name, _ in builds}
        for index in range(args.rounds + 1):
            seconds = args.seconds if index else 1
            environment = {"BENCH_KEY": bench.KEY, "BENCH_COUNTER_START": str(index * block)}
            order = reports if index % 2 == 0 else list(reversed(reports))
            line = []
            for name, report in order:
                healthz = run_wrk(report.gateway, "healthz.lua", environment, seconds)
                start = run_wrk(report.gateway, "start.lua",
                                dict(environment, BENCH_PROVIDER="twilio_remote", BENCH_PREFIX="+44752"), seconds)
                if index == 0:
                    continue  # a warm-up of every build
                ratios[name].append(start["us_per_start"] / healthz["us_per_start"])
                figures[name].append((healthz["us_per_start"], start["us_per_start"]))
                line.append("%s %.0f/%.0f µs = %.2f" % (name, start["us_per_start"], healthz["us_per_start"],
                                                        ratios[name][-1]))
            if index:
                bench.log("round %d: %s" % (index, ", ".join(line)))
    finally:
        for _, report in reports:
            report.stop()
            shutil.rmtree(report.scratch, ignore_errors=True)
    print("\n| build | /healthz CPU µs | start CPU µs | start / /healthz (90% interval) |")
    print("|---|---:|---:|---:|")
    for name, _ in builds:
        ratio, low, high = bench.median_ratio_interval(ratios[name], seed=48)
        print("| %s | %.0f | %.0f | %.2f (%.2f–%.2f) |" % (
            name, statistics.median(h for h, _ in figures[name]), statistics.median(s for _, s in figures[name]),
            ratio, low, high))
    base = builds[0][0]
    for name, _ in builds[1:]:
        quotients = [r / b for r, b in zip(ratios[name], ratios[base])]
        ratio, low, high = bench.median_ratio_interval(quotients, seed=48)
        print("%s against %s, per round: %.3f (90%% interval %.3f–%.3f; rounds %s)" % (
            name, base, ratio, low, high, ", ".join("%.2f" % q for q in quotients)))


if __name__ == "__main__":
    main()
