#!/usr/bin/env python3
"""A simulated phone running twilio-verify-ios, against a sandbox gateway (Twilio Verify Push).

It creates a P-256 key, enrols a push factor with the access token the backend fetched from
`POST /v1/factors/access-tokens`, verifies it by signing the factor SID, reads challenges from the
sandbox outbox (the push the app would receive), and approves or denies one with the JWT the SDK
sends: the challenge's signature fields plus `status`, ES256 (raw r||s, base64url), signed by the
factor's key. Every device call is authenticated as the SDK does: Basic `token:<JWT>` with the
factor's `credential_sid` as `kid` (the vendor notes (docs/vendors/twilio.md) §3.1-3.3).

  python3 scripts/push_device.py --base http://127.0.0.1:8080 --key sk_... check
      enrol -> challenge -> approve -> the backend sees approved and the token; the same with deny, and
      with expiry (a provider whose push_challenge_seconds is short). Exits non-zero on any mismatch.
  python3 scripts/push_device.py --base ... --key ... enrol --identity user-0001-abcd --state device.json
  python3 scripts/push_device.py --base ... --key ... answer --state device.json --approve|--deny

Needs `cryptography` (pip install cryptography).
"""
import argparse, base64, json, os, sys, time, urllib.error, urllib.parse, urllib.request, uuid

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_gateway  # noqa: E402

SIGNATURE_FIELDS_HEADER = "Twilio-Verify-Signature-Fields"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def http(method, url, form=None, auth=None):
    """A form-encoded call to Twilio's wire; returns (status, JSON, headers)."""
    data = urllib.parse.urlencode(form or []).encode() if method == "POST" else None
    request = urllib.request.Request(url, data=data, method=method)
    if auth:
        request.add_header("Authorization", "Basic " + base64.b64encode(auth.encode()).decode())
    if data is not None:
        request.add_header("Content-Type", "application/x-www-form-urlencoded")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            raw = response.read()
            return response.status, json.loads(raw) if raw else {}, dict(response.headers)
    except urllib.error.HTTPError as error:
        raw = error.read()
        return error.code, json.loads(raw) if raw else {}, dict(error.headers)


