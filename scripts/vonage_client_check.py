#!/usr/bin/env python3
"""Drives the Vonage sandbox with the official `vonage` Python packages, over HTTPS.

    python3 -m venv .venv && .venv/bin/pip install vonage vonage-verify vonage-verify-legacy
    openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 2 \\
        -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1
    GATEWAY_VONAGE_CANCEL_WINDOW=2 swift run gateway --port 8443 --tls-cert cert.pem --tls-key key.pem &
    .venv/bin/python scripts/vonage_client_check.py --base https://127.0.0.1:8443 --ca cert.pem --cancel-window 2

The client builds `https://{api_host}{path}` (vonage-http-client's HttpClientOptions), so `api_host` is
`127.0.0.1:PORT/sandbox/vonage`, and requests trusts the self-signed certificate through
REQUESTS_CA_BUNDLE. For Verify v2 (`vonage-verify`) and the legacy v1 (`vonage-verify-legacy`) it starts a
verification, checks a wrong and then the right code, triggers the next workflow step and cancels (first
refused inside the cancel window, then accepted). For v2 it also runs silent auth as the spec describes it
(the device follows `check_url`'s redirects to a code the backend checks, once) and a WhatsApp step. Then
the SMS API (`vonage-sms`, part of `vonage`), which the `vonage_sms` plugin sends the gateway's own codes
through: a text and a unicode message to its emulator (`rest_host` `127.0.0.1:PORT/sandbox/vonage_sms`), and a
refusal for a wrong secret. Exit status 0 on success.
"""
import argparse, json, os, pathlib, re, ssl, sys, time, urllib.request

# The sandbox's fixed credentials (Sources/Plugins/Nexmo, VonageSandbox; also printed at startup).
API_KEY = "5a4db0c1"
API_SECRET = "Sandbox0Secret01"
APPLICATION_ID = "5a4db0c1-0000-4000-8000-5a4db0c10001"
BRAND = "Gateway"


def sandbox_private_key():
    """The sandbox application's public test key, read from the plugin's source."""
    source = pathlib.Path(__file__).resolve().parent.parent / "Sources/Plugins/Nexmo/VonageSandbox.swift"
    match = re.search(r"-----BEGIN PRIVATE KEY-----.*?-----END PRIVATE KEY-----", source.read_text(), re.S)
    if not match:
        raise SystemExit("no sandbox private key in VonageSandbox.swift")
    return "\n".join(line.strip() for line in match.group(0).splitlines()) + "\n"


def outbox(base, context, to, provider="vonage"):
    with urllib.request.urlopen(f"{base}/sandbox/outbox", context=context) as response:
        messages = json.load(response)["messages"]
    return [m for m in messages if m["to"] == to and m["provider"] == provider]


def latest(base, context, to):
    messages = outbox(base, context, to)
    if not messages:
        raise SystemExit(f"no sandbox message to {to}")
    return messages[-1]


