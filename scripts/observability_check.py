#!/usr/bin/env python3
"""Issue 16's acceptance check, against real sandbox gateways on loopback.

1. A webhook receiver (a small HTTP server here) that answers 500 to its first three deliveries and 204
   after, and checks every signature (the few lines of docs/operations.md).
2. A sandbox gateway configured to send it every status webhook. The tour's steps (docs/tour.md) run through it:
   a wrong code then the right one, a cancel, a resend onto another channel. The gateway is stopped
   (SIGTERM) while deliveries are still failing and started again on the same data directory, and one
   more verification is approved after the restart.
3. The receiver must end with every expected event exactly once (by event id), each signature valid.
4. GET /metrics (open on loopback) is parsed with the Prometheus project's own text-format parser
   (prometheus_client) and must show the verifications, the vendor calls and their latencies with the
   right labels, and no phone number.

Needs `prometheus_client` (pip). Exits non-zero on any failure.
"""
import argparse, hashlib, hmac, http.server, json, os, shutil, signal, sys, tempfile, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_gateway as gw  # noqa: E402

from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

SECRET = "whsec_observability_check_0001"
TOLERANCE = 300


def verify(header, body, secret=SECRET, now=None):
    """The receiver's check: `t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`, recent enough."""
    parts = dict(p.split("=", 1) for p in header.split(",") if "=" in p)
    timestamp, signature = parts.get("t"), parts.get("v1")
    if not timestamp or not signature:
        return False
    expected = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    fresh = abs((now or time.time()) - int(timestamp)) <= TOLERANCE
    return fresh and hmac.compare_digest(expected, signature)


class Receiver:
    def __init__(self, failures):
        self.failures_left = failures
        self.attempts = 0
        self.accepted = {}  # event id -> payload
        self.repeats = 0
        self.bad_signatures = 0
        self.lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver.lock:
                    receiver.attempts += 1
                    if not verify(self.headers.get("X-Gateway-Signature", ""), body):
                        receiver.bad_signatures += 1
                        status = 400
                    elif receiver.failures_left > 0:
                        receiver.failures_left -= 1
                        status = 500
                    else:
                        event = json.loads(body)
                        if event["id"] in receiver.accepted:
                            receiver.repeats += 1  # at least once: a repeat is dropped by its id
                        receiver.accepted[event["id"]] = event
                        status = 204
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/verification"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def events(self):
        with self.lock:
            return {(e["type"], e["data"]["verification_id"]) for e in self.accepted.values()}


def start(binary, data_dir, config):
    return gw.start(binary, data_dir, extra=("--config", config), log_path=data_dir + ".log")


def stop(process):
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=30)


def must(condition, message):
    if not condition:
        raise SystemExit("FAILED: " + message)


