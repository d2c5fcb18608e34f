#!/usr/bin/env python3
"""Breakers and failover under a flaky primary vendor (issue 31's acceptance check).

    scripts/failover_check.py                      # 3,000 starts at error_rate 0.3, then 600 ambiguous ones
    scripts/failover_check.py --starts 5000 --concurrency 16 --error-rate 0.3 --seed 7

Starts a sandbox gateway (`.build/debug/gateway`, built if missing) on a free loopback port with SMS
routed to `twilio` first and `sinch` as the fallback, and the breakers' default thresholds (5 failures in
a row, or half of at least 10 calls in 60 s) with a 1 s cooldown so they can close within the run. Then:

1. error phase: `PUT /sandbox/faults/twilio {"error_rate": 0.3, "seed": S}` (Twilio answers 503 to 30%
   of its calls, before acting) and `--starts` starts to distinct GB numbers, `--concurrency` at a time.
   Target: at least 99% of them answered 201.
2. ambiguous phase: `{"reset_rate": 0.1, "malformed_rate": 0.05}` on Twilio: the connection drops, or the
   body is garbage, after Twilio has sent the message. The gateway must not fail those over (the send may
   have happened), so each such start ends 502 with Twilio's one message.
3. recovery: `error_rate: 1` until Twilio's GB breaker reads `open`, then `DELETE /sandbox/faults/twilio`
   and starts one at a time until the breaker reads `closed` and Twilio serves again.

Throughout, a thread reads `GET /v1/admin/providers` every 50 ms and records the breaker's states. The
outbox keeps only the last 1,000 messages, so it is read and emptied after every 500 starts.
Targets: ≥ 99% served in the error phase; no number with more than one message in `/sandbox/outbox`; every
served start with exactly one message; the breaker seen open and, after the faults are cleared, closed.
Prints a summary; exits 1 when a target is missed (keeping its scratch directory, with the gateway's
log), 0 otherwise (removing it). Stdlib only.
"""
import argparse, collections, concurrent.futures, os, shutil, subprocess, sys, tempfile, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_gateway as gw

ROOT = gw.ROOT
PRIMARY, FALLBACK = "twilio", "sinch"
COUNTRY = "GB"

CONFIG = """\
sandbox: true
routing:
  default: [twilio, sinch]
breakers: {consecutive_failures: 5, failure_rate: 0.5, window_seconds: 60, min_requests: 10,
           cooldown_seconds: 1, max_cooldown_seconds: 4}
"""


def number(index):
    # Valid GB mobiles, one per start: +44 7400 000000 upwards (libphonenumber: GB, mobile).
    return f"+447400{index:06d}"


class BreakerWatch(threading.Thread):
    """Samples the primary's breaker for COUNTRY and keeps the states in the order they were seen."""

    def __init__(self, base):
        super().__init__(daemon=True)
        self.base, self.seen, self.samples, self.stop = base, [], 0, threading.Event()

    def state(self):
        status, body = gw.call(self.base, "GET", "/v1/admin/providers", timeout=10)
        if status != 200:
            return None
        for provider in body.get("providers", []):
            if provider.get("id") == PRIMARY:
                for breaker in provider.get("breakers", []):
                    if breaker.get("country") == COUNTRY:
                        return breaker.get("state")
                return "closed"  # no calls yet
        return None

    def run(self):
        while not self.stop.is_set():
            try:
                state = self.state()
            except OSError:
                state = None
            if state is not None:
                self.samples += 1
                if not self.seen or self.seen[-1] != state:
                    self.seen.append(state)
            self.stop.wait(0.05)

    def opened(self):
        return self.seen.count("open")

    def closed_after_open(self):
        """Times the breaker was seen closed again after being seen open."""
        return sum(1 for a, b in zip(self.seen, self.seen[1:]) if b == "closed" and a in ("open", "half_open"))


def start(base, index):
    began = time.monotonic()
    status, body = gw.call(base, "POST", "/v1/verifications", {"to": number(index), "channel": "sms"})
    return {"index": index, "status": status, "provider": body.get("provider"),
            "code": body.get("error", {}).get("code"), "seconds": time.monotonic() - began}