class Device:
    """One phone: its key, and the factor it enrolled."""

    def __init__(self, identity, key=None, factor=None):
        self.identity = identity
        self.key = key or ec.generate_private_key(ec.SECP256R1())
        self.factor = factor or {}

    # -- keys and JWTs, as the SDK makes them --

    def public_key(self):
        der = self.key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        return base64.b64encode(der).decode()

    def sign_jwt(self, claims, header_extra=None, key=None):
        header = {"typ": "JWT", "alg": "ES256", **(header_extra or {})}
        signing_input = b64url(json.dumps(header, separators=(",", ":")).encode()) + "." + \
            b64url(json.dumps(claims, separators=(",", ":")).encode())
        der = (key or self.key).sign(signing_input.encode(), ec.ECDSA(hashes.SHA256()))
        r, s = decode_dss_signature(der)
        return signing_input + "." + b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))

    def auth(self):
        """Basic `token:<JWT>`: kid = the factor's credential SID, sub = the account, 10 minutes."""
        now = int(time.time())
        jwt = self.sign_jwt({"sub": self.factor["account_sid"], "nbf": now, "exp": now + 600},
                            {"cty": "twilio-pba;v=1", "kid": self.factor["credential_sid"]})
        return "token:" + jwt

    def entity_url(self):
        return self.factor["base_url"] + "Services/" + self.factor["service_sid"] + "/Entities/" + self.identity

    # -- enrolment --

    def enrol(self, base, api_key, provider="twilio"):
        status, token, _ = _api(base, "POST", "/v1/factors/access-tokens",
                                {"identity": self.identity, "provider": provider, "friendly_name": "Simulated phone"}, api_key)
        expect(status == 201, f"access token: {status} {token}")
        details = token["details"]
        self.factor = {"base_url": details["base_url"], "service_sid": details["service_sid"]}
        status, created, _ = http("POST", self.entity_url() + "/Factors", [
            ("FriendlyName", "Simulated phone"), ("FactorType", "push"), ("Binding.Alg", "ES256"),
            ("Binding.PublicKey", self.public_key()), ("Config.AppId", "com.example.push-device"),
            ("Config.NotificationPlatform", "apn"), ("Config.NotificationToken", uuid.uuid4().hex * 2),
            ("Config.SdkVersion", "3.0.2")], auth="token:" + token["token"])
        expect(status == 201 and created.get("status") == "unverified", f"create factor: {status} {created}")
        self.factor.update(sid=created["sid"], credential_sid=created["config"]["credential_sid"],
                           account_sid=created["account_sid"])
        proof = base64.b64encode(self.key.sign(created["sid"].encode(), ec.ECDSA(hashes.SHA256()))).decode()
        status, verified, _ = http("POST", self.entity_url() + "/Factors/" + created["sid"],
                                   [("AuthPayload", proof)], auth=self.auth())
        expect(status == 200 and verified.get("status") == "verified", f"verify factor: {status} {verified}")
        return self.factor["sid"]

    # -- challenges --

    def pushes(self, base):
        _, outbox = sandbox_gateway.call(base, "GET", "/sandbox/outbox?to=" + urllib.parse.quote(self.identity), key=None)
        return [json.loads(m["text"]) for m in outbox.get("messages", []) if m["kind"] == "push"]

    def answer(self, challenge_sid, status, signer=None):
        """Fetches the challenge and answers it as PushChallengeProcessor does."""
        url = self.entity_url() + "/Challenges/" + challenge_sid
        code, challenge, headers = http("GET", url, auth=self.auth())
        expect(code == 200, f"fetch challenge: {code} {challenge}")
        fields = next((v for k, v in headers.items() if k.lower() == SIGNATURE_FIELDS_HEADER.lower()), "")
        claims = {name: challenge.get(name) for name in fields.split(",") if name}
        claims["status"] = status
        return http("POST", url, [("AuthPayload", self.sign_jwt(claims, key=signer))], auth=self.auth())

    # -- state file --

    def save(self, path):
        pem = self.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                     serialization.NoEncryption()).decode()
        with open(path, "w") as f:
            json.dump({"identity": self.identity, "key": pem, "factor": self.factor}, f)

    @classmethod
    def load(cls, path):
        with open(path) as f:
            saved = json.load(f)
        return cls(saved["identity"], serialization.load_pem_private_key(saved["key"].encode(), None), saved["factor"])


def _api(base, method, path, body, key):
    status, parsed = sandbox_gateway.call(base, method, path, body, key=key)
    return status, parsed, None


def expect(condition, message):
    if not condition:
        raise SystemExit("FAILED: " + message)


def start_push(base, key, identity, provider):
    status, body = sandbox_gateway.call(base, "POST", "/v1/verifications", {
        "to": identity, "channel": "push", "provider": provider,
        "channel_options": {"prompt": {"message": "Sign in to Example?",
                                       "details": [{"label": "IP", "value": "203.0.113.9"}],
                                       "hidden_details": {"session": "s-42"}}}}, key=key)
    expect(status == 201, f"start: {status} {body}")
    expect((body.get("next_action") or {}).get("type") == "await_approval", f"next_action: {body}")
    return body


