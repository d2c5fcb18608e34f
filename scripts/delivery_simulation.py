#!/usr/bin/env python3
"""Issue 47: delivery failover, simulated. Four messaging vendors, delivery that differs by country, and one
vendor that silently stops delivering in one country midway.

    scripts/delivery_simulation.py                       # builds and starts its own sandbox gateway
    scripts/delivery_simulation.py --no-build --users 2000 --rate 25 --deliver-within 5

It writes a configuration with one route for every SMS through the four messaging plugins, in the order
twilio_messaging, vonage_sms, sinch_sms, telnyx_messaging, with `delivery: {deliver_within: N s, failover: true}`,
starts `gateway` with it on a free loopback port, and gives each emulator a delivery rate per country through
`PUT /sandbox/faults/{plugin}` (`delivery_rate_by_country`); a message that is not delivered gets an `undelivered`
receipt with the vendor's code. Users arrive at `--rate` per second, in turn from GB, ID and DE. Each starts a
verification, watches the sandbox outbox (the phone) for up to `deliver_within + 5` seconds, and types the code
it got. Halfway, twilio_messaging in ID stops delivering and stops sending receipts (`delivery_rate_by_country`
0 and `undelivered_receipt_rate_by_country` 0): it still answers every send, as a vendor that goes quiet does.

It checks the issue's figures (exit status 1 if one fails):
  1. after the break, >= 99% of the users in ID receive a code within `deliver_within + 5` seconds of their start;
  2. no user receives two messages (two `delivered` receipts on one verification's timeline: a second send
     after a delivered first one);
  3. every user who received a code and typed it is approved;
  4. within 300 users of ID after the break, the broken vendor's share of a rolling 50 ID starts falls under
     10%: its circuit breaker counts messages not delivered as failures, and routing passes an open breaker over.
It prints, per country and phase, users, codes received in time, the median and 95th percentile time to the
code, failovers, and the broken vendor's share of the starts.

With --adaptive it plays the learning from receipts instead: the route is adaptive with `objective: deliveries`
per country (no failover, so each user's code is its first message's), and from the start twilio_messaging
delivers only 60% in ID, reporting the rest undelivered; nothing breaks midway. It checks that
twilio_messaging's share of the last 100 ID starts is at most 15% (it starts at a quarter), and prints each
vendor's share per country and half, and the delivered share of first messages per half. Stdlib only.
"""
import argparse, concurrent.futures, os, shutil, statistics, sys, tempfile, time, urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_gateway as gw  # noqa: E402
from adaptive_simulation import number  # noqa: E402  (a valid mobile number of GB, ID or DE, one per user)

KEY = "sk_sandbox_delivery_sim_0001"
VENDORS = ("twilio_messaging", "vonage_sms", "sinch_sms", "telnyx_messaging")
COUNTRIES = ("GB", "ID", "DE")
# Delivered share per vendor and country; what is not delivered gets an `undelivered` receipt with `code`.
RATES = {
    "twilio_messaging": ({"GB": 0.97, "ID": 0.93, "DE": 0.95}, "30003"),
    "vonage_sms": ({"GB": 0.90, "ID": 0.95, "DE": 0.92}, "12"),
    "sinch_sms": ({"GB": 0.93, "ID": 0.90, "DE": 0.97}, "402"),
    "telnyx_messaging": ({"GB": 0.95, "ID": 0.92, "DE": 0.90}, "40006"),
}
BROKEN = ("twilio_messaging", "ID")
WEAK_RATE = 0.6  # --adaptive: the broken vendor's delivery in ID from the start, with undelivered receipts

ADAPTIVE_CONFIG = """\
sandbox: true
messages: {{app: Sim}}
routing:
  routes:
    - name: otp
      match: {{channels: [sms]}}
      adaptive: {{providers: [{providers}], objective: deliveries, per: [country], min_share: 0.03, window: 1h,
                  settle_after: 30s}}
"""

CONFIG = """\
sandbox: true
messages: {{app: Sim}}
routing:
  routes:
    - name: otp
      match: {{channels: [sms]}}
      providers: [{providers}]
      delivery: {{deliver_within: {within}s, failover: true}}
"""


def call(base, method, path, body=None, key=KEY):
    return gw.call(base, method, path, body, key=key)


def set_rates(base, seed, broken=False, weak=False):
    for vendor, (rates, code) in RATES.items():
        body = {"delivery_rate_by_country": dict(rates), "delivery_seed": seed, "undelivered_code": code,
                "undelivered_receipt_rate_by_country": {}}
        if weak and vendor == BROKEN[0]:
            body["delivery_rate_by_country"][BROKEN[1]] = WEAK_RATE
        if broken and vendor == BROKEN[0]:
            body["delivery_rate_by_country"][BROKEN[1]] = 0
            body["undelivered_receipt_rate_by_country"] = {BROKEN[1]: 0}
        status, answer = call(base, "PUT", f"/sandbox/faults/{vendor}", body, key=None)
        if status != 200 or answer.get("delivery_rate_by_country") != body["delivery_rate_by_country"]:
            raise SystemExit(f"cannot set {vendor}'s delivery: {status} {answer}")


