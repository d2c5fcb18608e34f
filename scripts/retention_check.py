#!/usr/bin/env python3
"""Issue 48: retention as an operator sees it, on a sandbox gateway's SQLite store.

    swift build --product gateway
    python3 scripts/retention_check.py [--gateway .build/debug/gateway]

A gateway with `retention: {verifications: 30d, events: 14d, anonymize_after: 7d, anonymize_key_env: …}` starts
verifications through the sandbox (one approved with its code) and is stopped; their creation times are then moved
back in the store (40, 20 and 10 days, and one left as it is), as if that much time had passed. `gateway retention
--config … --data-dir …` applies the configuration at once and prints what it did. The gateway started again
answers: the 40-day-old verification is gone (404); the 20-day-old one is there with an empty timeline and a
masked `to`; the 10-day-old one is there with its timeline and a masked `to`; the new one is untouched; the
store holds none of the three old numbers in clear; the admin lookup by number still finds the anonymized ones
(by the number's keyed hash). A second run finds nothing left to do. Stdlib only; prints `retention check: passed`.
"""
import argparse, os, re, sqlite3, subprocess, sys, tempfile, time, urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sandbox_gateway import Checks, ROOT, call, code_for, finish, start, stop  # noqa: E402

DAY = 86_400
KEY = "retention-check-key-0123456789abcdef0123"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gateway", default=os.path.join(ROOT, ".build", "debug", "gateway"))
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="gateway-retention-check-")
    data = os.path.join(work, "data")
    config = os.path.join(work, "gateway.yaml")
    with open(config, "w") as handle:
        handle.write("sandbox: true\nretention:\n  verifications: 30d\n  events: 14d\n  anonymize_after: 7d\n"
                     "  anonymize_key_env: RETENTION_CHECK_KEY\n")
    os.environ["RETENTION_CHECK_KEY"] = KEY
    checks = Checks()
    ages = {"old": 40, "middle": 20, "recent": 10, "new": 0}
    numbers = {name: "+4474009%05d" % (index + 1) for index, name in enumerate(ages)}
    ids = {}
    process, base = start(args.gateway, data, extra=["--config", config], log_path=os.path.join(work, "gateway.log"))
    try:
        for name, number in numbers.items():
            status, body = call(base, "POST", "/v1/verifications", {"to": number, "channel": "sms", "provider": "twilio"})
            checks(status == 201, f"start {name}: 201 (got {status})")
            ids[name] = body.get("id")
        code = code_for(base, numbers["middle"])
        status, body = call(base, "POST", f"/v1/verifications/{ids['middle']}/check", {"code": code})
        checks(status == 200 and body.get("status") == "approved", "the middle one approved with its code")
    finally:
        stop(process)

    # Time passes: the creation (and expiry, update) times move back by each one's age.
    database = sqlite3.connect(os.path.join(data, "gateway.sqlite"))
    for name, days in ages.items():
        shift = days * DAY
        database.execute("UPDATE verifications SET created_at = created_at - ?, updated_at = updated_at - ?,"
                         " expires_at = expires_at - ? WHERE id = ?", (shift, shift, shift, ids[name]))
    database.commit()
    events_before = {name: database.execute("SELECT count(*) FROM verification_events WHERE verification_id = ?",
                                            (ids[name],)).fetchone()[0] for name in ages}
    database.close()

    run = subprocess.run([args.gateway, "retention", "--config", config, "--data-dir", data],
                         capture_output=True, text=True, timeout=300)
    print("gateway retention: " + (run.stdout.strip() or run.stderr.strip()))
    checks(run.returncode == 0, f"gateway retention exits 0 (got {run.returncode})")
    match = re.search(r"deleted (\d+) verifications, (\d+) events .* anonymized (\d+);", run.stdout)
    checks(match is not None and match.group(1) == "1", "it deleted the 40-day-old verification")
    checks(match is not None and int(match.group(2)) == events_before["old"] + events_before["middle"],
           f"and the events of the 40- and 20-day-old ones ({events_before['old']} + {events_before['middle']})")
    checks(match is not None and match.group(3) == "2", "and anonymized the 20- and 10-day-old ones")

    database = sqlite3.connect(os.path.join(data, "gateway.sqlite"))
    stored = " ".join(str(row) for row in database.execute("SELECT * FROM verifications"))
    database.close()
    for name in ("old", "middle", "recent"):
        checks(numbers[name] not in stored and numbers[name][1:] not in stored,
               f"the store holds no {name} number in clear")
    checks(numbers["new"] in stored, "the new verification keeps its number")

    process, base = start(args.gateway, data, extra=["--config", config], log_path=os.path.join(work, "gateway.log"))
    try:
        status, _ = call(base, "GET", f"/v1/verifications/{ids['old']}")
        checks(status == 404, f"the 40-day-old verification answers 404 (got {status})")
        for name in ("middle", "recent"):
            status, body = call(base, "GET", f"/v1/verifications/{ids[name]}")
            to = body.get("to", "")
            checks(status == 200 and "*" in to and to.startswith(numbers[name][:5]) and to != numbers[name],
                   f"the {ages[name]}-day-old verification answers 200 with a masked `to` ({to})")
            status, timeline = call(base, "GET", f"/v1/verifications/{ids[name]}?include=timeline")
            events = timeline.get("timeline", [])
            # The 10-day-old one was left pending: reading it now records its expiry, one event more.
            if name == "middle":
                checks(status == 200 and not events, f"its timeline is empty (got {status}, {len(events)} events)")
            else:
                checks(status == 200 and len(events) >= events_before[name],
                       f"its timeline kept its {events_before[name]} events (got {status}, {len(events)})")
            status, found = call(base, "GET", "/v1/admin/verifications?to=" + urllib.parse.quote(numbers[name]))
            listed = [item.get("id") for item in found.get("verifications", [])]
            checks(status == 200 and listed == [ids[name]], f"the admin lookup by its number finds it ({listed})")
        status, body = call(base, "GET", f"/v1/verifications/{ids['new']}")
        checks(status == 200 and body.get("to") == numbers["new"], "the new verification is untouched")
    finally:
        stop(process)

    again = subprocess.run([args.gateway, "retention", "--config", config, "--data-dir", data],
                           capture_output=True, text=True, timeout=300)
    checks(again.returncode == 0 and "deleted 0 verifications, 0 events" in again.stdout
           and "anonymized 0;" in again.stdout, f"a second run has nothing left to do ({again.stdout.strip()})")
    return finish("retention check", checks.failures, work)


if __name__ == "__main__":
    sys.exit(main())
