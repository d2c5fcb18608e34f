#!/usr/bin/env python3
"""Simulates users of a 50/50 Twilio-vs-Firebase experiment against the sandbox and checks the report.

    scripts/experiment_simulation.py                       # builds and starts its own sandbox gateway
    scripts/experiment_simulation.py --users 4000 --twilio-delivery 0.95 --firebase-delivery 0.88
    scripts/experiment_simulation.py --aa                  # same delivery rate for both: no real difference

It writes a configuration with one route (every SMS goes to the experiment `sandbox-ab`, arms `twilio`
as control and `firebase`, weights 50/50), starts `gateway` with it on a free loopback port, and sets
each emulator's delivery rate (the share of accepted messages that actually reach the phone) through
`PUT /sandbox/faults/{plugin}`. Then each simulated user starts a verification; if the SMS arrived (it
is in the sandbox outbox), the user types the code with probability `--verify-rate`, sometimes a wrong
code first. Finally it reads `GET /v1/admin/experiments/sandbox-ab` and checks the report against its
own tally: starts, approvals and conversion per arm must be equal, and the report's two-proportion
p-value must match the one computed here from the tally (to 1e-6). The report is printed, with
`gateway experiments report`. Exit status 0 when everything agrees; stdlib only.
"""
import argparse, concurrent.futures, json, math, os, random, shutil, subprocess, sys, tempfile, time
import urllib.error, urllib.parse, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_gateway as gw
from sandbox_gateway import free_port

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEY = "sk_sandbox_simulation_key_0001"
EXPERIMENT = "sandbox-ab"
PROOF = {"type": "recaptcha", "token": "simulated-app"}

CONFIG = """\
sandbox: true
routing:
  default: [twilio, firebase]
  routes:
    - name: all-sms
      match: {{channels: [sms]}}
      experiment: {experiment}
experiments:
  - name: {experiment}
    salt: "{salt}"
    arms:
      - {{name: twilio, provider: twilio, weight: 50, control: true}}
      - {{name: firebase, provider: firebase, weight: 50}}
prices:
  twilio: {{default: 0.05, GB: 0.045}}
  firebase: {{default: 0.01}}
"""


def call(base, method, path, body=None, key=KEY):
    return gw.call(base, method, path, body, key=key)


def two_proportion_p(x1, n1, x2, n2):
    """Two-sided p-value of the pooled two-proportion z-test."""
    if n1 == 0 or n2 == 0:
        return None
    pooled = (x1 + x2) / (n1 + n2)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    if se == 0:
        return 1.0
    z = (x2 / n2 - x1 / n1) / se
    return math.erfc(abs(z) / math.sqrt(2))


def simulate_user(base, index, args, rng_seed):
    rng = random.Random(rng_seed * 1_000_003 + index)
    # Valid UK mobiles, one per user: +44 7400 000000 upwards (libphonenumber: GB, mobile).
    to = f"+4474{index // 1_000_000:02d}{index % 1_000_000:06d}"
    status, started = call(base, "POST", "/v1/verifications", {"to": to, "channel": "sms", "app_verification": PROOF})
    if status != 201:
        return {"to": to, "arm": None, "error": started.get("error", {}).get("code", str(status))}
    arm = started.get("experiment_arm")
    _, outbox = call(base, "GET", "/sandbox/outbox?to=" + urllib.parse.quote(to), key=None)
    messages = outbox.get("messages", [])
    approved = False
    if messages and rng.random() < args.verify_rate:
        code = messages[-1]["code"]
        if rng.random() < args.wrong_rate:
            wrong = "000000" if code != "000000" else "111111"
            call(base, "POST", f"/v1/verifications/{started['id']}/check", {"code": wrong})
        status, checked = call(base, "POST", f"/v1/verifications/{started['id']}/check", {"code": code})
        approved = status == 200 and checked.get("status") == "approved"
    return {"to": to, "arm": arm, "provider": started.get("provider"), "delivered": bool(messages), "approved": approved}