def simulate_user(base, index, window, phase):
    country = COUNTRIES[index % 3]
    to = number(country, index)
    began = time.monotonic()
    status, started = call(base, "POST", "/v1/verifications", {"to": to, "channel": "sms"})
    result = {"index": index, "country": country, "phase": phase, "first": started.get("provider"),
              "received": None, "messages": 0, "approved": False}
    if status != 201:
        result["error"] = started.get("error", {}).get("code", str(status))
        return result
    messages = []
    while time.monotonic() - began < window:
        _, outbox = call(base, "GET", "/sandbox/outbox?to=" + urllib.parse.quote(to), key=None)
        messages = outbox.get("messages", [])
        if messages:
            result["received"] = time.monotonic() - began
            break
        time.sleep(0.25)
    if messages:
        status, checked = call(base, "POST", f"/v1/verifications/{started['id']}/check",
                               {"code": messages[0]["code"]})
        result["approved"] = status == 200 and checked.get("status") == "approved"
    else:
        call(base, "POST", f"/v1/verifications/{started['id']}/cancel", {})
    result["id"] = started["id"]
    return result


def run_phase(base, indices, rate, window, phase, concurrency):
    began = time.monotonic()

    def paced(position_index):
        position, index = position_index
        delay = began + position / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        return simulate_user(base, index, window, phase)

    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        return list(pool.map(paced, enumerate(indices)))


def percentile(values, share):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def stop(process):
    process.terminate()
    try:
        process.wait(timeout=20)
    except Exception:
        process.kill()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=2000)
    parser.add_argument("--rate", type=float, default=25, help="users arriving per second")
    parser.add_argument("--deliver-within", type=int, default=5, help="the route's deliver_within, in seconds")
    parser.add_argument("--seed", type=int, default=47)
    parser.add_argument("--no-build", action="store_true")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--adaptive", action="store_true",
                        help="an adaptive route learning from receipts (objective: deliveries), see above")
    args = parser.parse_args()
    directory = tempfile.mkdtemp(prefix="delivery-simulation-")
    config = os.path.join(directory, "gateway.yaml")
    with open(config, "w") as f:
        template = ADAPTIVE_CONFIG if args.adaptive else CONFIG
        f.write(template.format(providers=", ".join(VENDORS), within=args.deliver_within))
    binary = os.path.join(gw.ROOT, ".build", "debug", "gateway") if args.no_build else gw.build()
    os.environ["GATEWAY_SANDBOX_API_KEY"] = KEY
    gw.KEY = KEY
    process, base = gw.start(binary, os.path.join(directory, "data"), extra=["--config", config],
                             log_path=os.path.join(directory, "gateway.log"))
    window = args.deliver_within + 5
    concurrency = int(args.rate * (window + 2)) + 16
    if args.adaptive:
        try:
            return adaptive(base, args, window, concurrency, directory)
        finally:
            stop(process)
    try:
        set_rates(base, args.seed)
        half = args.users // 2
        results = run_phase(base, range(half), args.rate, window, "before", concurrency)
        set_rates(base, args.seed, broken=True)
        results += run_phase(base, range(half, args.users), args.rate, window, "after", concurrency)
        time.sleep(1)
        # Each verification's timeline: who sent, and why it failed over.
        failovers = {}
        for r in results:
            if "id" not in r:
                continue
            _, read = call(base, "GET", f"/v1/verifications/{r['id']}?include=timeline")
            reasons = [e["detail"].get("delivery_failover") for e in read.get("timeline", [])
                       if e.get("kind") == "resent" and e.get("detail", {}).get("delivery_failover")]
            r["failovers"] = len(reasons)
            for reason in reasons:
                kind = "silent" if "not delivered within" in reason else "undelivered"
                failovers[kind] = failovers.get(kind, 0) + 1
            # Messages that reached the phone: the `delivered` receipts, one per message (the outbox keeps only
            # the newest thousand messages).
            r["messages"] = len({e["detail"].get("message_id") for e in read.get("timeline", [])
                                 if e.get("kind") == "delivery" and e.get("detail", {}).get("status") == "delivered"})
    finally:
        stop(process)

    errors = [r for r in results if "error" in r]
    print(f"users {len(results)}, start errors {len(errors)}, deliver_within {args.deliver_within}s, "
          f"window {window}s, rate {args.rate}/s")
    print(f"{'phase':<7} {'country':<8} {'users':>6} {'in time':>8} {'share':>7} {'p50 s':>6} {'p95 s':>6} "
          f"{'failed over':>12} {'broken first':>13}")
    for phase in ("before", "after"):
        for country in COUNTRIES:
            group = [r for r in results if r["phase"] == phase and r["country"] == country]
            got = [r["received"] for r in group if r["received"] is not None]
            moved = sum(1 for r in group if r.get("failovers"))
            broken = sum(1 for r in group if r["first"] == BROKEN[0])
            share = len(got) / len(group) if group else 0
            print(f"{phase:<7} {country:<8} {len(group):>6} {len(got):>8} {share:>7.2%} "
                  f"{percentile(got, 0.5):>6.1f} {percentile(got, 0.95):>6.1f} {moved:>12} "
                  f"{broken / len(group) if group else 0:>13.1%}")
    print(f"failovers by cause: {failovers}")
    after_id = [r for r in results if r["phase"] == "after" and r["country"] == BROKEN[1]]
    in_time = sum(1 for r in after_id if r["received"] is not None)
    share = in_time / len(after_id) if after_id else 0
    doubles = [r for r in results if r["messages"] > 1]
    unapproved = [r for r in results if r["received"] is not None and not r["approved"]]
    checks = [
        (f"after the break, {share:.2%} of {len(after_id)} users in {BROKEN[1]} got a code within {window}s "
         f"(>= 99%)", share >= 0.99),
        (f"users who received two messages: {len(doubles)} (0)", not doubles),
        (f"users who got a code and were not approved: {len(unapproved)} (0)", not unapproved),
        (f"start errors: {len(errors)} (0)", not errors),
    ]
    # The rolling share of the broken vendor among ID's starts after the break, in arrival order.
    ordered = sorted(after_id, key=lambda r: r["index"])
    fell = None
    for end in range(50, len(ordered) + 1):
        window_share = sum(1 for r in ordered[end - 50:end] if r["first"] == BROKEN[0]) / 50
        if window_share < 0.10:
            fell = end
            break
    tail = ordered[fell:] if fell else []
    tail_share = sum(1 for r in tail if r["first"] == BROKEN[0]) / len(tail) if tail else float("nan")
    checks.append((f"the broken vendor's share of a rolling 50 {BROKEN[1]} starts fell under 10% after "
                   f"{fell if fell else 'never'} of {len(ordered)} users (<= 300); after that {tail_share:.1%}",
                   fell is not None and fell <= 300))
    return verdict(checks, args, directory, "delivery simulation")


