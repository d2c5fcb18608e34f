#!/usr/bin/env python3
"""Drives the running sandbox's Telnyx emulator with the official `telnyx` Python SDK.

    python3 -m venv .venv && .venv/bin/pip install telnyx
    swift run gateway &                       # in another terminal
    .venv/bin/python scripts/telnyx_client_check.py

Points `Telnyx(api_key=..., base_url=...)` at `/sandbox/telnyx/v2`: triggers an SMS verification, reads the code
from the sandbox outbox, checks a wrong code (`rejected`) and the right one by id (`accepted`), retrieves it
(`accepted`), triggers a call verification and checks its code by phone number with the profile, and checks that a
wrong API key is refused (`AuthenticationError`, Telnyx code 10009). Then the messaging emulator the sandbox's
`telnyx_messaging` provider sends the gateway's own codes through, at `/sandbox/telnyx_messaging/v2`:
`client.messages.send` from a number (a queued message with its parts, recorded in the outbox), from an
alphanumeric sender with the sandbox's messaging profile, and without one (`BadRequestError`, code 40306).
Exit status 0 on success.
"""
import argparse, json, sys, urllib.parse, urllib.request

import telnyx
from telnyx import Telnyx

# The sandbox's fixed values (Sources/Plugins/Telnyx, TelnyxSandbox).
API_KEY = "KEYSANDBOX0TELNYX0000000000000001"
PROFILE = "4900017a-0000-4000-8000-7e1a7e1a0001"
MESSAGING_PROFILE = "4000eba1-0000-4000-8000-7e1a7e1a0002"


def latest_code(base, to, kind):
    with urllib.request.urlopen(f"{base}/sandbox/outbox?to={urllib.parse.quote(to)}") as response:
        messages = json.load(response)["messages"]
    codes = [m["code"] for m in messages if m["provider"] == "telnyx" and m["kind"] == kind]
    if not codes:
        raise SystemExit(f"no sandbox {kind} to {to}")
    return codes[-1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default="http://127.0.0.1:8080")
    args = parser.parse_args()
    client = Telnyx(api_key=API_KEY, base_url=f"{args.base}/sandbox/telnyx/v2", max_retries=0)

    to = "+14155550900"
    started = client.verifications.trigger_sms(phone_number=to, verify_profile_id=PROFILE)
    vid = started.data.id
    assert vid and started.data.status == "pending" and started.data.type == "sms", started
    code = latest_code(args.base, to, "sms")
    wrong = "00000" if code != "00000" else "11111"
    answer = client.verifications.actions.verify(str(vid), code=wrong)
    assert answer.data.response_code == "rejected", answer
    answer = client.verifications.actions.verify(str(vid), code=code)
    assert answer.data.response_code == "accepted" and answer.data.phone_number == to, answer
    found = client.verifications.retrieve(str(vid))
    assert found.data.status == "accepted" and str(found.data.id) == str(vid), found
    print(f"telnyx {telnyx.__version__}: sms {vid}, wrong code -> rejected, right code -> accepted, retrieve -> accepted")

    to = "+14155550901"
    started = client.verifications.trigger_call(phone_number=to, verify_profile_id=PROFILE)
    assert started.data.type == "call", started
    code = latest_code(args.base, to, "voice")
    answer = client.verifications.by_phone_number.actions.verify(to, code=code, verify_profile_id=PROFILE)
    assert answer.data.response_code == "accepted", answer
    listed = client.verifications.by_phone_number.list(to)
    assert [str(v.id) for v in listed.data] == [str(started.data.id)] and listed.data[0].status == "accepted", listed
    print("call by phone number: accepted; list by number -> accepted")

    intruder = Telnyx(api_key="KEYWRONG", base_url=f"{args.base}/sandbox/telnyx/v2", max_retries=0)
    try:
        intruder.verifications.trigger_sms(phone_number=to, verify_profile_id=PROFILE)
    except telnyx.AuthenticationError as error:
        assert error.status_code == 401 and error.body["errors"][0]["code"] == "10009", error.body
        print("wrong API key -> AuthenticationError 10009 (401)")
    else:
        raise SystemExit("a wrong API key was accepted")

    check_messaging(args.base)
    return 0


def outbox(base, to):
    with urllib.request.urlopen(f"{base}/sandbox/outbox?to={urllib.parse.quote(to)}") as response:
        return [m for m in json.load(response)["messages"] if m["provider"] == "telnyx_messaging"]


def check_messaging(base):
    """Telnyx Messaging's emulator, as the SDK's `client.messages.send` speaks to it."""
    client = Telnyx(api_key=API_KEY, base_url=f"{base}/sandbox/telnyx_messaging/v2", max_retries=0)
    to = "+14155550902"
    sent = client.messages.send(from_="+14155550199", to=to, text="Your Acme code is 482913.", type="SMS")
    message = sent.data
    assert message.id and message.to[0].phone_number == to and message.to[0].status == "queued", sent
    assert message.parts == 1 and message.encoding == "GSM-7" and message.from_.phone_number == "+14155550199", sent
    recorded = outbox(base, to)
    assert [m["code"] for m in recorded] == ["482913"], recorded
    print(f"messages.send from a number: {message.id} queued, {message.parts} part, in the outbox with its code")

    to = "+447400123902"
    sent = client.messages.send(
        from_="Acme", to=to, text="Ihr Acme-Code lautet 482914. Gültig für 10 Minuten.",
        messaging_profile_id=MESSAGING_PROFILE)
    assert sent.data.to[0].status == "queued" and sent.data.messaging_profile_id == MESSAGING_PROFILE, sent
    print(f"messages.send from an alphanumeric sender with the profile: queued, encoding {sent.data.encoding}")
    try:
        client.messages.send(from_="Acme", to=to, text="Your Acme code is 482915.")
    except telnyx.BadRequestError as error:
        assert error.status_code == 400 and error.body["errors"][0]["code"] == "40306", error.body
        print("an alphanumeric sender without a messaging profile -> BadRequestError 40306 (400)")
    else:
        raise SystemExit("an alphanumeric sender without a messaging profile was accepted")


if __name__ == "__main__":
    sys.exit(main())
