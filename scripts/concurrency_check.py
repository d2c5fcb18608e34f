#!/usr/bin/env python3
"""Many clients, one verification: the answers must be true (issue 17).

    scripts/concurrency_check.py                      # 1000 double submits per vendor, 200 of each race
    scripts/concurrency_check.py --tries 100 --races 50
    scripts/concurrency_check.py --vendors idaas --races 200   # one vendor's scenarios only

Against a sandbox gateway it starts itself on a free loopback port (Twilio and Firebase emulators over real
HTTP), for each vendor (`twilio_messaging`: the gateway's own codes, checked by the gateway itself):
- double submit: two checks with the right code at once. Exactly one answers `200 approved`, the other
  `409 already_approved`, and the verification ends approved.
- check against cancel: a right code and a cancel at once. Either the check approved (`200`) and the
  cancel answers `already_approved`, or the cancel won (`200 canceled`) and the check answers `canceled`;
  the stored status agrees with the winner.
- resend against check: the check approves (the code stays valid across a resend); the resend answers
  `200` or `already_approved`; the verification ends approved.
And for IDaaS (its emulator over real HTTP; each slider solved from its own images, as an app would):
- lockout: eight wrong codes at once on one verification. IDaaS locks the user at its fifth wrong code in a
  row: exactly four answer `422 incorrect_code`, the other four `403 account_locked`; the verification ends
  `denied` with `status_reason: account_locked` after exactly five vendor checks, and a later check answers
  `403 account_locked` without calling IDaaS.
- wrong code against right code: the right one approves; the wrong one answers `422 incorrect_code` (it ran
  first, and both attempts are counted) or `409 already_approved` (one attempt counted).
- resend against check: the delivered code approves whether or not the resend's slider is open; the resend
  answers `200` (a new slider, nothing sent) or `already_approved`.
- resend, then the delivered code: the code sent before the resend still approves.
Each pair is released at once from a barrier. Any other combination fails the run (exit 1). Stdlib only.
"""
import argparse, collections, concurrent.futures, os, shutil, sys, tempfile, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_gateway as gw
from idaas_walkthrough import solve_slider

PROOF = {"type": "recaptcha", "token": "concurrency-check"}


