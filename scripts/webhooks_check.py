#!/usr/bin/env python3
"""Standard Webhooks and CloudEvents, checked with the libraries receivers use.

    .venv/bin/pip install standardwebhooks cloudevents cryptography
    .venv/bin/python scripts/webhooks_check.py                   # builds and starts its own sandbox gateway
    .venv/bin/python scripts/webhooks_check.py --gateway .build/debug/gateway

It starts a sandbox gateway with three webhook endpoints on one local receiver:
  - `rotating`: Standard Webhooks signing with two secrets (a rotation in progress) and an Ed25519 key;
  - `cloud`: one secret, `format: cloudevents`;
  - `gone`: a receiver that answers 410 Gone.
and plays four verifications (three approved, one canceled). Then:
  1. the official `standardwebhooks` library verifies every delivery to `rotating` and `cloud` under each active
     secret; the `v1a` signature verifies under the public key the admin API publishes (`cryptography`'s
     Ed25519, as the library checks HMAC only); a body changed by one byte, and the same delivery signed with a
     timestamp ten minutes old, are refused by the library;
  2. `webhook-id` is the body's event id, the same on every attempt;
  3. `cloudevents` parses every delivery to `cloud` (specversion 1.0, type `<prefix>.verification.*`, source);
  4. `gone` answered 410 to what was in flight, is listed `disabled` by `GET /v1/admin/webhooks/endpoints`, and
     gets nothing of a later event; enabled again through the admin API, it receives the next event.
No phone number is in any body. Exit status 0 when everything holds.
"""
import argparse, base64, json, os, sys, tempfile, threading
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_gateway as gw  # noqa: E402

try:  # cloudevents 1.x; 2.x keeps the same function under cloudevents.v1
    from cloudevents.http import from_http  # noqa: E402
except ImportError:
    from cloudevents.v1.http import from_http  # noqa: E402
from cryptography.exceptions import InvalidSignature  # noqa: E402
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey  # noqa: E402
from standardwebhooks import Webhook  # noqa: E402
from standardwebhooks.webhooks import WebhookVerificationError  # noqa: E402

KEY = "sk_webhooks_check_0001"
SECRETS = {"NEW_SECRET": "whsec_" + base64.b64encode(os.urandom(32)).decode(),
           "OLD_SECRET": "whsec_" + base64.b64encode(os.urandom(32)).decode(),
           "CLOUD_SECRET": "whsec_" + base64.b64encode(os.urandom(24)).decode(),
           "ED25519_KEY": "whsk_" + base64.b64encode(os.urandom(32)).decode()}

CONFIG = """\
sandbox: true
public_base_url: "https://gateway.example.com"
webhooks:
  endpoints:
    - {{name: rotating, url: "{base}/rotating", secret_env: [NEW_SECRET, OLD_SECRET], signing_key_env: ED25519_KEY}}
    - {{name: cloud, url: "{base}/cloud", secret_env: CLOUD_SECRET, format: cloudevents}}
    - {{name: gone, url: "{base}/gone", secret_env: CLOUD_SECRET}}
  initial_backoff_seconds: 1
  poll_interval_ms: 100
"""

check = gw.Checks()


class Receiver(BaseHTTPRequestHandler):
    received = []  # (path, headers, body)
    lock = threading.Lock()
    refuse_first = True  # `rotating`'s first delivery is answered 500, so one event arrives twice

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with Receiver.lock:
            Receiver.received.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            refuse = self.path == "/rotating" and Receiver.refuse_first
            if refuse:
                Receiver.refuse_first = False
        self.send_response(410 if self.path == "/gone" else 500 if refuse else 204)
        self.end_headers()

    def log_message(self, *args):
        pass


def call(base, method, path, body=None):
    return gw.call(base, method, path, body, key=KEY)


def deliveries(path):
    with Receiver.lock:
        return [(h, b) for p, h, b in Receiver.received if p == path]