def approve(base, to):
    status, started = gw.call(base, "POST", "/v1/verifications", {"to": to, "channel": "sms", "provider": "twilio"})
    must(status == 201, f"start {to}: {status} {started}")
    code = gw.code_for(base, to)
    wrong = "000000" if code != "000000" else "111111"
    status, body = gw.call(base, "POST", f"/v1/verifications/{started['id']}/check", {"code": wrong})
    must(status == 422 and body["error"]["code"] == "incorrect_code", f"wrong code: {status} {body}")
    status, body = gw.call(base, "POST", f"/v1/verifications/{started['id']}/check", {"code": code})
    must(status == 200 and body["status"] == "approved", f"right code: {status} {body}")
    return started["id"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--failures", type=int, default=3)
    args = parser.parse_args()
    binary = gw.build()
    receiver = Receiver(args.failures)
    work = tempfile.mkdtemp(prefix="gateway-observability-")
    data_dir = os.path.join(work, "data")
    config = os.path.join(work, "gateway.yaml")
    with open(config, "w") as f:
        f.write(
            "sandbox: true\n"
            "webhooks:\n"
            f"  endpoints: [{{name: app, url: '{receiver.url}', secret_env: APP_WEBHOOK_SECRET, signing: legacy}}]\n"
            "  initial_backoff_seconds: 1\n  max_backoff_seconds: 2\n  poll_interval_ms: 100\n")
    os.environ["APP_WEBHOOK_SECRET"] = SECRET

    process, base = start(binary, data_dir, config)
    expected = set()
    try:
        approved = approve(base, "+14155550100")
        expected.add(("verification.approved", approved))
        status, started = gw.call(base, "POST", "/v1/verifications", {"to": "+14155550101", "provider": "twilio"})
        must(status == 201, f"start: {status}")
        status, _ = gw.call(base, "POST", f"/v1/verifications/{started['id']}/cancel")
        must(status == 200, f"cancel: {status}")
        expected.add(("verification.canceled", started["id"]))
        status, moved = gw.call(
            base, "POST", "/v1/verifications",
            {"to": "+14155550102", "provider": "twilio", "fallback_channels": ["voice"]})
        must(status == 201, f"start with fallback: {status}")
        status, resent = gw.call(base, "POST", f"/v1/verifications/{moved['id']}/resend", {})
        must(status == 200 and resent["channel"] == "voice", f"resend: {status} {resent}")
        expected.add(("verification.channel_changed", moved["id"]))
        # Wait for the first failed attempt, then stop the gateway while the queue still has work.
        deadline = time.time() + 20
        while receiver.attempts < 1 and time.time() < deadline:
            time.sleep(0.05)
        must(receiver.attempts >= 1, "no webhook attempt within 20 s")
    finally:
        stop(process)
    attempts_before_restart = receiver.attempts
    print(f"gateway stopped after {attempts_before_restart} webhook attempt(s); {len(receiver.accepted)} accepted")

    process, base = start(binary, data_dir, config)
    try:
        after = approve(base, "+14155550103")
        expected.add(("verification.approved", after))
        deadline = time.time() + 60
        while receiver.events() != expected and time.time() < deadline:
            time.sleep(0.1)
        got = receiver.events()
        must(got == expected, f"webhooks: expected {sorted(expected)}, got {sorted(got)}")
        time.sleep(1.0)  # anything sent twice would arrive now
        must(receiver.repeats == 0, f"{receiver.repeats} event(s) delivered twice")
        must(receiver.bad_signatures == 0, f"{receiver.bad_signatures} bad signature(s)")
        must(len(receiver.accepted) == len(expected), "an event arrived more than once")
        must(not verify(
            "t=%d,v1=%s" % (time.time(), "0" * 64), b"{}"), "a forged signature must not verify")
        print(
            f"webhooks: {len(expected)} events, each received once after {args.failures} refused deliveries "
            f"and a restart, {receiver.attempts} attempts in all, every signature valid")

        status, parked = gw.call(base, "GET", "/v1/admin/webhooks/deliveries?state=delivered")
        must(status == 200 and len(parked["deliveries"]) == len(expected), f"admin list: {status} {parked}")

        text = gw.urllib.request.urlopen(base + "/metrics", timeout=10).read().decode()
        families = {f.name: f for f in text_string_to_metric_families(text)}

        def sample(family, name, **labels):
            for s in families[family].samples:
                if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                    return s.value
            return None

        # Only the second process's figures: one approval after the restart.
        labels = dict(provider="twilio", country="US", channel="sms")
        must(sample("gateway_verifications_started", "gateway_verifications_started_total", **labels) == 1,
             "started_total for twilio/US/sms")
        must(sample("gateway_verification_checks", "gateway_verification_checks_total", outcome="incorrect_code", **labels) == 1,
             "checks_total incorrect_code")
        must(sample("gateway_verifications_approved", "gateway_verifications_approved_total", **labels) == 1,
             "approved_total")
        count = sample("gateway_provider_call_duration_seconds", "gateway_provider_call_duration_seconds_count",
                       provider="twilio", operation="start", outcome="accepted")
        must(count == 1, f"vendor call latency count: {count}")
        total = sample("gateway_provider_call_duration_seconds", "gateway_provider_call_duration_seconds_sum",
                       provider="twilio", operation="start", outcome="accepted")
        must(total is not None and total > 0, "vendor call latency sum")
        must(sample("gateway_http_requests", "gateway_http_requests_total", method="POST",
                    route="/v1/verifications", status="201") == 1, "http requests by route")
        must("4155550103" not in text, "a phone number in the metrics")
        print(f"metrics: {len(families)} families parsed by prometheus_client; labels as documented")
    finally:
        stop(process)
    receiver.server.shutdown()
    shutil.rmtree(work, ignore_errors=True)
    print("observability check: passed")


if __name__ == "__main__":
    main()