def check(base, key, provider, expiry_provider):
    """enrol -> challenge -> approve / deny / expire, and what the backend sees each time."""
    device = Device("push-check-" + uuid.uuid4().hex[:12])
    device.enrol(base, key, provider)
    status, listed = sandbox_gateway.call(base, "GET", f"/v1/factors?identity={device.identity}&provider={provider}", key=key)
    expect(status == 200 and [f["status"] for f in listed["factors"]] == ["verified"], f"factors: {listed}")

    # approve
    started = start_push(base, key, device.identity, provider)
    status, body = sandbox_gateway.call(base, "POST", f"/v1/verifications/{started['id']}/check", {"code": "123456"}, key=key)
    expect(status == 409 and body["error"]["code"] == "invalid_state", f"a code must not complete a push: {status} {body}")
    status, polled = sandbox_gateway.call(base, "GET", f"/v1/verifications/{started['id']}?refresh=true", key=key)
    expect(polled["status"] == "pending" and polled["attempts_remaining"] == started["attempts_remaining"],
           f"polling spends nothing: {polled}")
    push = device.pushes(base)[-1]
    expect(push["type"] == "verify_push_challenge", f"push payload: {push}")
    other = ec.generate_private_key(ec.SECP256R1())
    code, refused, _ = device.answer(push["challenge_sid"], "approved", signer=other)
    expect(code == 403 and refused.get("code") == 60324, f"another key must be refused: {code} {refused}")
    code, answered, _ = device.answer(push["challenge_sid"], "approved")
    expect(code == 200 and answered["status"] == "approved", f"approve: {code} {answered}")
    status, seen = sandbox_gateway.call(base, "GET", f"/v1/verifications/{started['id']}", key=key)
    expect(seen["status"] == "approved" and seen.get("token"), f"backend after approval: {seen}")
    print(f"approve: {started['id']} approved by webhook, token issued")

    # deny
    started = start_push(base, key, device.identity, provider)
    push = device.pushes(base)[-1]
    code, answered, _ = device.answer(push["challenge_sid"], "denied")
    expect(code == 200 and answered["status"] == "denied", f"deny: {code} {answered}")
    status, seen = sandbox_gateway.call(base, "GET", f"/v1/verifications/{started['id']}", key=key)
    expect(seen["status"] == "denied" and "token" not in seen, f"backend after denial: {seen}")
    print(f"deny: {started['id']} denied")

    # expiry (a provider whose challenges live a few seconds)
    if expiry_provider:
        short = Device("push-expiry-" + uuid.uuid4().hex[:12])
        short.enrol(base, key, expiry_provider)
        started = start_push(base, key, short.identity, expiry_provider)
        push = short.pushes(base)[-1]
        deadline = time.time() + 30
        while time.time() < deadline:
            status, seen = sandbox_gateway.call(base, "GET", f"/v1/verifications/{started['id']}?refresh=true", key=key)
            if seen.get("status") != "pending":
                break
            time.sleep(0.5)
        expect(seen.get("status") == "expired", f"backend after expiry: {seen}")
        code, late, _ = short.answer(push["challenge_sid"], "approved")
        expect(code == 403 and late.get("code") == 60323, f"a late approval: {code} {late}")
        print(f"expire: {started['id']} expired; a late approval is 60323")
    print("push device check: passed")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="the sandbox gateway, e.g. http://127.0.0.1:8080")
    parser.add_argument("--key", default=sandbox_gateway.KEY, help="an API key of the gateway")
    parser.add_argument("--provider", default="twilio")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("check", help="the end-to-end check CI runs")
    run.add_argument("--expiry-provider", help="a Twilio provider with a short push_challenge_seconds")
    enrol = commands.add_parser("enrol", help="create a key and enrol a verified push factor")
    enrol.add_argument("--identity", required=True)
    enrol.add_argument("--state", required=True, help="where to keep the device's key and factor")
    answer = commands.add_parser("answer", help="approve or deny the newest push in the outbox")
    answer.add_argument("--state", required=True)
    choice = answer.add_mutually_exclusive_group(required=True)
    choice.add_argument("--approve", action="store_true")
    choice.add_argument("--deny", action="store_true")
    args = parser.parse_args()
    if args.command == "check":
        check(args.base, args.key, args.provider, args.expiry_provider)
    elif args.command == "enrol":
        device = Device(args.identity)
        print("factor", device.enrol(args.base, args.key, args.provider))
        device.save(args.state)
    else:
        device = Device.load(args.state)
        pushes = device.pushes(args.base)
        expect(pushes, "no push in the outbox for " + device.identity)
        code, body, _ = device.answer(pushes[-1]["challenge_sid"], "approved" if args.approve else "denied")
        print(code, json.dumps(body, indent=2))


if __name__ == "__main__":
    main()
