#!/usr/bin/env python3
"""Drives the running sandbox with the official `twilio` Python library (9.x).

    python3 -m venv .venv && .venv/bin/pip install 'twilio>=9,<10'
    swift run gateway &                       # in another terminal
    .venv/bin/python scripts/twilio_client_check.py

It creates a verification, checks a wrong code (pending), the right code (approved), then makes six
wrong checks on a new verification: the sixth must raise Twilio error 60202. Then Programmable Messaging, the
API the `twilio_messaging` plugin sends the gateway's own codes through: `client.messages.create` against its
emulator, from a number and through a Messaging Service, and a `To` that is not a number (21211). Exit
status 0 on success.
"""
import argparse, json, sys, urllib.request

from twilio.base.exceptions import TwilioRestException
from twilio.rest import Client

# The sandbox's fixed credentials (Sources/Plugins/Twilio, TwilioSandbox; also printed at startup).
ACCOUNT_SID = "AC5a4db0c5a4db0c5a4db0c5a4db0c0001"
AUTH_TOKEN = "5a4db0c0sandbox0auth0token000001"
SERVICE_SID = "VA5a4db0c5a4db0c5a4db0c5a4db0c0001"


def latest_code(base, to):
    with urllib.request.urlopen(f"{base}/sandbox/outbox") as response:
        messages = json.load(response)["messages"]
    codes = [m["code"] for m in messages if m["to"] == to and m["provider"] == "twilio"]
    if not codes:
        raise SystemExit(f"no sandbox message to {to}")
    return codes[-1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default="http://127.0.0.1:8080")
    args = parser.parse_args()

    client = Client(ACCOUNT_SID, AUTH_TOKEN)
    client.verify.base_url = f"{args.base}/sandbox/twilio"
    service = client.verify.v2.services(SERVICE_SID)

    to = "+15005550006"
    verification = service.verifications.create(to=to, channel="sms")
    assert verification.status == "pending", verification.status
    assert verification.sid.startswith("VE"), verification.sid
    code = latest_code(args.base, to)
    wrong = "000000" if code != "000000" else "111111"

    check = service.verification_checks.create(to=to, code=wrong)
    assert check.status == "pending" and check.valid is False, (check.status, check.valid)
    check = service.verification_checks.create(verification_sid=verification.sid, code=code)
    assert check.status == "approved" and check.valid is True, (check.status, check.valid)
    print(f"created {verification.sid}, wrong code -> pending, right code -> approved")

    to = "+15005550007"
    verification = service.verifications.create(to=to, channel="sms")
    wrong = "000000" if latest_code(args.base, to) != "000000" else "111111"
    for attempt in range(1, 6):
        check = service.verification_checks.create(verification_sid=verification.sid, code=wrong)
        assert check.status == "pending", (attempt, check.status)
    try:
        service.verification_checks.create(verification_sid=verification.sid, code=wrong)
    except TwilioRestException as error:
        assert error.code == 60202, error.code
        assert error.status == 429, error.status
        print("sixth wrong check -> TwilioRestException 60202 (429)")
    else:
        raise SystemExit("the sixth wrong check did not raise")

    intruder = Client(ACCOUNT_SID, "wrong-token")
    intruder.verify.base_url = f"{args.base}/sandbox/twilio"
    try:
        intruder.verify.v2.services(SERVICE_SID).verifications.create(to=to, channel="sms")
    except TwilioRestException as error:
        assert error.code == 20003 and error.status == 401, (error.code, error.status)
        print("wrong auth token -> TwilioRestException 20003 (401)")
    else:
        raise SystemExit("a wrong auth token was accepted")
    check_messaging(args.base)
    return 0


def check_messaging(base):
    """`client.messages.create` against the Twilio Messaging emulator: the Message resource as the library reads it."""
    client = Client(ACCOUNT_SID, AUTH_TOKEN)
    client.api.base_url = f"{base}/sandbox/twilio_messaging"
    to = "+15005550010"
    message = client.messages.create(to=to, from_="+15005550006", body="Your code is 482916.")
    assert message.sid.startswith("SM") and len(message.sid) == 34, message.sid
    assert message.status == "queued" and message.num_segments == "1", (message.status, message.num_segments)
    assert message.to == to and message.body == "Your code is 482916.", (message.to, message.body)
    assert message.date_created is not None, message.date_created  # RFC 2822, parsed by the library
    service = "MG" + "0a" * 16
    pooled = client.messages.create(to=to, messaging_service_sid=service, body="Your code is 482916.")
    assert pooled.status == "accepted" and pooled.num_segments == "0", (pooled.status, pooled.num_segments)
    assert pooled.messaging_service_sid == service, pooled.messaging_service_sid
    with urllib.request.urlopen(f"{base}/sandbox/outbox") as response:
        sent = [m for m in json.load(response)["messages"] if m["to"] == to and m["provider"] == "twilio_messaging"]
    assert [m["code"] for m in sent] == ["482916", "482916"], sent
    print(f"messages.create {message.sid} (queued, 1 segment) and through {service} (accepted); both in the outbox")
    try:
        client.messages.create(to="not-a-number", from_="+15005550006", body="x")
    except TwilioRestException as error:
        assert error.code == 21211 and error.status == 400, (error.code, error.status)
        print("a To that is not a number -> TwilioRestException 21211 (400)")
    else:
        raise SystemExit("an invalid To was accepted")


if __name__ == "__main__":
    sys.exit(main())
