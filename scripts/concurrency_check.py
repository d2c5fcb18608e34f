#!/usr/bin/env python3
"""Many clients, one verification: the answers must be true (issue 17).

    scripts/concurrency_check.py                      # 1000 double submits per vendor, 200 of each race
    scripts/concurrency_check.py --tries 100 --races 50

Against a sandbox gateway it starts itself (Twilio and Firebase emulators over real HTTP), for each vendor:
- double submit: two checks with the right code at once. Exactly one answers `200 approved`, the other
  `409 already_approved`, and the verification ends approved.
- check against cancel: a right code and a cancel at once. Either the check approved (`200`) and the
  cancel answers `already_approved`, or the cancel won (`200 canceled`) and the check answers `canceled`;
  the stored status agrees with the winner.
- resend against check: the check approves (the code stays valid across a resend); the resend answers
  `200` or `already_approved`; the verification ends approved.
Each pair is released at once from a barrier. Any other combination fails the run (exit 1). Stdlib only.
"""
import argparse, collections, concurrent.futures, os, shutil, sys, tempfile, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_gateway as gw

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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tries", type=int, default=1000, help="double submits per vendor")
    parser.add_argument("--races", type=int, default=200, help="check/cancel and resend/check races per vendor")
    parser.add_argument("--parallel", type=int, default=6, help="tries in flight at once")
    args = parser.parse_args()
    binary = gw.build()
    directory = tempfile.mkdtemp(prefix="gateway-concurrency-")
    process, base = gw.start(binary, os.path.join(directory, "data"), log_path=os.path.join(directory, "gateway.log"))
    failures = []
    began = time.monotonic()
    try:
        scenarios = [("double submit", double_submit, args.tries), ("check against cancel", check_against_cancel, args.races),
                     ("resend against check", resend_against_check, args.races)]
        offset = 0
        for vendor_index, vendor in enumerate(["twilio", "firebase"]):
            for name, scenario, count in scenarios:
                tally = collections.Counter()
                with concurrent.futures.ThreadPoolExecutor(args.parallel) as pool:
                    # A fresh UK mobile per try: the emulators limit sends per number.
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
