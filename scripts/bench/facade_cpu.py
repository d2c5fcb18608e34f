#!/usr/bin/env python3
"""Issue 34: the gateway CPU a start costs through the Twilio-compatible front door against the native API.

    swift build -c release --product gateway
    python3 scripts/bench/facade_cpu.py [--gateway .build/release/gateway] [--seconds 10] [--rounds 3]

One release gateway in sandbox mode with a `twilio_compat` service routed to the sandbox Twilio emulator.
Alternating closed-loop rounds of `wrk -t1 -c32`: `start.lua` (`POST /v1/verifications`, JSON, Bearer key,
`"provider": "twilio"`) and `twilio_front.lua` (`POST /twilio/v2/Services/{VA}/Verifications`, form, HTTP
Basic). Each round reads the gateway's user + system CPU from /proc before and after, and divides by the
starts it answered (2xx). Every start goes through the same engine, store and emulator; only the front door
differs. The figure is the median over the rounds of each round's facade/native ratio (a round's native and
facade runs are seconds apart, so a drift of the machine cancels), with a bootstrap 90% interval of that
median; the ratio of the two sides' medians is printed too. On a 2-core machine one round's ratio varies by
about ±10%, so the default is many short rounds (30 of 3 s a side). Prints one `RESULT {json}` line. The
target (issue 34) is at most +10%.

With --native-idempotency each native start carries an `Idempotency-Key`, so that both sides guard against a
double submit (the facade always does: its creates to one number run one at a time under a claim in the store).
"""
import argparse, base64, json, os, re, statistics, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402

ACCOUNT = "AC0f0e0d0c0b0a09080706050403020100"
SERVICE = "VA0b0e0c0b0e0c0b0e0c0b0e0c0b0e0c0b"


def run_wrk(gateway, script, env, seconds, expected="2"):
    """`wrk -t1 -c32` of `script` for `seconds` (or until the script stops itself); the gateway's CPU per answer.
    Every answer's status must start with `expected` (a wrong code's check answers 422: "4")."""
    environment = dict(os.environ, BENCH_DIR=bench.HERE, **env)
    before = gateway.cpu_seconds()
    output = subprocess.run(["wrk", "-t1", "-c32", "-d%ds" % seconds, "-s", os.path.join(bench.HERE, script),
                             gateway.base], env=environment, capture_output=True, text=True, timeout=seconds + 60)
    cpu = gateway.cpu_seconds() - before
    match = re.search(r"^RESULT (.*)$", output.stdout, re.M)
    if not match:
        raise SystemExit("wrk gave no result for %s:\n%s%s" % (script, output.stdout, output.stderr))
    result = json.loads(match.group(1))
    ok = sum(n for status, n in result["statuses"].items() if status.startswith(expected))
    if ok == 0 or ok != result["requests"]:
        raise SystemExit("%s: %d of %d answered %sxx: %s" % (script, ok, result["requests"], expected,
                                                            result["statuses"]))
    return {"starts": ok, "cpu_s": cpu, "us_per_start": cpu / ok * 1e6, "rps": result["rps"], "p50_ms": result["p50_ms"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gateway", default=os.path.join(bench.ROOT, ".build", "release", "gateway"))
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--native-idempotency", action="store_true",
                        help="send an Idempotency-Key with every native start")
    args = parser.parse_args()
    # Each round's numbers are a block of the 6-digit counter, wide enough for its starts at this rate.
    block = 10000 * max(2, args.seconds)
    if not 1 <= args.rounds <= 999999 // block - 1:
        raise SystemExit("--rounds takes 1 to %d at --seconds %d" % (999999 // block - 1, args.seconds))
    scratch = tempfile.mkdtemp(prefix="gateway-facade-bench-")
    config = os.path.join(scratch, "gateway.yaml")
    with open(config, "w") as handle:
        handle.write("sandbox: true\napi_keys:\n  - {name: bench, key_env: BENCH_GATEWAY_KEY, scopes: [verify]}\n"
                     "twilio_compat:\n  account_sid: %s\n  services:\n    - {sid: %s, providers: [twilio]}\n"
                     % (ACCOUNT, SERVICE))
    os.environ["BENCH_GATEWAY_KEY"] = bench.KEY
    gateway = bench.Gateway(args.gateway, os.path.join(scratch, "data"), os.path.join(scratch, "gateway.log"),
                            extra=["--config", config])
    os.makedirs(gateway.data_dir, exist_ok=True)
    gateway.start()
    basic = base64.b64encode(("%s:%s" % (ACCOUNT, bench.KEY)).encode()).decode()
    rounds = {"native": [], "facade": []}
    try:
        # UK mobile ranges (+44741…, +44742…) as the suite's start.lua uses: the thread's digit and a 6-digit
        # counter, each run starting where the one before stopped, so every start is to a new number.
        native_env = {"BENCH_KEY": bench.KEY, "BENCH_PREFIX": "+44741",
                      "BENCH_IDEMPOTENCY": "1" if args.native_idempotency else "0"}
        facade_env = {"BENCH_BASIC": basic, "BENCH_SERVICE_SID": SERVICE, "BENCH_PREFIX": "+44742"}
        for index in range(args.rounds + 1):
            start = {"BENCH_COUNTER_START": str(index * block)}
            native = run_wrk(gateway, "start.lua", dict(native_env, **start), args.seconds if index else 2)
            facade = run_wrk(gateway, "twilio_front.lua", dict(facade_env, **start), args.seconds if index else 2)
            if index == 0:
                continue  # a warm-up of each, not counted
            rounds["native"].append(native)
            rounds["facade"].append(facade)
            bench.log("round %d: native %.0f µs/start (%d starts), facade %.0f µs/start (%d starts)"
                      % (index, native["us_per_start"], native["starts"], facade["us_per_start"], facade["starts"]))
    finally:
        gateway.stop()
    native_us = statistics.median(r["us_per_start"] for r in rounds["native"])
    facade_us = statistics.median(r["us_per_start"] for r in rounds["facade"])
    ratios = [f["us_per_start"] / n["us_per_start"] for n, f in zip(rounds["native"], rounds["facade"])]
    ratio, low, high = bench.median_ratio_interval(ratios, seed=34)
    bench.log("facade/native per round, median %.3f (90%% interval %.3f..%.3f); medians %.0f / %.0f µs = %.3f"
              % (ratio, low, high, facade_us, native_us, facade_us / native_us))
    print("RESULT " + json.dumps({
        "overhead_percent": round((ratio - 1) * 100, 1),
        "overhead_interval_percent": [round((low - 1) * 100, 1), round((high - 1) * 100, 1)],
        "native_us_per_start": round(native_us, 1), "facade_us_per_start": round(facade_us, 1),
        "overhead_of_medians_percent": round((facade_us / native_us - 1) * 100, 1), "rounds": rounds,
        "command": "python3 scripts/bench/facade_cpu.py --gateway %s --seconds %d --rounds %d%s"
        % (os.path.relpath(args.gateway, bench.ROOT), args.seconds, args.rounds,
           " --native-idempotency" if args.native_idempotency else ""),
    }))


if __name__ == "__main__":
    main()
