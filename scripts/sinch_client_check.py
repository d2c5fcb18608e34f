#!/usr/bin/env python3
"""Drives the running sandbox with the official `sinch` Python SDK, version 1.1.4 (the last with Verification).

    python3 -m venv .venv && .venv/bin/pip install 'sinch==1.1.4'
    swift run gateway &                       # in another terminal
    .venv/bin/python scripts/sinch_client_check.py

Points the SDK at the sandbox's Sinch emulator with `verification_origin` and `disable_https`, and with
application signing (the SDK's only scheme for Verification): starts an SMS verification, reads the code from
the sandbox outbox, reports a wrong code (FAIL / Invalid code) and the right one (SUCCESSFUL), reads the status
by id and by reference, and checks that a wrong application secret is refused (40102). Then the SMS emulator the
sandbox's `sinch_sms` provider sends the gateway's own codes through (`/sandbox/sinch_sms`), with the plan's API
token: `sms.batches.send` of a text and of a unicode message (each a batch with its id, recorded in the outbox with
its code), and a wrong token refused (SMSException, 401). Exit status 0 on success.
"""
import argparse, json, sys, time, urllib.parse, urllib.request

from sinch import SinchClient
from sinch.domains.sms.exceptions import SMSException
from sinch.domains.verification.exceptions import VerificationException

# The sandbox's fixed credentials (Sources/Plugins/Sinch, SinchSandbox).
APPLICATION_KEY = "5a4db0c0-5a4d-4b0c-8a4d-b0c05a4d0001"
APPLICATION_SECRET = "c2FuZGJveC1zaW5jaC1hcHBsaWNhdGlvbi1zZWNyZXQ="
SERVICE_PLAN_ID = "5a4db0c05a4d4b0c8a4db0c05a4d0002"
SMS_API_TOKEN = "sandbox0sinch0sms0api0token00001"


def latest_code(base, to):
    with urllib.request.urlopen(f"{base}/sandbox/outbox?to={urllib.parse.quote(to)}") as response:
        messages = json.load(response)["messages"]
    codes = [m["code"] for m in messages if m["provider"] == "sinch" and m["kind"] == "sms"]
    if not codes:
        raise SystemExit(f"no sandbox SMS to {to}")
    return codes[-1]


def client(base, secret):
    sinch = SinchClient(application_key=APPLICATION_KEY, application_secret=secret)
    # A plain attribute, host[:port][/path] with no scheme; the scheme comes from disable_https.
    url = urllib.parse.urlsplit(base)
    sinch.configuration.verification_origin = url.netloc + "/sandbox/sinch"
    sinch.configuration.disable_https = url.scheme == "http"
    return sinch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default="http://127.0.0.1:8080")
    args = parser.parse_args()

    sinch = client(args.base, APPLICATION_SECRET)
    to = "+46701230001"
    reference = f"sdk-check-{time.time_ns()}"
    started = sinch.verification.verifications.start_sms(
        identity={"type": "number", "endpoint": to}, reference=reference)
    assert started.id and started.method == "sms", (started.id, started.method)
    assert started.sms is not None and started.sms.template, started.sms
    code = latest_code(args.base, to)
    wrong = "0000" if code != "0000" else "1111"

    report = sinch.verification.verifications.report_sms_by_id(id=started.id, code=wrong)
    assert report.status == "FAIL" and report.reason == "Invalid code", (report.status, report.reason)
    report = sinch.verification.verifications.report_sms_by_id(id=started.id, code=code)
    assert report.status == "SUCCESSFUL", report.status
    print(f"started {started.id}, wrong code -> FAIL/Invalid code, right code -> SUCCESSFUL")

    status = sinch.verification.verification_status.get_by_id(id=started.id)
    assert status.status == "SUCCESSFUL" and status.id == started.id, (status.status, status.id)
    assert status.reference == reference, status.reference
    by_reference = sinch.verification.verification_status.get_by_reference(reference=reference)
    assert by_reference.id == started.id, by_reference.id
    print("status by id and by reference -> SUCCESSFUL")

    intruder = client(args.base, "d3Jvbmctc2VjcmV0")  # base64 of "wrong-secret"
    try:
        intruder.verification.verifications.start_sms(identity={"type": "number", "endpoint": to})
    except VerificationException as error:
        assert error.response_status_code == 401, error.response_status_code
        assert error.http_response.body.get("errorCode") == 40102, error.http_response.body
        print("wrong application secret -> VerificationException 40102 (401)")
    else:
        raise SystemExit("a wrong application secret was accepted")

    check_sms(args.base)
    return 0


def sms_client(base, token):
    sinch = SinchClient(service_plan_id=SERVICE_PLAN_ID, sms_api_token=token)
    url = urllib.parse.urlsplit(base)
    # The SDK formats the region into this host; without a placeholder it is used as it is.
    sinch.configuration.sms_domain_with_service_plan_id = url.netloc + "/sandbox/sinch_sms"
    sinch.configuration.disable_https = url.scheme == "http"
    return sinch


def check_sms(base):
    """Sinch SMS's emulator, as the SDK's `sms.batches.send` speaks to it."""
    sinch = sms_client(base, SMS_API_TOKEN)
    for to, text, code in (("+46701230002", "Your Acme code is 482913.", "482913"),
                           ("+46701230003", "Din kod för Acme är 482914 ✓", "482914")):
        batch = sinch.sms.batches.send(body=text, to=[to], from_="Acme", delivery_report="none")
        assert batch.id and len(batch.id) == 26 and batch.to == [to] and batch.body == text, batch
        with urllib.request.urlopen(f"{base}/sandbox/outbox?to={urllib.parse.quote(to)}") as response:
            sent = [m for m in json.load(response)["messages"] if m["provider"] == "sinch_sms"]
        assert [m["code"] for m in sent] == [code], sent
        print(f"sms.batches.send to {to}: batch {batch.id}, in the outbox with its code")
    try:
        sms_client(base, "wrong-token").sms.batches.send(body="x 123456", to=["+46701230004"], delivery_report="none")
    except SMSException as error:
        assert error.http_response.status_code == 401, error.http_response.status_code
        print("wrong API token -> SMSException (401)")
    else:
        raise SystemExit("a wrong SMS API token was accepted")


if __name__ == "__main__":
    sys.exit(main())
