#!/usr/bin/env python3
"""Issue 46: the gateway CPU a sandbox start costs on an own-code provider against one through Twilio Verify.

    swift build -c release --product gateway
    python3 scripts/bench/own_code_cpu.py [--gateway .build/release/gateway] [--seconds 3] [--rounds 30]

One gateway in sandbox mode, with `messages` set so that the own code's message carries the origin-bound
line, and three providers on the sandbox's emulators. Alternating closed-loop rounds of `wrk -t1 -c32
start.lua` (`POST /v1/verifications`): `"provider": "twilio"` (the Twilio Verify emulator makes, stores and
sends its own code), `"provider": "twilio_messaging_quiet"` (the gateway derives the code, renders and measures
the message, and the Twilio Messaging emulator only records it; an API key without `webhook_auth_token`, so no
status callbacks are asked for) and `"provider": "twilio_messaging"` (the same, asking for status callbacks:
the emulator then posts two signed receipts per message, `sent` and `delivered`, which the gateway checks and
records, each one HTTP request, a signature, an idempotency claim and an event). Each round reads the gateway's
user and system CPU from /proc before and after, and divides it by the starts it answered (2xx). The figures
are the medians of the rounds' own-code/Verify ratios, with a bootstrap 90% interval of each. The emulators
run in the gateway's process, so each side pays for its emulator too, as a sandbox user sees it. The target
(issue 46) is a ratio of at most 1 for the start itself (the quiet side). Prints one `RESULT {json}` line.
"""
import argparse, json, os, statistics, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
from facade_cpu import run_wrk  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gateway", default=os.path.join(bench.ROOT, ".build", "release", "gateway"))
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    block = 10000 * max(2, args.seconds)
    if not 1 <= args.rounds <= 999999 // block - 1:
        raise SystemExit("--rounds takes 1 to %d at --seconds %d" % (999999 // block - 1, args.seconds))
    scratch = tempfile.mkdtemp(prefix="gateway-own-code-bench-")
    config = os.path.join(scratch, "gateway.yaml")
    port = bench.free_port()
    sandbox = "http://127.0.0.1:%d/sandbox" % port
    account = "account_sid: AC5a4db0c5a4db0c5a4db0c5a4db0c0001, auth_token_env: BENCH_TWILIO_TOKEN"
    with open(config, "w") as handle:
        handle.write(
            "sandbox: true\napi_keys:\n  - {name: bench, key_env: BENCH_GATEWAY_KEY, scopes: [verify]}\n"
            "messages: {app: Bench, origin_bound: {host: example.com}}\nproviders:\n"
            "  - {id: twilio, plugin: twilio, settings: {%s, service_sid: VA5a4db0c5a4db0c5a4db0c5a4db0c0001,"
            " base_url: \"%s/twilio\"}}\n"
            "  - {id: twilio_messaging, plugin: twilio_messaging, settings: {%s, base_url: \"%s/twilio_messaging\"}}\n"
            "  - {id: twilio_messaging_quiet, plugin: twilio_messaging, settings: {%s,"
            " api_key_sid: SK5a4db0c5a4db0c5a4db0c5a4db0c0001, base_url: \"%s/twilio_messaging\"}}\n"
            % (account, sandbox, account, sandbox, account, sandbox))
    os.environ["BENCH_GATEWAY_KEY"] = bench.KEY
    os.environ["BENCH_TWILIO_TOKEN"] = "5a4db0c0sandbox0auth0token000001"
    gateway = bench.Gateway(args.gateway, os.path.join(scratch, "data"), os.path.join(scratch, "gateway.log"),
                            extra=["--config", config])
    gateway.port = port
    os.makedirs(gateway.data_dir, exist_ok=True)
    gateway.start()
    sides = {"verify": ("twilio", "+44741"), "own_code_quiet": ("twilio_messaging_quiet", "+44743"),
             "own_code": ("twilio_messaging", "+44742")}
    rounds = {side: [] for side in sides}
    try:
        for index in range(args.rounds + 1):
            results = {}
            for side, (provider, prefix) in sides.items():
                environment = {"BENCH_KEY": bench.KEY, "BENCH_PREFIX": prefix, "BENCH_PROVIDER": provider,
                               "BENCH_COUNTER_START": str(index * block)}
                results[side] = run_wrk(gateway, "start.lua", environment, args.seconds if index else 2)
            if index == 0:
                continue  # a warm-up of each side, not counted
            for side, result in results.items():
                rounds[side].append(result)
            bench.log("round %d: verify %.0f µs/start (%d starts), own code %.0f (%d), with receipts %.0f (%d)"
                      % (index, results["verify"]["us_per_start"], results["verify"]["starts"],
                         results["own_code_quiet"]["us_per_start"], results["own_code_quiet"]["starts"],
                         results["own_code"]["us_per_start"], results["own_code"]["starts"]))
    finally:
        gateway.stop()
    medians = {side: statistics.median(r["us_per_start"] for r in rounds[side]) for side in sides}
    figures = {}
    for side in ("own_code_quiet", "own_code"):
        ratios = [o["us_per_start"] / v["us_per_start"] for v, o in zip(rounds["verify"], rounds[side])]
        ratio, low, high = bench.median_ratio_interval(ratios, seed=46)
        figures[side] = {"ratio": round(ratio, 3), "ratio_interval": [round(low, 3), round(high, 3)]}
        bench.log("%s/verify per round, median %.3f (90%% interval %.3f..%.3f); medians %.0f / %.0f µs"
                  % (side, ratio, low, high, medians[side], medians["verify"]))
    print("RESULT " + json.dumps({
        "ratio": figures["own_code_quiet"]["ratio"], "ratio_interval": figures["own_code_quiet"]["ratio_interval"],
        "ratio_with_receipts": figures["own_code"]["ratio"],
        "ratio_with_receipts_interval": figures["own_code"]["ratio_interval"],
        "us_per_start": {side: round(value, 1) for side, value in medians.items()}, "rounds": rounds,
        "command": "python3 scripts/bench/own_code_cpu.py --gateway %s --seconds %d --rounds %d"
        % (os.path.relpath(args.gateway, bench.ROOT), args.seconds, args.rounds),
    }))


if __name__ == "__main__":
    main()
