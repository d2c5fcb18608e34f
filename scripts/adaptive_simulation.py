#!/usr/bin/env python3
"""Simulates users of an adaptive route between three sandbox vendors and checks that traffic follows them.

    scripts/adaptive_simulation.py                      # builds and starts its own sandbox gateway
    scripts/adaptive_simulation.py --users 3000 --rate 20

It writes a configuration with one adaptive route (every SMS, providers twilio, sinch and vonage, objective
`conversions`, learned per country and channel, `min_share` 0.02, a window of `--window` seconds, 15 by default, and `settle_after` of `--settle`, 3), starts
`gateway` with it on a free loopback port, and gives each emulator a delivery rate per country through
`PUT /sandbox/faults/{plugin}` with `delivery_rate_by_country`: in each of GB, ID and DE a different vendor is
best. Users arrive at `--rate` per second, in turn from the three countries. Each starts a verification; if
the SMS arrived (it is in the sandbox outbox) the user types the code, and if it did not the app's "didn't get
a code?" button cancels it. Halfway through, the best vendor in ID (vonage) degrades from 0.95 to 0.40.

It then checks the issue's four figures (exit status 1 if one fails):
  1. after the first 1,000 users, until the degradation, the best vendor of each country has >= 80% of that
     country's starts (and, in the countries that did not change, to the end);
  2. after the degradation, the new best vendor in ID (sinch) holds >= 80% of a rolling 50 ID starts within
     500 ID users;
  3. conversions over the run are >= 95% (`--oracle-target`) of an oracle that always picks the best vendor (the expected
     conversions of that oracle, from the configured rates), and above a fixed equal split, with the
     one-sided p-value of a binomial test of the run's conversions against the equal split's rate;
  4. no healthy provider falls below min_share of its country's starts (checked per country, over the whole
     run, with a tolerance of 1.5 binomial standard deviations, since a share is a count of a few hundred).
It prints `GET /v1/routing/adaptive` at the end. Stdlib only.
"""
import argparse, concurrent.futures, json, math, os, shutil, subprocess, sys, tempfile, threading, time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_gateway as gw
from sandbox_gateway import free_port

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEY = "sk_sandbox_adaptive_key_0001"
VENDORS = ("twilio", "sinch", "vonage")
MIN_SHARE = 0.02
# Delivery rates per vendor and country: each country has its own best vendor.
RATES = {
    "twilio": {"GB": 0.95, "ID": 0.62, "DE": 0.78},
    "sinch": {"GB": 0.78, "ID": 0.78, "DE": 0.95},
    "vonage": {"GB": 0.62, "ID": 0.95, "DE": 0.62},
}
DEGRADED = ("vonage", "ID", 0.40)  # halfway: vonage in ID drops to 0.40, and sinch (0.78) is the best there
COUNTRIES = ("GB", "ID", "DE")

CONFIG = """\
sandbox: true
routing:
  default: [twilio, sinch, vonage]
  routes:
    - name: sms-adaptive
      match: {{channels: [sms]}}
      adaptive:
        providers: [twilio, sinch, vonage]
        objective: conversions
        per: [country, channel]
        min_share: {min_share}
        window: {window}s
        settle_after: {settle}s
      fallbacks: [twilio]
"""


def number(country, index):
    """A valid mobile number of the country, one per user."""
    if country == "GB":
        return f"+4474{index // 1_000_000:02d}{index % 1_000_000:06d}"
    if country == "ID":
        return f"+62812{index % 10_000_000:07d}"
    return f"+49151{index % 100_000_000:08d}"


def call(base, method, path, body=None, key=KEY):
    return gw.call(base, method, path, body, key=key)


def simulate_user(base, index):
    country = COUNTRIES[index % 3]
    to = number(country, index)
    status, started = call(base, "POST", "/v1/verifications", {"to": to, "channel": "sms"})
    if status != 201:
        return {"index": index, "country": country, "provider": None,
                "error": started.get("error", {}).get("code", str(status))}
    _, outbox = call(base, "GET", "/sandbox/outbox?to=" + urllib.parse.quote(to), key=None)
    messages = outbox.get("messages", [])
    approved = False
    if messages:
        status, checked = call(base, "POST", f"/v1/verifications/{started['id']}/check",
                               {"code": messages[-1]["code"]})
        approved = status == 200 and checked.get("status") == "approved"
    else:
        call(base, "POST", f"/v1/verifications/{started['id']}/cancel", {})
    return {"index": index, "country": country, "provider": started.get("provider"), "approved": approved}


