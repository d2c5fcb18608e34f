#!/usr/bin/env python3
"""Issue 49: the CPU a start costs with traces on (every span sampled and exported) against traces off.

    swift build -c release --product gateway
    python3 scripts/bench/tracing_cpu.py [--gateway .build/release/gateway] [--seconds 3] [--rounds 20]

Two release gateways in sandbox mode, one started with `OTEL_EXPORTER_OTLP_ENDPOINT` pointing at a collector in
this script (a loopback HTTP server that reads each export and answers 200; its CPU is this script's, not the
gateway's) and `OTEL_TRACES_SAMPLER=always_on`, the other without. Alternating closed-loop rounds of
`wrk -t1 -c32 start.lua` against each; a round's figure is the gateway's user + system CPU per answered start, and
the result is the median over rounds of on/off (with a bootstrap 90% interval), as scripts/bench/facade_cpu.py
does. Prints one `RESULT {json}` line, with the spans and bytes the collector received.

With --baseline BINARY it measures what tracing costs when it is off instead: both gateways start without a
collector, the `on` side being --gateway and the `off` side BINARY (a build from before tracing), so the ratio is
the new code's CPU per start over the old code's, traces off.
"""
import argparse, json, os, statistics, sys, tempfile, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
from facade_cpu import run_wrk  # noqa: E402


class Collector(BaseHTTPRequestHandler):
    exports = 0
    bytes = 0

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        Collector.exports += 1
        Collector.bytes += len(body)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gateway", default=os.path.join(bench.ROOT, ".build", "release", "gateway"))
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--baseline", help="compare --gateway against this binary, both with traces off")
    args = parser.parse_args()
    block = 10000 * max(2, args.seconds)
    collector = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=collector.serve_forever, daemon=True).start()
    scratch = tempfile.mkdtemp(prefix="gateway-tracing-bench-")
    gateways = {}
    for side in ("off", "on"):
        if side == "on" and not args.baseline:
            os.environ.update(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:%d" % collector.server_address[1],
                              OTEL_TRACES_SAMPLER="always_on", OTEL_SERVICE_NAME="bench")
        binary = args.baseline if side == "off" and args.baseline else args.gateway
        gateway = bench.Gateway(binary, os.path.join(scratch, side), os.path.join(scratch, side + ".log"))
        os.makedirs(gateway.data_dir, exist_ok=True)
        gateway.start()
        gateways[side] = gateway
    rounds = {"off": [], "on": []}
    try:
        for index in range(args.rounds + 1):
            for side, prefix in (("off", "+44741"), ("on", "+44742")):
                env = {"BENCH_KEY": bench.KEY, "BENCH_PREFIX": prefix, "BENCH_IDEMPOTENCY": "0",
                       "BENCH_COUNTER_START": str(index * block)}
                result = run_wrk(gateways[side], "start.lua", env, args.seconds if index else 2)
                if index:
                    rounds[side].append(result)
            if index:
                bench.log("round %d: off %.0f µs/start, on %.0f µs/start" % (
                    index, rounds["off"][-1]["us_per_start"], rounds["on"][-1]["us_per_start"]))
    finally:
        for gateway in gateways.values():
            gateway.stop()
        collector.shutdown()
    off = statistics.median(r["us_per_start"] for r in rounds["off"])
    on = statistics.median(r["us_per_start"] for r in rounds["on"])
    ratio, low, high = bench.median_ratio_interval(
        [n["us_per_start"] / f["us_per_start"] for f, n in zip(rounds["off"], rounds["on"])], seed=49)
    starts_on = sum(r["starts"] for r in rounds["on"])
    bench.log("on/off per round, median %.3f (90%% interval %.3f..%.3f); medians %.0f / %.0f µs"
              % (ratio, low, high, on, off))
    print("RESULT " + json.dumps({
        "on_over_off": round(ratio, 3), "interval": [round(low, 3), round(high, 3)],
        "off_us_per_start": round(off, 1), "on_us_per_start": round(on, 1),
        "exports": Collector.exports, "export_bytes": Collector.bytes, "starts_on": starts_on,
        "command": "python3 scripts/bench/tracing_cpu.py --gateway %s --seconds %d --rounds %d%s"
        % (os.path.relpath(args.gateway, bench.ROOT), args.seconds, args.rounds,
           " --baseline %s" % args.baseline if args.baseline else ""),
    }))


if __name__ == "__main__":
    main()
