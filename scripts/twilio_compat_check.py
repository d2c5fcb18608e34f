#!/usr/bin/env python3
"""Issue 34: the official `twilio` Python client, unmodified, against the gateway's Twilio-compatible front door.

    python3 -m venv .venv && .venv/bin/pip install 'twilio>=9,<10' pyyaml jsonschema
    .venv/bin/python scripts/twilio_compat_check.py --specs ../shared/specs

Starts a sandbox gateway (`swift build --product gateway` first) with a `twilio_compat` section of two Verify
services, one routed to Sinch and one to Vonage, and a recording proxy in front of it (another free loopback
port). The Twilio client's Verify base URL is `<proxy>/twilio`, as an integration would set it to
`<gateway>/twilio`. With the client it: reads each service, creates a verification on each (the native API
confirms Sinch and Vonage sent them), fetches it, checks a wrong code (pending) then the right one (approved)
with `verification_checks.create`; on another number, creates twice (the second reuses the pending
verification: same sid, two sends), fetches it by number and checks it by `To` alone
(`verification_checks.create(to=..., code=...)`), wrong then right; creates for one number from eight threads
at once (the Sinch emulator slowed to 1 s) and expects one verification, sent once, the same sid in every
answer; cancels another verification; and
expects Twilio's exceptions with Twilio's codes for an unknown verification SID and an unknown service SID
(20404, 404), a check by `To` with nothing pending (20404, 404), a bad auth token (20003, 401) and too many
checks (60202, 429).

Every request and answer the proxy recorded is then validated against Twilio's own document,
`twilio_verify_v2.yaml` in `--specs` (read from there, never copied), with scripts/wire_check.py's validator
and its reading of the document (unknown properties refused in requests and answers; error answers checked
against Twilio's published error object). One addition, stated here: the facade's documented extension field
`gateway` (docs/twilio-compat.md) is added, with its own closed schema, to the Verification, VerificationCheck
and Service schemas and to Twilio's error object; any other undocumented field still fails. A self-test then
breaks a recorded answer (an unknown field) and a recorded request (a repeated form field), and fails unless
the validator refuses both. Exit status 0 on success.
"""
import argparse, copy, os, shutil, sys, tempfile, threading, urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_gateway  # noqa: E402
import wire_check  # noqa: E402

from twilio.base.exceptions import TwilioRestException  # noqa: E402
from twilio.rest import Client  # noqa: E402

ACCOUNT_SID = "AC0f0e0d0c0b0a09080706050403020100"
SINCH_SERVICE = "VA5111c0de5111c0de5111c0de5111c0de"
VONAGE_SERVICE = "VA7022c0de7022c0de7022c0de7022c0de"
SECRET = "sk_sandbox_twilio_front_0001"
PREFIX = "/twilio"

CONFIG = f"""sandbox: true
api_keys:
  - {{name: twilio-front, key_env: TWILIO_FRONT_KEY, scopes: [verify]}}
twilio_compat:
  account_sid: {ACCOUNT_SID}
  services:
    - {{sid: {SINCH_SERVICE}, friendly_name: Sinch arm, providers: [sinch]}}
    - {{sid: {VONAGE_SERVICE}, friendly_name: Vonage arm, providers: [vonage]}}
"""

# The facade's extension field, closed: what docs/twilio-compat.md documents, nothing more.
GATEWAY_FIELD = {
    "type": "object", "additionalProperties": False,
    "properties": {
        "verification_id": {"type": "string", "pattern": "^vf_[0-9a-f]{32}$"},
        "provider": {"type": "string"}, "route": {"type": ["string", "null"]},
        "experiment": {"type": ["string", "null"]}, "experiment_arm": {"type": ["string", "null"]},
        "status": {"type": "string"}, "attempts_remaining": {"type": "integer"},
        "expires_at": {"type": "string"}, "token": {"type": "string"},
        "code": {"type": "string"}, "request_id": {"type": "string"},
        "target": {"type": "object"}, "fallbacks": {"type": "array", "items": {"type": "string"}},
    },
}
GATEWAY_ERROR_FIELD = {
    "type": "object", "additionalProperties": False, "required": ["code", "request_id"],
    "properties": {
        "code": {"type": "string"}, "request_id": {"type": "string"}, "attempts_remaining": {"type": "integer"},
        "provider": {"type": "object", "additionalProperties": False,
                     "properties": {"id": {"type": "string"}, "code": {"type": ["string", "null"]},
                                    "status": {"type": ["integer", "null"]}}},
    },
}