def play(base, numbers, cancel=()):
    for to in numbers:
        status, started = call(base, "POST", "/v1/verifications", {"to": to})
        if status != 201:
            raise SystemExit(f"start to {to}: {status} {started}")
        if to in cancel:
            call(base, "POST", f"/v1/verifications/{started['id']}/cancel", {})
        else:
            code = gw.code_for(base, to)
            call(base, "POST", f"/v1/verifications/{started['id']}/check", {"code": code})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gateway", help="a built gateway binary (default: swift build)")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    receiver = f"http://127.0.0.1:{server.server_address[1]}"
    work = tempfile.mkdtemp(prefix="webhooks-check-")
    config = os.path.join(work, "gateway.yaml")
    with open(config, "w") as f:
        f.write(CONFIG.format(base=receiver))
    os.environ.update(SECRETS)
    gw.KEY = KEY  # what gw.start gives the sandbox as its API key
    binary = args.gateway or gw.build()
    process, base = gw.start(binary, os.path.join(work, "data"), extra=["--config", config],
                             log_path=os.path.join(work, "gateway.log"))
    try:
        numbers = [f"+1415555{n:04d}" for n in range(4)]
        play(base, numbers, cancel={numbers[3]})
        # rotating: 4 events, one of them twice (the refused first attempt); cloud: 4; gone: 1, then disabled.
        check(gw.wait_for(lambda: len(deliveries("/rotating")) >= 5 and len(deliveries("/cloud")) >= 4, 120),
              f"deliveries arrived: rotating {len(deliveries('/rotating'))}, cloud {len(deliveries('/cloud'))}")
        _, listed = call(base, "GET", "/v1/admin/webhooks/endpoints")
        endpoints = {e["name"]: e for e in listed.get("endpoints", [])}
        public_key = endpoints.get("rotating", {}).get("public_key") or ""
        check(public_key.startswith("whpk_"), f"the admin API publishes rotating's Ed25519 key: {public_key[:16]}…")
        ed25519 = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key[len("whpk_"):]))

        for path, secrets in (("/rotating", ["NEW_SECRET", "OLD_SECRET"]), ("/cloud", ["CLOUD_SECRET"])):
            got = deliveries(path)
            for name in secrets:
                verifier = Webhook(SECRETS[name])
                verified = 0
                for headers, body in got:
                    try:
                        verifier.verify(body, headers)
                        verified += 1
                    except WebhookVerificationError as error:
                        print(f"      {path} {headers.get('webhook-id')}: {error}")
                check(verified == len(got) > 0,
                      f"standardwebhooks verifies {verified} of {len(got)} deliveries to {path} under {name}")
            ids = [(h.get("webhook-id"), json.loads(b)["id"]) for h, b in got]
            check(all(a == b for a, b in ids), f"{path}: webhook-id is the body's event id on every delivery")
            check(not any(b"4155550" in b for _, b in got), f"{path}: no phone number in any body")

        headers, body = deliveries("/rotating")[0]
        ids = [h.get("webhook-id") for h, _ in deliveries("/rotating")]
        check(len(ids) - len(set(ids)) == 1, f"the refused delivery came again with the same webhook-id ({ids})")
        valid = 0
        for h, b in deliveries("/rotating"):
            content = f"{h['webhook-id']}.{h['webhook-timestamp']}.".encode() + b
            for entry in h["webhook-signature"].split(" "):
                if entry.startswith("v1a,"):
                    try:
                        ed25519.verify(base64.b64decode(entry[4:]), content)
                        valid += 1
                    except InvalidSignature:
                        pass
        check(valid == len(deliveries("/rotating")), f"the v1a (Ed25519) signature verifies on {valid} deliveries")
        verifier = Webhook(SECRETS["NEW_SECRET"])
        tampered = body.replace(b'"status":"', b'"status":"X', 1)
        try:
            verifier.verify(tampered, headers)
            check(False, "a tampered body is refused")
        except WebhookVerificationError:
            check(True, "standardwebhooks refuses a body changed by one byte")
        old = datetime.now(timezone.utc) - timedelta(minutes=10)
        stale = dict(headers, **{"webhook-timestamp": str(int(old.timestamp())),
                                 "webhook-signature": verifier.sign(headers["webhook-id"], old, body)})
        try:
            verifier.verify(body, stale)
            check(False, "an old timestamp is refused")
        except WebhookVerificationError as error:
            check(True, f"standardwebhooks refuses a delivery signed ten minutes ago ({error})")

        types = set()
        parsed = 0
        for h, b in deliveries("/cloud"):
            event = from_http(h, b)
            parsed += event["specversion"] == "1.0" and event["source"] == "https://gateway.example.com"
            types.add(event["type"])
        check(parsed == len(deliveries("/cloud")),
              f"cloudevents parses {parsed} of {len(deliveries('/cloud'))} deliveries to /cloud")
        check(types == {"com.example.gateway.verification.approved", "com.example.gateway.verification.canceled"},
              f"CloudEvents types from the public address: {sorted(types)}")

        # Deliveries already in flight when the first 410 comes back (one batch goes out at once) are answered 410
        # too; after that, nothing more is sent until the endpoint is enabled.
        gone = endpoints.get("gone", {})
        before = len(deliveries("/gone"))
        check(before >= 1 and gone.get("state") == "disabled",
              f"gone: {before} request(s) in flight, then {gone.get('state')} ({gone.get('disabled_reason')})")
        play(base, ["+14155550101"])
        gw.wait_for(lambda: len(deliveries("/rotating")) >= 6, 120)
        check(len(deliveries("/gone")) == before,
              f"disabled, gone gets nothing of the next event ({len(deliveries('/gone')) - before} new requests)")
        status, _ = call(base, "POST", "/v1/admin/webhooks/endpoints/gone/enable")
        play(base, ["+14155550100"])
        check(status == 200 and gw.wait_for(lambda: len(deliveries("/gone")) == before + 1, 120),
              f"enabled again ({status}), gone receives the next event ({len(deliveries('/gone')) - before} new)")
    finally:
        gw.stop(process)
        server.shutdown()
    return gw.finish("webhooks check", check.failures, work)


if __name__ == "__main__":
    sys.exit(main())
