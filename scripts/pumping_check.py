#!/usr/bin/env python3
"""A scripted SMS-pumping attack against a sandbox gateway with the pumping guard on (issue 14).

    scripts/pumping_check.py

A bot starts verifications to one mobile prefix (+44 7409…) and never checks a code, while normal users on
other prefixes (+44 7401…, +44 7402…) start and check theirs. With `min_starts: 20`, the attack must be
refused (`403 destination_blocked` with Retry-After) after at most 20 starts to its prefix, the normal users
must never be refused, and `GET /v1/admin/blocks` must list the block. Stdlib only; load goes to 127.0.0.1.
"""
import os, shutil, sys, tempfile, time, urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_gateway as gw

CONFIG = """\
sandbox: true
pumping_guard: {prefix_digits: 6, window_seconds: 3600, min_starts: 20, conversion_floor: 0.3, cool_down_seconds: 3600}
"""


def main():
    binary = gw.build()
    directory = tempfile.mkdtemp(prefix="gateway-pumping-")
    config = os.path.join(directory, "gateway.yaml")
    with open(config, "w") as f:
        f.write(CONFIG)
    process, base = gw.start(
        binary, os.path.join(directory, "data"), extra=["--config", config], log_path=os.path.join(directory, "log"))
    failures = []
    attack_accepted = 0
    first_refusal = None
    normal_refused = 0
    normal_approved = 0
    try:
        for n in range(200):
            # Two normal users, each completing their verification.
            for prefix in ("+4474010", "+4474020"):
                to = f"{prefix}{n:05d}"
                status, body = gw.call(base, "POST", "/v1/verifications", {"to": to, "provider": "twilio"})
                if status != 201:
                    normal_refused += 1
                    continue
                code = gw.code_for(base, to)
                status, checked = gw.call(base, "POST", f"/v1/verifications/{body['id']}/check", {"code": code})
                normal_approved += status == 200 and checked.get("status") == "approved"
            # The bot: starts only.
            status, body = gw.call(base, "POST", "/v1/verifications", {"to": f"+4474090{n:05d}", "provider": "twilio"})
            if status == 201:
                attack_accepted += 1
            elif status == 403 and body["error"]["code"] == "destination_blocked":
                if first_refusal is None:
                    first_refusal = n + 1
                    if not body["error"].get("retry_after"):
                        failures.append("the refusal has no retry_after")
            else:
                failures.append(f"attack start {n}: unexpected {status} {body}")
        _, listed = gw.call(base, "GET", "/v1/admin/blocks")
        blocks = listed.get("blocks", [])
    finally:
        process.terminate()
        process.wait(timeout=30)
    print(f"attack: {attack_accepted} starts accepted of 200, first refused at start {first_refusal}")
    print(f"normal users: {normal_approved} approved of 400, {normal_refused} refused")
    print(f"admin blocks: {blocks}")
    if first_refusal is None or attack_accepted > 20:
        failures.append(f"the attack was not blocked within 20 starts ({attack_accepted} accepted)")
    if normal_refused or normal_approved != 400:
        failures.append("normal traffic was refused or did not complete")
    if [b.get("prefix") for b in blocks] != ["+447409"]:
        failures.append(f"the admin API does not list exactly the attacked prefix: {blocks}")
    elif not blocks[0].get("verification_id"):
        failures.append("the block names no verification whose timeline shows it")
    if failures:
        print("pumping check failed:\n  " + "\n  ".join(failures))
        print(f"the gateway's log is in {directory}")
        return 1
    shutil.rmtree(directory, ignore_errors=True)
    print("pumping check: the attack was blocked within 20 starts, normal traffic untouched")
    return 0


if __name__ == "__main__":
    sys.exit(main())