def load_document(specs):
    path = os.path.join(specs, "twilio_verify_v2.yaml")
    if not os.path.isfile(path):
        raise SystemExit(f"{path} is missing (give --specs ../shared/specs)")
    document = wire_check.OpenAPIDocument("twilio", path)
    schemas = document.document["components"]["schemas"]
    for name in ("verify.v2.service.verification", "verify.v2.service.verification_check", "verify.v2.service"):
        schemas[name]["properties"]["gateway"] = copy.deepcopy(GATEWAY_FIELD)
    error = copy.deepcopy(wire_check.ERROR_SCHEMAS["twilio"])
    error["properties"]["gateway"] = GATEWAY_ERROR_FIELD
    wire_check.ERROR_SCHEMAS["twilio"] = error
    return document


def validate(document, record):
    path = record["request"]["path"]
    if not path.startswith(PREFIX + "/"):
        return [f"a call to {path}, outside {PREFIX}"], [], []
    local = dict(record, request=dict(record["request"], path=path[len(PREFIX):]))
    return wire_check.validate_openapi(document, local, "twilio")


def expect_error(what, call, code, status):
    try:
        call()
    except TwilioRestException as error:
        assert error.code == code and error.status == status, (what, error.code, error.status, error.msg)
        print(f"{what} -> TwilioRestException {error.code} ({error.status})")
        return
    raise SystemExit(f"{what}: no exception")