def expect_error(call, check, label):
    try:
        call()
    except Exception as error:  # the clients raise their own error types
        if not check(error):
            raise SystemExit(f"{label}: unexpected error {type(error).__name__}: {error}")
        print(f"{label} -> {type(error).__name__}")
        return
    raise SystemExit(f"{label}: no error raised")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default="https://127.0.0.1:8443")
    parser.add_argument("--ca", required=True, help="the PEM certificate the gateway serves")
    parser.add_argument("--cancel-window", type=float, default=30.0)
    args = parser.parse_args()
    os.environ["REQUESTS_CA_BUNDLE"] = args.ca
    context = ssl.create_default_context(cafile=args.ca)

    from vonage import Auth, HttpClientOptions, Vonage
    from vonage_http_client.errors import HttpRequestError
    from vonage_verify import SilentAuthChannel, SmsChannel, VerifyRequest, VoiceChannel, WhatsappChannel
    from vonage_verify_legacy import VerifyRequest as LegacyRequest
    from vonage_verify_legacy.errors import VerifyError as LegacyError

    host = args.base.removeprefix("https://") + "/sandbox/vonage"
    options = HttpClientOptions(api_host=host, timeout=10)
    basic = Vonage(Auth(api_key=API_KEY, api_secret=API_SECRET), http_client_options=options)
    jwt = Vonage(Auth(application_id=APPLICATION_ID, private_key=sandbox_private_key()), http_client_options=options)
    digits = lambda to: to.lstrip("+")

    # --- Verify v2 -------------------------------------------------------------------------------------
    to = "+14155550161"
    started = basic.verify.start_verification(
        VerifyRequest(brand=BRAND, workflow=[SmsChannel(to=digits(to)), VoiceChannel(to=digits(to))]))
    code = latest(args.base, context, to)["code"]
    wrong = "0000" if code != "0000" else "1111"
    expect_error(lambda: basic.verify.check_code(started.request_id, wrong),
                 lambda e: isinstance(e, HttpRequestError) and "400" in str(e), "v2 wrong code")
    checked = basic.verify.check_code(started.request_id, code)
    assert checked.status == "completed", checked
    print(f"v2 {started.request_id}: wrong code -> 400, right code -> completed")

    to = "+14155550162"
    started = jwt.verify.start_verification(
        VerifyRequest(brand=BRAND, workflow=[SmsChannel(to=digits(to)), VoiceChannel(to=digits(to))]))
    jwt.verify.trigger_next_workflow(started.request_id)
    assert latest(args.base, context, to)["channel"] == "voice", outbox(args.base, context, to)
    expect_error(lambda: jwt.verify.trigger_next_workflow(started.request_id),
                 lambda e: isinstance(e, HttpRequestError) and "409" in str(e), "v2 next workflow with none left")
    print("v2 (application JWT): next workflow -> voice message in the outbox")

    to = "+14155550163"
    started = basic.verify.start_verification(VerifyRequest(brand=BRAND, workflow=[SmsChannel(to=digits(to))]))
    expect_error(lambda: basic.verify.cancel_verification(started.request_id),
                 lambda e: isinstance(e, HttpRequestError) and "409" in str(e), "v2 cancel inside the window")
    time.sleep(args.cancel_window + 0.5)
    assert basic.verify.cancel_verification(started.request_id) is None
    expect_error(lambda: basic.verify.check_code(started.request_id, "1234"),
                 lambda e: "404" in str(e) or type(e).__name__ == "NotFoundError", "v2 check after cancel")
    print("v2 cancel after the window -> 204")

    # Silent auth: the device opens check_url over mobile data and follows its redirects (urllib follows the
    # 302s) to {request_id, code}; the backend checks that code, which completes the request.
    to = "+14155550164"
    started = basic.verify.start_verification(
        VerifyRequest(brand=BRAND, workflow=[SilentAuthChannel(to=digits(to)), SmsChannel(to=digits(to))]))
    assert started.check_url and started.check_url.endswith("/silent-auth/redirect"), started
    with urllib.request.urlopen(started.check_url, context=context) as response:
        answer = json.load(response)
    assert answer["request_id"] == started.request_id and answer["code"], answer
    checked = basic.verify.check_code(started.request_id, answer["code"])
    assert checked.status == "completed", checked
    print(f"v2 silent auth {started.request_id}: check_url -> code -> check completed")

    # One attempt for a silent-auth code: a wrong one is 410 and ends the request.
    to = "+14155550165"
    started = basic.verify.start_verification(VerifyRequest(brand=BRAND, workflow=[SilentAuthChannel(to=digits(to))]))
    with urllib.request.urlopen(started.check_url, context=context) as response:
        code = json.load(response)["code"]
    wrong = "abcd12" if code != "abcd12" else "abcd13"
    expect_error(lambda: basic.verify.check_code(started.request_id, wrong),
                 lambda e: isinstance(e, HttpRequestError) and "410" in str(e), "v2 silent auth wrong code")
    expect_error(lambda: basic.verify.check_code(started.request_id, code),
                 lambda e: "404" in str(e) or type(e).__name__ == "NotFoundError", "v2 silent auth after the one attempt")

    # WhatsApp: `from` is the WhatsApp Business number; the code arrives as a whatsapp message.
    to = "+14155550166"
    started = basic.verify.start_verification(
        VerifyRequest(brand=BRAND, workflow=[WhatsappChannel(to=digits(to), from_="14155550199")]))
    message = latest(args.base, context, to)
    assert message["kind"] == "whatsapp" and message["channel"] == "whatsapp", message
    checked = basic.verify.check_code(started.request_id, message["code"])
    assert checked.status == "completed", checked
    print("v2 whatsapp: a whatsapp message in the outbox, its code completes")

    # --- Verify v1 (legacy) ----------------------------------------------------------------------------
    legacy = basic.verify_legacy
    to = "+14155550171"
    started = legacy.start_verification(LegacyRequest(number=digits(to), brand=BRAND))
    code = latest(args.base, context, to)["code"]
    wrong = "0000" if code != "0000" else "1111"
    expect_error(lambda: legacy.check_code(started.request_id, wrong),
                 lambda e: isinstance(e, LegacyError) and "16" in str(e), "v1 wrong code")
    checked = legacy.check_code(started.request_id, code)
    assert checked.status == "0", checked
    print(f"v1 {started.request_id}: wrong code -> status 16, right code -> status 0")

    to = "+14155550172"
    started = legacy.start_verification(LegacyRequest(number=digits(to), brand=BRAND, workflow_id=5))
    answer = legacy.trigger_next_event(started.request_id)
    assert answer.status == "0" and answer.command == "trigger_next_event", answer
    assert latest(args.base, context, to)["channel"] == "voice"
    expect_error(lambda: legacy.trigger_next_event(started.request_id),
                 lambda e: isinstance(e, LegacyError) and "19" in str(e), "v1 trigger with no event left")
    print("v1 trigger_next_event -> voice message in the outbox")

    to = "+14155550173"
    started = legacy.start_verification(LegacyRequest(number=digits(to), brand=BRAND))
    expect_error(lambda: legacy.cancel_verification(started.request_id),
                 lambda e: isinstance(e, LegacyError) and "19" in str(e), "v1 cancel inside the window")
    time.sleep(args.cancel_window + 0.5)
    answer = legacy.cancel_verification(started.request_id)
    assert answer.status == "0" and answer.command == "cancel", answer
    found = legacy.search(started.request_id)
    assert found.status == "CANCELLED", found
    print("v1 cancel after the window -> status 0; search says CANCELLED")
    check_sms(args.base, context)
    return 0


