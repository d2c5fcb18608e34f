#!/usr/bin/env python3
"""Drives the running sandbox's Firebase emulator with Google's own API client.

    python3 -m venv .venv && .venv/bin/pip install google-api-python-client
    swift run gateway &                       # in another terminal
    .venv/bin/python scripts/firebase_client_check.py

It builds the `identitytoolkit` v1 service from the discovery document bundled with
google-api-python-client, pointed at the sandbox, then: sends a code (the SMS appears in the
sandbox outbox and in the emulator's verificationCodes listing), signs in with a wrong code
(INVALID_CODE), signs in with the right one (an ID token comes back), reuses the spent sessionInfo
(refused), and sends with a rejected reCAPTCHA token (CAPTCHA_CHECK_FAILED).

Then the phone second factor with the v2 service (`accounts.mfaEnrollment`, `accounts.mfaSignIn`): a user made
with the Auth Emulator's admin credential (email verified) signs in with its password (v1
`signInWithPassword`: an ID token), enrolls a number (`mfaEnrollment.start`, the code from the outbox,
`.finalize`), signs in again (now `mfaPendingCredential` and `mfaInfo`), sends the second factor's code
(`mfaSignIn.start`), is refused a wrong code (INVALID_CODE) and an unknown pending credential
(INVALID_MFA_PENDING_CREDENTIAL), and finishes the sign-in (`mfaSignIn.finalize`: an ID token whose `firebase`
claim names the phone second factor). Exit status 0 on success.
"""
import argparse, base64, json, os, sys, urllib.request

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


def expect_error(call, prefix, what):
    try:
        call.execute()
    except HttpError as error:
        assert error.resp.status == 400 and firebase_error(error).startswith(prefix), firebase_error(error)
        print(f"{what} -> HttpError 400 {prefix}")
    else:
        raise SystemExit(f"{what} was accepted")


def outbox_code(base, to):
    codes = [m["code"] for m in get_json(f"{base}/sandbox/outbox")["messages"] if m["to"] == to]
    assert codes, f"no code was sent to {to}"
    return codes[-1]


def second_factor(base, host):
    """Enrollment and sign-in with a phone second factor, over the v2 service."""
    v1 = build("identitytoolkit", "v1", developerKey=API_KEY, static_discovery=True,
               client_options={"api_endpoint": host}).accounts()
    v2 = build("identitytoolkit", "v2", developerKey=API_KEY, static_discovery=True,
               client_options={"api_endpoint": host}).accounts()
    email, password, to = f"client-check-{os.urandom(4).hex()}@example.com", "correct horse battery", "+447400123497"
    # The Auth Emulator's admin credential (as the Admin SDK's emulator mode sends it) verifies the email.
    request = urllib.request.Request(
        f"{host}v1/accounts:signUp", method="POST",
        data=json.dumps({"email": email, "password": password, "emailVerified": True}).encode(),
        headers={"Authorization": "Bearer owner", "Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        assert response.status == 200
    first = v1.signInWithPassword(body={"email": email, "password": password, "returnSecureToken": True}).execute()
    id_token = first["idToken"]
    print("signInWithPassword (no second factor yet) -> an ID token")

    started = v2.mfaEnrollment().start(body={
        "idToken": id_token, "phoneEnrollmentInfo": {"phoneNumber": to, "recaptchaToken": "sandbox-token"}}).execute()
    session = started["phoneSessionInfo"]["sessionInfo"]
    enrolled = v2.mfaEnrollment().finalize(body={
        "idToken": id_token, "displayName": "client check",
        "phoneVerificationInfo": {"sessionInfo": session, "code": outbox_code(base, to)}}).execute()
    assert enrolled["idToken"].count(".") == 2 and enrolled["refreshToken"], enrolled
    print("mfaEnrollment.start and .finalize -> the number is the user's second factor")

    pending = v1.signInWithPassword(body={"email": email, "password": password, "returnSecureToken": True}).execute()
    assert "idToken" not in pending and pending["mfaPendingCredential"], pending
    factor = pending["mfaInfo"][0]
    assert factor["phoneInfo"].endswith(to[-4:]) and "*" in factor["phoneInfo"], factor
    print(f"signInWithPassword -> mfaPendingCredential and mfaInfo ({factor['phoneInfo']})")

    expect_error(v2.mfaSignIn().start(body={
        "mfaPendingCredential": "not-a-credential", "mfaEnrollmentId": factor["mfaEnrollmentId"],
        "phoneSignInInfo": {"recaptchaToken": "sandbox-token"}}), "INVALID_MFA_PENDING_CREDENTIAL",
        "mfaSignIn.start with an unknown pending credential")
    started = v2.mfaSignIn().start(body={
        "mfaPendingCredential": pending["mfaPendingCredential"], "mfaEnrollmentId": factor["mfaEnrollmentId"],
        "phoneSignInInfo": {"recaptchaToken": "sandbox-token"}}).execute()
    session = started["phoneResponseInfo"]["sessionInfo"]
    code = outbox_code(base, to)
    body = {"mfaPendingCredential": pending["mfaPendingCredential"], "mfaEnrollmentId": factor["mfaEnrollmentId"],
            "phoneVerificationInfo": {"sessionInfo": session, "code": "000000" if code != "000000" else "111111"}}
    expect_error(v2.mfaSignIn().finalize(body=body), "INVALID_CODE", "mfaSignIn.finalize with a wrong code")
    body["phoneVerificationInfo"]["code"] = code
    signed_in = v2.mfaSignIn().finalize(body=body).execute()
    payload = signed_in["idToken"].split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert claims["firebase"]["sign_in_second_factor"] == "phone", claims
    assert claims["firebase"]["second_factor_identifier"] == factor["mfaEnrollmentId"], claims
    print("mfaSignIn.start and .finalize -> signed in with the phone second factor")


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

    second_factor(args.base, host)
    return 0


if __name__ == "__main__":
    sys.exit(main())