def set_rates(base, seed, degraded=False):
    for vendor in VENDORS:
        rates = dict(RATES[vendor])
        if degraded and vendor == DEGRADED[0]:
            rates[DEGRADED[1]] = DEGRADED[2]
        status, body = call(base, "PUT", f"/sandbox/faults/{vendor}",
                            {"delivery_rate_by_country": rates, "delivery_seed": seed}, key=None)
        if status != 200 or body.get("delivery_rate_by_country") != rates:
            raise SystemExit(f"cannot set {vendor}'s delivery rates: {status} {body}")


def best(country, degraded):
    rates = {v: RATES[v][country] for v in VENDORS}
    if degraded and country == DEGRADED[1]:
        rates[DEGRADED[0]] = DEGRADED[2]
    return max(rates, key=rates.get), max(rates.values())


def start_gateway(args, directory):
    config = os.path.join(directory, "gateway.yaml")
    with open(config, "w") as f:
        f.write(CONFIG.format(min_share=MIN_SHARE, window=args.window, settle=args.settle))
    if not args.no_build:
        built = subprocess.run(["swift", "build", "--product", "gateway"], cwd=ROOT, capture_output=True, text=True)
        if built.returncode != 0:
            raise SystemExit("swift build failed:\n" + built.stdout + built.stderr)
    binary = os.path.join(ROOT, ".build", "debug", "gateway")
    port = free_port()
    env = dict(os.environ, GATEWAY_SANDBOX_API_KEY=KEY)
    log = open(os.path.join(directory, "gateway.log"), "w")
    process = subprocess.Popen(
        [binary, "--port", str(port), "--data-dir", os.path.join(directory, "data"), "--config", config,
         "--log-level", "warning"], cwd=ROOT, env=env, stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if call(base, "GET", "/healthz", key=None)[0] == 200:
                return process, base
        except OSError:
            pass
        if process.poll() is not None:
            raise SystemExit(f"gateway exited; see {directory}/gateway.log")
        time.sleep(0.1)
    raise SystemExit("gateway did not start")


def run_phase(base, indices, rate, concurrency):
    """Users `indices`, user i starting no earlier than its slot at `rate` per second."""
    began = time.monotonic()
    lock = threading.Lock()

    def paced(position_index):
        position, index = position_index
        delay = began + position / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        with lock:
            pass
        return simulate_user(base, index)

    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        return list(pool.map(paced, enumerate(indices)))


def binomial_p_above(successes, trials, p0):
    """One-sided p-value (normal approximation) that the rate behind successes/trials exceeds p0."""
    z = (successes / trials - p0) / math.sqrt(p0 * (1 - p0) / trials)
    return 0.5 * math.erfc(z / math.sqrt(2)), z


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=3000)
    parser.add_argument("--rate", type=float, default=20, help="users arriving per second")
    parser.add_argument("--window", type=int, default=15, help="the route's evidence half-life, seconds")
    parser.add_argument("--settle", type=int, default=3,
                        help="the route's settle_after: seconds after which an unapproved start counts as failed")
    parser.add_argument("--oracle-target", type=float, default=0.95,
                        help="the share of the oracle's conversions the run must reach (the issue's: 0.95)")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--seed", type=int, default=35,
                        help="the emulators' delivery seed (which messages arrive); the bandit's draws are seeded "
                             "by the gateway from the system, so every run differs in those too")
    parser.add_argument("--no-build", action="store_true", help="use the gateway already built")
    args = parser.parse_args()

    directory = tempfile.mkdtemp(prefix="gateway-adaptive-")
    process, base = start_gateway(args, directory)
    try:
        set_rates(base, args.seed)
        half = args.users // 2
        began = time.monotonic()
        users = run_phase(base, range(half), args.rate, args.concurrency)
        set_rates(base, args.seed, degraded=True)
        users += run_phase(base, range(half, args.users), args.rate, args.concurrency)
        elapsed = time.monotonic() - began
        errors = [u["error"] for u in users if u["provider"] is None]
        if errors:
            raise SystemExit(f"{len(errors)} starts failed: {sorted(set(errors))}")
        print(f"{args.users} simulated users in {elapsed:.1f} s ({args.users / elapsed:.1f} per second, asked for "
              f"{args.rate}); window {args.window} s, min_share {MIN_SHARE}, delivery seed {args.seed}")
        failures = []

        # 1. After the first 1,000 users, the best vendor of each country has >= 80% of its starts.
        for country in COUNTRIES:
            wanted, _ = best(country, False)
            end = half if country == DEGRADED[1] else args.users
            window = [u for u in users[1000:end] if u["country"] == country]
            share = sum(u["provider"] == wanted for u in window) / len(window)
            print(f"  {country}: {wanted} has {share:.1%} of starts {1000}..{end} ({len(window)} users)")
            if share < 0.80:
                failures.append(f"{country}: the best vendor {wanted} has {share:.1%} < 80%")

        # 2. After the degradation, the new best in ID holds >= 80% of a rolling 50 within 500 ID users.
        new_best, _ = best(DEGRADED[1], True)
        after = [u for u in users[half:] if u["country"] == DEGRADED[1]]
        moved = None
        for end in range(50, min(len(after), 500) + 1):
            if sum(u["provider"] == new_best for u in after[end - 50:end]) >= 40:
                moved = end
                break
        print(f"  after {DEGRADED[0]} degraded in {DEGRADED[1]}: {new_best} holds 80% of the last 50 "
              f"{DEGRADED[1]} starts after {moved} {DEGRADED[1]} users" if moved else
              f"  after the degradation {new_best} never held 80% of 50 {DEGRADED[1]} starts within 500")
        if moved is None:
            failures.append(f"the share did not move to {new_best} within 500 {DEGRADED[1]} users")
        tail = after[moved:] if moved else []
        if tail:
            print(f"  from there to the end {new_best} has "
                  f"{sum(u['provider'] == new_best for u in tail) / len(tail):.1%} of {len(tail)} ID starts")

        # 3. Conversions against the oracle and against an equal split.
        conversions = sum(u["approved"] for u in users)
        oracle = sum(best(u["country"], u["index"] >= half)[1] for u in users)
        split_rate = sum(
            sum((DEGRADED[2] if (u["index"] >= half and (v, u["country"]) == DEGRADED[:2]) else RATES[v][u["country"]])
                for v in VENDORS) / 3 for u in users) / len(users)
        p_value, z = binomial_p_above(conversions, len(users), split_rate)
        ratio = conversions / oracle
        print(f"  conversions {conversions} of {len(users)} ({conversions / len(users):.1%}); oracle expects "
              f"{oracle:.0f} ({oracle / len(users):.1%}): {ratio:.1%} of the oracle")
        print(f"  an equal split expects {split_rate:.1%}: the run is {conversions / len(users) - split_rate:+.1%} "
              f"points above it, z = {z:.2f}, one-sided p = {p_value:.3g}")
        if ratio < args.oracle_target:
            failures.append(f"conversions are {ratio:.1%} of the oracle's, below {args.oracle_target:.0%}")
        if not (p_value < 0.001):
            failures.append(f"the run does not beat an equal split (p = {p_value:.3g})")

        # 4. Every healthy provider keeps min_share of its country's starts.
        for country in COUNTRIES:
            mine = [u for u in users if u["country"] == country]
            for vendor in VENDORS:
                count = sum(u["provider"] == vendor for u in mine)
                floor = MIN_SHARE * len(mine) - 1.5 * math.sqrt(len(mine) * MIN_SHARE * (1 - MIN_SHARE))
                print(f"  {country} {vendor:7s} {count:4d} starts ({count / len(mine):.1%})")
                if count < floor:
                    failures.append(f"{country}: {vendor} had {count} starts, below min_share ({floor:.0f})")

        status, report = call(base, "GET", "/v1/routing/adaptive")
        if status != 200:
            failures.append(f"GET /v1/routing/adaptive answered {status}: {report}")
        else:
            for route in report["routes"]:
                for context in route["contexts"]:
                    print(f"  GET /v1/routing/adaptive, {context['context']}: " + ", ".join(
                        f"{p['provider']} {p['starts']} starts, mean {p['posterior_mean']:.2f} "
                        f"[{p['interval_95'][0]:.2f}, {p['interval_95'][1]:.2f}], share {p['share']:.0%}"
                        for p in context["providers"]))
        if failures:
            raise SystemExit("adaptive routing missed its figures (the gateway's log is in %s):\n  " % directory
                             + "\n  ".join(failures))
        print("adaptive simulation: all four figures hold")
    finally:
        process.terminate()
        process.wait(timeout=10)
    shutil.rmtree(directory, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