def check_sms(base, context):
    """`vonage.sms.send` against the SMS API emulator: the answer as the package reads it, and its error."""
    from vonage import Auth, HttpClientOptions, Vonage
    from vonage_sms import SmsMessage
    from vonage_sms.errors import SmsError

    options = HttpClientOptions(rest_host=base.removeprefix("https://") + "/sandbox/vonage_sms", timeout=10)
    client = Vonage(Auth(api_key=API_KEY, api_secret=API_SECRET), http_client_options=options)
    to = "14155550181"
    sent = client.sms.send(SmsMessage(to=to, from_="Acme", text="Your code is 482916.", client_ref="vf_check"))
    part = sent.messages[0]
    assert sent.message_count == "1" and part.status == "0", sent
    assert len(part.message_id) == 16 and part.client_ref == "vf_check" and part.to == to, part
    unicode = client.sms.send(SmsMessage(to=to, from_="Acme", text="Acme の認証コード: 482916", type="unicode"))
    assert unicode.messages[0].status == "0", unicode
    sent_codes = [m["code"] for m in outbox(base, context, "+" + to, provider="vonage_sms")]
    assert sent_codes == ["482916", "482916"], sent_codes
    print(f"sms.send {part.message_id} (1 part, client-ref echoed) and a unicode message; both in the outbox")
    intruder = Vonage(Auth(api_key=API_KEY, api_secret="wrong-secret"), http_client_options=options)
    expect_error(lambda: intruder.sms.send(SmsMessage(to=to, from_="Acme", text="x")),
                 lambda e: isinstance(e, SmsError) and "error code 4" in str(e), "sms with a wrong secret")


if __name__ == "__main__":
    sys.exit(main())