def drive(base, proxy_base):
    client = Client(ACCOUNT_SID, SECRET)
    client.verify.base_url = proxy_base + PREFIX

    for service_sid, provider, number, channel in (
        (SINCH_SERVICE, "sinch", "+46701234001", "sms"),
        (VONAGE_SERVICE, "vonage", "+14155550191", "sms"),
    ):
        service = client.verify.v2.services(service_sid)
        fetched_service = service.fetch()
        assert fetched_service.sid == service_sid, fetched_service.sid
        verification = service.verifications.create(to=number, channel=channel)
        assert verification.status == "pending" and verification.sid.startswith("VE"), verification.status
        assert verification.service_sid == service_sid and verification.account_sid == ACCOUNT_SID
        assert len(verification.send_code_attempts) == 1, verification.send_code_attempts
        # The native API shows the vendor that really sent it.
        status, native = sandbox_gateway.call(base, "GET", "/v1/verifications/vf_" + verification.sid[2:], key=SECRET)
        assert status == 200 and native["provider"] == provider, (status, native)
        again = service.verifications(verification.sid).fetch()
        assert again.sid == verification.sid and again.status == "pending", again.status
        code = sandbox_gateway.code_for(base, number)
        assert code, f"no sandbox code for {number}"
        wrong = "0000" if code != "0000" else "1111"
        check = service.verification_checks.create(verification_sid=verification.sid, code=wrong)
        assert check.status == "pending" and check.valid is False, (check.status, check.valid)
        check = service.verification_checks.create(verification_sid=verification.sid, code=code)
        assert check.status == "approved" and check.valid is True, (check.status, check.valid)
        print(f"{provider}: service read, {verification.sid} created and fetched, wrong code -> pending, "
              f"right code -> approved")

    # By `To` alone, as Twilio serves it: a second create reuses the pending verification (same sid, one more
    # send); a fetch with the number in the SID's place and a check with `to=` find it; once approved, a
    # check by `To` finds nothing pending (20404).
    service = client.verify.v2.services(SINCH_SERVICE)
    number = "+46701234005"
    first = service.verifications.create(to=number, channel="sms")
    repeated = service.verifications.create(to=number, channel="sms")
    assert repeated.sid == first.sid, (first.sid, repeated.sid)
    assert len(repeated.send_code_attempts) == 2, repeated.send_code_attempts
    by_to = service.verifications(number).fetch()
    assert by_to.sid == first.sid and by_to.status == "pending", (by_to.sid, by_to.status)
    code = sandbox_gateway.code_for(base, number)
    assert code, f"no sandbox code for {number}"
    wrong = "0000" if code != "0000" else "1111"
    check = service.verification_checks.create(to=number, code=wrong)
    assert check.sid == first.sid and check.status == "pending" and check.valid is False, (check.sid, check.status)
    check = service.verification_checks.create(to=number, code=code)
    assert check.sid == first.sid and check.status == "approved" and check.valid is True, (check.sid, check.status)
    expect_error("a check by To with nothing pending",
                 lambda: service.verification_checks.create(to=number, code=code), 20404, 404)
    print(f"by To: a second create reused {first.sid} (2 sends), fetched by number, wrong code -> pending, "
          f"right code -> approved")

    # Creates at the same instant (a double-tapped submit, two app servers retrying): eight threads, each with
    # its own client, create for one number at once while the Sinch emulator takes 3 s, so that each arrives
    # while the first create holds the number's claim (a create that arrives after the first answered is a
    # repeat, and resends: on a busy machine 300 ms was once too short, and 1 s once too, when the threads'
    # first use of the client, which imports its Verify modules, came after the barrier; it comes before it
    # now). One verification, one send, one sid.
    status, _ = sandbox_gateway.call(base, "PUT", "/sandbox/faults/sinch", {"latency_ms": 3000}, key=None)
    assert status == 200, status
    number, taps = "+46701234006", 8
    barrier, answers, errors = threading.Barrier(taps), [], []

    def tap():
        tapper = Client(ACCOUNT_SID, SECRET)
        tapper.verify.base_url = proxy_base + PREFIX
        verifications = tapper.verify.v2.services(SINCH_SERVICE).verifications  # the lazy imports, before the barrier
        barrier.wait(timeout=60)
        try:
            answers.append(verifications.create(to=number, channel="sms"))
        except Exception as error:  # each thread's failure is reported below
            errors.append(error)

    threads = [threading.Thread(target=tap) for _ in range(taps)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    status, _ = sandbox_gateway.call(base, "DELETE", "/sandbox/faults/sinch", key=None)
    assert status == 200, status
    assert not errors and len(answers) == taps, (errors, len(answers))
    sids = {answer.sid for answer in answers}
    assert len(sids) == 1, sids
    assert all(len(answer.send_code_attempts) == 1 for answer in answers), [a.send_code_attempts for a in answers]
    (sid,) = sids
    status, native = sandbox_gateway.call(base, "GET", "/v1/verifications/vf_" + sid[2:], key=SECRET)
    assert status == 200 and native["sends"] == 1, (status, native)
    print(f"{taps} creates at once for one number: one verification {sid}, sent once")

    other = service.verifications.create(to="+46701234002", channel="sms")
    canceled = service.verifications(other.sid).update(status="canceled")
    assert canceled.status == "canceled", canceled.status
    print(f"{other.sid} canceled")

    expect_error("an unknown verification SID",
                 lambda: service.verifications("VE" + "0" * 32).fetch(), 20404, 404)
    expect_error("an unknown service SID",
                 lambda: client.verify.v2.services("VA" + "e" * 32).verifications.create(
                     to="+46701234003", channel="sms"), 20404, 404)
    intruder = Client(ACCOUNT_SID, "sk_sandbox_not_a_key_0000")
    intruder.verify.base_url = proxy_base + PREFIX
    expect_error("a bad auth token",
                 lambda: intruder.verify.v2.services(SINCH_SERVICE).verifications.create(
                     to="+46701234003", channel="sms"), 20003, 401)

    victim = service.verifications.create(to="+46701234004", channel="sms")
    code = sandbox_gateway.code_for(base, "+46701234004")
    wrong = "0000" if code != "0000" else "1111"
    for attempt in range(1, 7):
        try:
            check = service.verification_checks.create(verification_sid=victim.sid, code=wrong)
            assert check.status == "pending", (attempt, check.status)
        except TwilioRestException as error:
            assert error.code == 60202 and error.status == 429, (attempt, error.code, error.status)
            print(f"wrong check {attempt} -> TwilioRestException 60202 (429)")
            break
    else:
        raise SystemExit("six wrong checks raised no 60202")


def self_test(document, records):
    answer = next(r for r in records if r["request"]["method"] == "POST" and r["response"]["status"] == 201)
    broken = copy.deepcopy(answer)
    broken["response"]["body"] = broken["response"]["body"].replace(b'"sid":', b'"bogus":1,"sid":', 1)
    if not validate(document, broken)[1]:
        raise SystemExit("self-test: an answer with an undocumented field was not refused")
    request = next(r for r in records if r["request"]["method"] == "POST" and r["request"]["body"])
    broken = copy.deepcopy(request)
    broken["request"]["body"] = broken["request"]["body"] + b"&Colour=red"
    if not validate(document, broken)[0]:
        raise SystemExit("self-test: a request with an undocumented field was not refused")
    print("self-test: the validator refuses an undocumented answer field and an undocumented form field")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--specs", default=os.path.join(sandbox_gateway.ROOT, "..", "shared", "specs"))
    parser.add_argument("--binary", help="the gateway binary (default: swift build --product gateway)")
    args = parser.parse_args()
    document = load_document(args.specs)
    binary = args.binary or sandbox_gateway.build()
    scratch = tempfile.mkdtemp(prefix="twilio-compat-")
    config = os.path.join(scratch, "gateway.yaml")
    with open(config, "w") as f:
        f.write(CONFIG)
    os.environ["TWILIO_FRONT_KEY"] = SECRET
    process, base = sandbox_gateway.start(binary, os.path.join(scratch, "data"), extra=["--config", config],
                                          log_path=os.path.join(scratch, "gateway.log"))
    recorder = wire_check.Recorder(int(urllib.parse.urlsplit(base).port))
    proxy = wire_check.make_proxy(recorder)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        drive(base, f"http://127.0.0.1:{proxy.server_address[1]}")
    except BaseException:
        print(f"failed; kept {scratch} (the gateway's configuration and log)")
        raise
    finally:
        proxy.shutdown()
        process.terminate()
        process.wait(timeout=60)

    failures, seen = 0, set()
    for record in recorder.records:
        request_problems, answer_problems, allowed = validate(document, record)
        request = record["request"]
        name = f"{request['method']} {request['path']} -> {record['response']['status']}"
        operation, _ = document.find(request["method"], request["path"][len(PREFIX):])
        if operation is not None:
            seen.add(operation.name)
        for problem in request_problems:
            failures += 1
            print(f"INVALID REQUEST {name}: {problem}")
        for problem in answer_problems:
            failures += 1
            print(f"INVALID ANSWER {name}: {problem}")
    wanted = {"POST /v2/Services/{ServiceSid}/Verifications", "GET /v2/Services/{ServiceSid}/Verifications/{Sid}",
              "POST /v2/Services/{ServiceSid}/Verifications/{Sid}", "POST /v2/Services/{ServiceSid}/VerificationCheck",
              "GET /v2/Services/{Sid}"}
    if not wanted <= seen:
        failures += 1
        print(f"operations never exercised: {', '.join(sorted(wanted - seen))}")
    print(f"{len(recorder.records)} requests and answers validated against twilio_verify_v2.yaml: "
          f"{failures} problems")
    self_test(document, recorder.records)
    if failures:
        print(f"kept {scratch} (the gateway's configuration and log)")
        return 1
    shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