def together(first, second):
    """Runs two calls released at the same instant; returns their results."""
    barrier = threading.Barrier(2)
    results = [None, None]

    def run(index, fn):
        barrier.wait()
        results[index] = fn()

    threads = [threading.Thread(target=run, args=(0, first)), threading.Thread(target=run, args=(1, second))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def released(calls):
    """Runs the calls released at the same instant; returns their results in order."""
    barrier = threading.Barrier(len(calls))
    results = [None] * len(calls)

    def run(index, fn):
        barrier.wait()
        results[index] = fn()

    threads = [threading.Thread(target=run, args=(i, fn)) for i, fn in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def started(base, vendor, to):
    body = {"to": to, "provider": vendor}
    if vendor == "firebase":
        body["app_verification"] = PROOF
    status, verification = gw.call(base, "POST", "/v1/verifications", body)
    if status != 201:
        raise RuntimeError(f"start {vendor}: {status} {verification}")
    code = gw.code_for(base, to)
    return verification["id"], code


def outcome(result):
    status, body = result
    return f"{status} {body.get('status') or body.get('error', {}).get('code')}"


def double_submit(base, vendor, to):
    vid, code = started(base, vendor, to)
    check = lambda: gw.call(base, "POST", f"/v1/verifications/{vid}/check", {"code": code})
    answers = sorted(outcome(r) for r in together(check, check))
    final = gw.call(base, "GET", f"/v1/verifications/{vid}")[1].get("status")
    ok = answers == ["200 approved", "409 already_approved"] and final == "approved"
    return ok, f"{answers} -> {final}"


def check_against_cancel(base, vendor, to):
    vid, code = started(base, vendor, to)
    check, cancel = together(
        lambda: gw.call(base, "POST", f"/v1/verifications/{vid}/check", {"code": code}),
        lambda: gw.call(base, "POST", f"/v1/verifications/{vid}/cancel", {}))
    final = gw.call(base, "GET", f"/v1/verifications/{vid}")[1].get("status")
    pair = (outcome(check), outcome(cancel), final)
    ok = pair in [("200 approved", "409 already_approved", "approved"), ("409 canceled", "200 canceled", "canceled")]
    return ok, str(pair)


def resend_against_check(base, vendor, to):
    vid, code = started(base, vendor, to)
    check, resend = together(
        lambda: gw.call(base, "POST", f"/v1/verifications/{vid}/check", {"code": code}),
        lambda: gw.call(base, "POST", f"/v1/verifications/{vid}/resend", {}))
    final = gw.call(base, "GET", f"/v1/verifications/{vid}")[1].get("status")
    pair = (outcome(check), outcome(resend), final)
    ok = pair[0] == "200 approved" and pair[1].split(" ")[0] in ("200", "409") and final == "approved"
    if pair[1].startswith("409") and not pair[1].endswith("already_approved"):
        ok = False
    return ok, str(pair)


# IDaaS: a slider before every SMS. Its emulator locks a user after this many wrong codes in a row, the
# gateway's default attempt limit too.
IDAAS_LOCK_AFTER = 5
WRONG_AT_ONCE = 8


def idaas_solve(base, vid, challenge):
    """Answers the slider from its images; a rare miss answers a fresh slider, which is tried in turn."""
    for _ in range(4):
        data = challenge["data"]
        x = solve_slider(data["background_png_base64"], data["piece_png_base64"])
        status, body = gw.call(base, "POST", f"/v1/verifications/{vid}/challenge", {"answer": {"x": x}})
        if status == 200:
            return body
        challenge = body.get("error", {}).get("next_action", {}).get("solve_challenge")
        if status != 403 or not challenge:
            raise RuntimeError(f"challenge: {status} {body}")
    raise RuntimeError("four sliders in a row not solved")


def idaas_started(base, to):
    status, verification = gw.call(base, "POST", "/v1/verifications", {"to": to, "provider": "idaas"})
    if status != 201 or verification.get("next_action", {}).get("type") != "solve_challenge":
        raise RuntimeError(f"start idaas: {status} {verification}")
    vid = verification["id"]
    idaas_solve(base, vid, verification["next_action"]["solve_challenge"])
    return vid, gw.code_for(base, to)


def other_code(code):
    return "000000" if code != "000000" else "111111"


def timeline(base, vid):
    """(status, status_reason, attempts_remaining, vendor checks) of the stored verification."""
    body = gw.call(base, "GET", f"/v1/verifications/{vid}?include=timeline")[1]
    calls = sum(1 for event in body.get("timeline", [])
                if event["kind"] == "provider_call" and event["detail"].get("operation") == "check")
    return body.get("status"), body.get("status_reason"), body.get("attempts_remaining"), calls


def idaas_lockout(base, _vendor, to):
    vid, code = idaas_started(base, to)
    wrong = other_code(code)
    check = lambda: gw.call(base, "POST", f"/v1/verifications/{vid}/check", {"code": wrong})
    answers = collections.Counter(outcome(r) for r in released([check] * WRONG_AT_ONCE))
    status, reason, _, calls = timeline(base, vid)
    later = outcome(check())
    calls_after = timeline(base, vid)[3]
    ok = (answers == {"422 incorrect_code": IDAAS_LOCK_AFTER - 1,
                      "403 account_locked": WRONG_AT_ONCE - IDAAS_LOCK_AFTER + 1}
          and (status, reason) == ("denied", "account_locked") and calls == IDAAS_LOCK_AFTER
          and later == "403 account_locked" and calls_after == calls)
    return ok, f"{sorted(answers.items())} -> {status}/{reason}, {calls} vendor checks, then {later}"


def idaas_wrong_against_right(base, _vendor, to):
    vid, code = idaas_started(base, to)
    wrong, right = together(
        lambda: gw.call(base, "POST", f"/v1/verifications/{vid}/check", {"code": other_code(code)}),
        lambda: gw.call(base, "POST", f"/v1/verifications/{vid}/check", {"code": code}))
    status, _, remaining, _ = timeline(base, vid)
    pair = (outcome(wrong), outcome(right), status, remaining)
    ok = pair in [("422 incorrect_code", "200 approved", "approved", IDAAS_LOCK_AFTER - 2),
                  ("409 already_approved", "200 approved", "approved", IDAAS_LOCK_AFTER - 1)]
    return ok, str(pair)


def idaas_resend_against_check(base, _vendor, to):
    vid, code = idaas_started(base, to)
    check, resend = together(
        lambda: gw.call(base, "POST", f"/v1/verifications/{vid}/check", {"code": code}),
        lambda: gw.call(base, "POST", f"/v1/verifications/{vid}/resend", {}))
    final = timeline(base, vid)[0]
    pair = (outcome(check), outcome(resend), final)
    ok = pair in [("200 approved", "200 pending", "approved"), ("200 approved", "409 already_approved", "approved")]
    return ok, str(pair)


def idaas_resend_then_code(base, _vendor, to):
    vid, code = idaas_started(base, to)
    resend = gw.call(base, "POST", f"/v1/verifications/{vid}/resend", {})
    check = gw.call(base, "POST", f"/v1/verifications/{vid}/check", {"code": code})
    slider = resend[1].get("next_action", {}).get("type")
    result = (outcome(resend), slider, outcome(check), resend[1].get("sends"))
    return result == ("200 pending", "solve_challenge", "200 approved", 1), str(result)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tries", type=int, default=1000, help="double submits per vendor")
    parser.add_argument("--races", type=int, default=200, help="check/cancel and resend/check races per vendor")
    parser.add_argument("--parallel", type=int, default=6, help="tries in flight at once")
    parser.add_argument("--vendors", default="twilio,firebase,idaas,twilio_messaging",
                        help="comma-separated vendors to run")
    args = parser.parse_args()
    binary = gw.build()
    directory = tempfile.mkdtemp(prefix="gateway-concurrency-")
    process, base = gw.start(binary, os.path.join(directory, "data"), log_path=os.path.join(directory, "gateway.log"))
    failures = []
    began = time.monotonic()
    try:
        scenarios = [("double submit", double_submit, args.tries), ("check against cancel", check_against_cancel, args.races),
                     ("resend against check", resend_against_check, args.races)]
        idaas = [("lockout", idaas_lockout, args.races), ("wrong against right", idaas_wrong_against_right, args.races),
                 ("resend against check", idaas_resend_against_check, args.races),
                 ("resend then the code", idaas_resend_then_code, args.races)]
        offset = 0
        for vendor_index, vendor in enumerate(["twilio", "firebase", "idaas", "twilio_messaging"]):
            if vendor not in args.vendors.split(","):
                continue
            for name, scenario, count in (idaas if vendor == "idaas" else scenarios):
                tally = collections.Counter()
                with concurrent.futures.ThreadPoolExecutor(args.parallel) as pool:
                    # A fresh mobile per try: the emulators limit sends per number, and IDaaS locks a user
                    # (+86137…: clear of the IDaaS sandbox's special +86139000000xx numbers).
                    if vendor == "idaas":
                        numbers = [f"+86137{(offset + i):08d}" for i in range(count)]
                    else:
                        numbers = [f"+4475{vendor_index}{(offset + i):07d}" for i in range(count)]
                    offset += count
                    for ok, detail in pool.map(lambda to: scenario(base, vendor, to), numbers):
                        tally[detail] += 1
                        if not ok:
                            failures.append(f"{vendor} {name}: {detail}")
                print(f"{vendor:8} {name:22} {count:5} tries: " + ", ".join(f"{v}x {k}" for k, v in tally.most_common()))
    finally:
        process.terminate()
        process.wait(timeout=30)
    print(f"took {time.monotonic() - began:.1f} s")
    if failures:
        print(f"{len(failures)} untrue answers, first: {failures[:5]}; the gateway's log is in {directory}")
        return 1
    shutil.rmtree(directory, ignore_errors=True)
    print("concurrency check: every answer was true")
    return 0


if __name__ == "__main__":
    sys.exit(main())