def start_gateway(args, directory):
    config = os.path.join(directory, "gateway.yaml")
    with open(config, "w") as f:
        f.write(CONFIG.format(experiment=EXPERIMENT, salt=args.salt))
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
    for _ in range(200):
        try:
            if call(base, "GET", "/healthz", key=None)[0] == 200:
                return process, base, binary, config
        except OSError:
            pass
        if process.poll() is not None:
            raise SystemExit(f"gateway exited; see {directory}/gateway.log")
        time.sleep(0.1)
    raise SystemExit("gateway did not start")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=3000)
    parser.add_argument("--twilio-delivery", type=float, default=0.95)
    parser.add_argument("--firebase-delivery", type=float, default=0.87)
    parser.add_argument("--aa", action="store_true", help="both vendors deliver at --twilio-delivery")
    parser.add_argument("--verify-rate", type=float, default=0.9, help="users who type the code they received")
    parser.add_argument("--wrong-rate", type=float, default=0.1, help="of those, users who mistype once first")
    parser.add_argument("--seed", type=int, default=20261123)
    parser.add_argument("--salt", default="2026-11")
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    if args.aa:
        args.firebase_delivery = args.twilio_delivery

    directory = tempfile.mkdtemp(prefix="gateway-simulation-")
    process, base, binary, config = start_gateway(args, directory)
    try:
        for plugin, rate in (("twilio", args.twilio_delivery), ("firebase", args.firebase_delivery)):
            status, body = call(base, "PUT", f"/sandbox/faults/{plugin}",
                                {"delivery_rate": rate, "delivery_seed": args.seed}, key=None)
            if status != 200:
                raise SystemExit(f"cannot set {plugin}'s delivery rate: {status} {body}")

        began = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(args.concurrency) as pool:
            users = list(pool.map(lambda i: simulate_user(base, i, args, args.seed), range(args.users)))
        elapsed = time.monotonic() - began

        tally = {}
        for user in users:
            if user["arm"] is None:
                tally.setdefault("errors", []).append(user["error"])
                continue
            arm = tally.setdefault(user["arm"], {"starts": 0, "approvals": 0, "delivered": 0})
            arm["starts"] += 1
            arm["approvals"] += user["approved"]
            arm["delivered"] += user["delivered"]
        print(f"{args.users} simulated users in {elapsed:.1f} s; delivery twilio {args.twilio_delivery}, "
              f"firebase {args.firebase_delivery}; verify rate {args.verify_rate}")
        for name in ("twilio", "firebase"):
            arm = tally.get(name, {"starts": 0, "approvals": 0, "delivered": 0})
            print(f"  simulated {name:9s} starts {arm['starts']:5d} delivered {arm['delivered']:5d} "
                  f"approved {arm['approvals']:5d}")
        if tally.get("errors"):
            raise SystemExit(f"{len(tally['errors'])} starts failed: {sorted(set(tally['errors']))}")

        status, report = call(base, "GET", f"/v1/admin/experiments/{EXPERIMENT}")
        if status != 200:
            raise SystemExit(f"report: {status} {report}")
        print(json.dumps(report, indent=2))
        print(subprocess.run([binary, "experiments", "report", EXPERIMENT, "--config", config,
                              "--data-dir", os.path.join(directory, "data")],
                             env=dict(os.environ, GATEWAY_SANDBOX_API_KEY=KEY),
                             capture_output=True, text=True).stdout)

        arms = {a["name"]: a for a in report["arms"]}
        failures = []
        for name in ("twilio", "firebase"):
            want, got = tally[name], arms.get(name, {})
            if got.get("starts") != want["starts"] or got.get("approvals") != want["approvals"]:
                failures.append(f"{name}: report {got.get('starts')}/{got.get('approvals')}, "
                                f"simulated {want['starts']}/{want['approvals']}")
        expected_p = two_proportion_p(tally["twilio"]["approvals"], tally["twilio"]["starts"],
                                      tally["firebase"]["approvals"], tally["firebase"]["starts"])
        reported_p = arms["firebase"].get("p_value")
        if reported_p is None or abs(reported_p - expected_p) > 1e-6:
            failures.append(f"p-value: report {reported_p}, expected {expected_p}")
        print(f"two-proportion test, firebase vs control: p = {reported_p} (recomputed here: {expected_p:.6g})")
        significant = expected_p < 0.05
        truly_different = args.twilio_delivery != args.firebase_delivery
        print("the report finds a difference at the 5% level" if significant
              else "the report finds no difference at the 5% level",
              "(the vendors were set to differ)" if truly_different else "(the vendors were set the same)")
        if failures:
            raise SystemExit("report disagrees with the simulation (the gateway's log is in %s):\n  " % directory
                             + "\n  ".join(failures))
    finally:
        process.terminate()
        process.wait(timeout=10)
    shutil.rmtree(directory, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