def adaptive(base, args, window, concurrency, directory):
    """--adaptive: the bandit learns from the receipts which vendor delivers in each country."""
    set_rates(base, args.seed, weak=True)
    results = run_phase(base, range(args.users), args.rate, window, "all", concurrency)
    time.sleep(1)
    errors = [r for r in results if "error" in r]
    half = args.users // 2
    print(f"users {len(results)}, start errors {len(errors)}, objective deliveries, {BROKEN[0]} delivering "
          f"{WEAK_RATE:.0%} in {BROKEN[1]}, rate {args.rate}/s")
    print(f"{'half':<7} {'country':<8} {'users':>6} {'code':>7} " + " ".join(f"{v:>17}" for v in VENDORS))
    for name, part in (("first", [r for r in results if r["index"] < half]),
                       ("second", [r for r in results if r["index"] >= half])):
        for country in COUNTRIES:
            group = [r for r in part if r["country"] == country]
            got = sum(1 for r in group if r["received"] is not None)
            shares = [sum(1 for r in group if r["first"] == v) / len(group) if group else 0 for v in VENDORS]
            print(f"{name:<7} {country:<8} {len(group):>6} {got / len(group) if group else 0:>7.1%} "
                  + " ".join(f"{share:>17.1%}" for share in shares))
    ordered = sorted([r for r in results if r["country"] == BROKEN[1]], key=lambda r: r["index"])
    last = ordered[-100:]
    weak_share = sum(1 for r in last if r["first"] == BROKEN[0]) / len(last) if last else 1
    unapproved = [r for r in results if r["received"] is not None and not r["approved"]]
    checks = [
        (f"{BROKEN[0]}'s share of the last {len(last)} {BROKEN[1]} starts: {weak_share:.1%} (<= 15%)",
         weak_share <= 0.15),
        (f"users who got a code and were not approved: {len(unapproved)} (0)", not unapproved),
        (f"start errors: {len(errors)} (0)", not errors),
    ]
    return verdict(checks, args, directory, "delivery simulation (adaptive)")


def verdict(checks, args, directory, name):
    """Prints each check, keeps the directory when one failed (or --keep); the exit status."""
    failed = False
    for text, ok in checks:
        print(("PASS " if ok else "FAIL ") + text)
        failed = failed or not ok
    if args.keep or failed:
        print(f"kept {directory}")
    else:
        shutil.rmtree(directory, ignore_errors=True)
    print(f"{name}: " + ("FAILED" if failed else "passed"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