# The sandbox outbox keeps the last 1,000 messages: starts run in chunks smaller than that, and after each
# chunk (every answer in) the outbox is read into `senders` and emptied, so no message is missed.
CHUNK = 500


def drain_outbox(base, senders):
    status, outbox = gw.call(base, "GET", "/sandbox/outbox", key=None, timeout=60)
    if status != 200:
        raise SystemExit(f"GET /sandbox/outbox: {status}")
    for message in outbox.get("messages", []):
        senders[message["to"]].append(message["provider"])
    gw.call(base, "DELETE", "/sandbox/outbox", key=None, timeout=60)


def run_phase(base, pool, first, count, senders):
    results = []
    for chunk in range(first, first + count, CHUNK):
        results += pool.map(lambda i: start(base, i), range(chunk, min(chunk + CHUNK, first + count)))
        drain_outbox(base, senders)
    return results


def put_faults(base, plugin, body):
    status, answer = gw.call(base, "PUT", f"/sandbox/faults/{plugin}", body, key=None)
    if status != 200:
        raise SystemExit(f"PUT /sandbox/faults/{plugin} {body}: {status} {answer}")


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--starts", type=int, default=3000, help="starts in the error phase")
    parser.add_argument("--ambiguous-starts", type=int, default=600, help="starts in the ambiguous phase")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--error-rate", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--served-target", type=float, default=0.99)
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "debug", "gateway"))
    args = parser.parse_args()

    binary = args.binary if os.path.exists(args.binary) else gw.build()
    directory = tempfile.mkdtemp(prefix="gateway-failover-")
    config = os.path.join(directory, "gateway.yaml")
    with open(config, "w") as f:
        f.write(CONFIG)
    process, base = gw.start(binary, os.path.join(directory, "data"), extra=("--config", config),
                             log_path=os.path.join(directory, "gateway.log"))
    failures = []
    senders = collections.defaultdict(list)
    began = time.monotonic()
    pool = concurrent.futures.ThreadPoolExecutor(args.concurrency)
    try:
        drain_outbox(base, senders)
        watch = BreakerWatch(base)
        watch.start()

        # 1. A vendor failing 30% of its calls with a 503 before it acts.
        put_faults(base, PRIMARY, {"error_rate": args.error_rate, "seed": args.seed})
        phase_began = time.monotonic()
        errors = run_phase(base, pool, 0, args.starts, senders)
        error_seconds = time.monotonic() - phase_began
        opened_in_error_phase = watch.opened()

        # 2. Answers lost or garbled after the vendor sent.
        put_faults(base, PRIMARY, {"reset_rate": 0.1, "malformed_rate": 0.05, "seed": args.seed})
        ambiguous = run_phase(base, pool, args.starts, args.ambiguous_starts, senders)

        # 3. A full outage until the breaker reads open, then the vendor recovers: the breaker must close.
        put_faults(base, PRIMARY, {"error_rate": 1})
        recovery, index = [], args.starts + args.ambiguous_starts
        deadline = time.monotonic() + 10
        while watch.state() != "open" and time.monotonic() < deadline:
            recovery.append(start(base, index))
            index += 1
        open_before_clear = watch.state() == "open"
        status, cleared = gw.call(base, "DELETE", f"/sandbox/faults/{PRIMARY}", key=None)
        cleared_at = time.monotonic()
        if status != 200 or cleared.get("error_rate") != 0:
            failures.append(f"DELETE /sandbox/faults/{PRIMARY}: {status} {cleared}")
        closed_after = None
        while time.monotonic() < cleared_at + 20:
            recovery.append(start(base, index))
            index += 1
            if watch.state() == "closed" and recovery[-1]["provider"] == PRIMARY:
                closed_after = time.monotonic() - cleared_at
                break
            time.sleep(0.05)
        closed_at_end = watch.state() == "closed"
        time.sleep(0.1)
        watch.stop.set()
        watch.join()

        drain_outbox(base, senders)
    finally:
        pool.shutdown()
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
    elapsed = time.monotonic() - began

    messages = collections.Counter({to: len(providers) for to, providers in senders.items()})
    everything = errors + ambiguous + recovery
    doubles = [n for n, c in messages.items() if c > 1]
    served_unsent = [r for r in everything if r["status"] == 201 and messages[number(r["index"])] != 1]

    served = sum(r["status"] == 201 for r in errors)
    by_provider = collections.Counter(r["provider"] for r in errors if r["status"] == 201)
    statuses = collections.Counter(r["status"] for r in errors)
    latencies = [r["seconds"] * 1000 for r in errors if r["status"] == 201]
    amb_served = sum(r["status"] == 201 for r in ambiguous)
    amb_failed = [r for r in ambiguous if r["status"] != 201]
    amb_codes = collections.Counter(r["code"] for r in amb_failed)
    amb_sent_once = sum(1 for r in amb_failed if senders.get(number(r["index"])) == [PRIMARY])
    amb_by_provider = collections.Counter(r["provider"] for r in ambiguous if r["status"] == 201)

    print(f"failover check: sms to {PRIMARY} then {FALLBACK}, breaker cooldown 1 s, {args.concurrency} clients, "
          f"{elapsed:.1f} s in all")
    print(f"error phase: error_rate {args.error_rate} on {PRIMARY} (seed {args.seed}): {served} of {args.starts} "
          f"starts served ({served / args.starts:.2%}) in {error_seconds:.1f} s; by {dict(by_provider)}; "
          f"answers {dict(statuses)}; p50 {percentile(latencies, 0.5):.0f} ms, p99 {percentile(latencies, 0.99):.0f} ms")
    print(f"ambiguous phase: reset_rate 0.1, malformed_rate 0.05 on {PRIMARY}: {amb_served} of {args.ambiguous_starts} "
          f"served (by {dict(amb_by_provider)}); {len(amb_failed)} not failed over ({dict(amb_codes)}), "
          f"{amb_sent_once} of them with {PRIMARY}'s one message")
    print(f"recovery: error_rate 1 until the breaker read open ({open_before_clear}), then DELETE: closed and "
          f"{PRIMARY} serving again after " + (f"{closed_after:.1f} s" if closed_after is not None else "never (20 s)"))
    print(f"breaker {PRIMARY}/{COUNTRY}: {watch.samples} samples, opened {watch.opened()} times "
          f"({opened_in_error_phase} in the error phase), closed again {watch.closed_after_open()} times; "
          f"closed at the end: {closed_at_end}")
    print(f"outbox: {sum(messages.values())} messages to {len(messages)} numbers; numbers with more than one: "
          f"{len(doubles)}; served starts without exactly one message: {len(served_unsent)}")

    if served / args.starts < args.served_target:
        failures.append(f"served {served / args.starts:.2%} of the error phase's starts, target {args.served_target:.0%}")
    if doubles:
        failures.append(f"{len(doubles)} numbers got more than one message, e.g. {doubles[:3]}: "
                        f"{[senders[n] for n in doubles[:3]]}")
    if served_unsent:
        failures.append(f"{len(served_unsent)} served starts without exactly one message")
    if len(amb_failed) and amb_sent_once != len(amb_failed):
        failures.append(f"{len(amb_failed) - amb_sent_once} ambiguous failures without {PRIMARY}'s one message")
    if opened_in_error_phase == 0:
        failures.append(f"the breaker was never seen open at error_rate {args.error_rate}")
    if not open_before_clear:
        failures.append("a full outage did not open the breaker within 10 s")
    if closed_after is None or not closed_at_end or watch.closed_after_open() == 0:
        failures.append("the breaker did not close after the faults were cleared")
    if failures:
        print("FAILED (scratch directory kept: %s):\n  " % directory + "\n  ".join(failures))
        return 1
    shutil.rmtree(directory, ignore_errors=True)
    print("passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
