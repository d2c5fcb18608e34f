#!/usr/bin/env python3
"""Drives the running sandbox's Firebase emulator with Google's own API client.

    python3 -m venv .venv && .venv/bin/pip install google-api-python-client
    swift run gateway &                       # in another terminal
    .venv/bin/python scripts/firebase_client_check.py

It builds the `identitytoolkit` v1 service from the discovery document bundled with
google-api-python-client, pointed at the sandbox, then: sends a code (the SMS appears in the
sandbox outbox and in the emulator's verificationCodes listing), signs in with a wrong code
(INVALID_CODE), signs in with the right one (an ID token comes back), reuses the spent sessionInfo
(refused), and sends with a rejected reCAPTCHA token (CAPTCHA_CHECK_FAILED). Exit status 0 on success.
"""
import argparse, json, sys, urllib.request

from googleapiclient.discovery import build
from googleapiclient.errors import HttpError

# The sandbox's fixed values (Sources/Plugins/Firebase, FirebaseSandbox; also printed at startup).
API_KEY = "AIzaSyD-sandbox-verification-gateway001"
PROJECT_ID = "demo-verification-gateway"


def get_json(url):
    with urllib.request.urlopen(url) as response:
        return json.load(response)


def firebase_error(error):
    return json.loads(error.content)["error"]["message"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default="http://127.0.0.1:8080")
    args = parser.parse_args()
    host = f"{args.base}/sandbox/firebase/identitytoolkit.googleapis.com/"

    service = build("identitytoolkit", "v1", developerKey=API_KEY, static_discovery=True,
                    client_options={"api_endpoint": host})
    accounts = service.accounts()

    to = "+447400123499"
    sent = accounts.sendVerificationCode(body={"phoneNumber": to, "recaptchaToken": "sandbox-token"}).execute()
    session = sent["sessionInfo"]
    listing = get_json(f"{args.base}/sandbox/firebase/emulator/v1/projects/{PROJECT_ID}/verificationCodes")
    codes = [c["code"] for c in listing["verificationCodes"] if c["phoneNumber"] == to]
    outbox = [m["code"] for m in get_json(f"{args.base}/sandbox/outbox")["messages"] if m["to"] == to]
    assert codes and outbox and codes[-1] == outbox[-1], (codes, outbox)
    code = codes[-1]
    print("sendVerificationCode -> sessionInfo; the code is in verificationCodes and the outbox")

    wrong = "000000" if code != "000000" else "111111"
    try:
        accounts.signInWithPhoneNumber(body={"sessionInfo": session, "code": wrong}).execute()
    except HttpError as error:
        assert error.resp.status == 400 and firebase_error(error).startswith("INVALID_CODE"), firebase_error(error)
        print("wrong code -> HttpError 400 INVALID_CODE")
    else:
        raise SystemExit("a wrong code was accepted")

    signed_in = accounts.signInWithPhoneNumber(body={"sessionInfo": session, "code": code}).execute()
    assert signed_in["idToken"].count(".") == 2, signed_in
    assert signed_in["phoneNumber"] == to and signed_in["localId"] and signed_in["refreshToken"], signed_in
    print(f"right code -> signed in as {signed_in['localId']} with an ID token (JWT)")

    try:
        accounts.signInWithPhoneNumber(body={"sessionInfo": session, "code": code}).execute()
    except HttpError as error:
        assert error.resp.status == 400, error.resp.status
        print(f"spent sessionInfo -> HttpError 400 {firebase_error(error)}")
    else:
        raise SystemExit("a used sessionInfo was accepted")

    try:
        accounts.sendVerificationCode(body={"phoneNumber": "+447400123498", "recaptchaToken": "invalid"}).execute()
    except HttpError as error:
        assert firebase_error(error).startswith("CAPTCHA_CHECK_FAILED"), firebase_error(error)
        print("rejected reCAPTCHA token -> HttpError 400 CAPTCHA_CHECK_FAILED")
    else:
        raise SystemExit("a rejected proof was accepted")
    return 0


if __name__ == "__main__":
    sys.exit(main())
