#!/usr/bin/env python3
"""SIGTERM during a bounded start load: no 502, exit within the grace period, every 201 kept (issue 17).

    scripts/shutdown_check.py                 # 8 rounds, 16 clients, SIGTERM 1.5 s into each round
    scripts/shutdown_check.py --rounds 3 --grace 5

Each round starts a sandbox gateway (Twilio and Firebase emulators over real HTTP on the gateway's own
port) with `--shutdown-grace`, has the clients start verifications as fast as they can, sends SIGTERM,
and keeps the clients going until the port refuses them. Every answer received must be 201 (a refused
connection after the listener closed is expected, a 5xx is not), the gateway must exit within the grace
period plus a second, and after a restart on the same data directory every verification answered 201
must be there (`GET` 200). Stdlib only; load goes to 127.0.0.1 and stops by itself.
"""
import argparse, collections, os, shutil, signal, sys, tempfile, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_gateway as gw

PROOF = {"type": "recaptcha", "token": "shutdown-check"}


def client(base, index, stop, results, lock):
    n = 0
    while not stop.is_set() and n < 2000:
        vendor = "twilio" if (index + n) % 2 == 0 else "firebase"
        to = f"+4476{index:02d}{n:06d}"
        body = {"to": to, "provider": vendor}
        if vendor == "firebase":
            body["app_verification"] = PROOF
        n += 1
        try:
            status, answer = gw.call(base, "POST", "/v1/verifications", body, timeout=30)
        except OSError:
            # The listener has closed: the gateway is gone or going. Not an answer.
            with lock:
                results["refused"] += 1
            time.sleep(0.01)
            if stop.is_set():
                return
            continue
        with lock:
            results[status] += 1
            if status == 201:
                results.setdefault("ids", []).append(answer["id"])
            elif status >= 500:
                results.setdefault("bad", []).append((status, answer.get("error", {}).get("code")))


def round_(binary, directory, args, number):
    data = os.path.join(directory, f"round{number}")
    log = os.path.join(directory, f"round{number}.log")
    process, base = gw.start(binary, data, extra=["--shutdown-grace", str(args.grace)], log_path=log)
    results = collections.Counter()
    results_lock = threading.Lock()
    stop = threading.Event()
    threads = [threading.Thread(target=client, args=(base, i, stop, results, results_lock)) for i in range(args.clients)]
    for thread in threads:
        thread.start()
    time.sleep(args.after)
    sent = time.monotonic()
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=args.grace + 5)
    except Exception:
        process.kill()
        process.wait()
    exit_seconds = time.monotonic() - sent
    stop.set()
    for thread in threads:
        thread.join()
    ids = results.pop("ids", [])
    bad = results.pop("bad", [])
    # Restart on the same data directory: every 201 must be there.
    process, base = gw.start(binary, data, log_path=log)
    missing = [vid for vid in ids if gw.call(base, "GET", f"/v1/verifications/{vid}")[0] != 200]
    process.terminate()
    process.wait(timeout=30)
    return ids, bad, missing, exit_seconds, dict(results)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--after", type=float, default=1.5, help="seconds of load before SIGTERM")
    parser.add_argument("--grace", type=float, default=5.0, help="the gateway's --shutdown-grace")
    args = parser.parse_args()
    binary = gw.build()
    directory = tempfile.mkdtemp(prefix="gateway-shutdown-")
    failures = []
    for number in range(1, args.rounds + 1):
        ids, bad, missing, exit_seconds, counts = round_(binary, directory, args, number)
        print(f"round {number}: {len(ids)} x 201, answers {counts}, exit {exit_seconds:.2f} s, "
              f"5xx {len(bad)}, missing after restart {len(missing)}")
        if bad:
            failures.append(f"round {number}: 5xx answers {bad[:5]}")
        if missing:
            failures.append(f"round {number}: {len(missing)} verifications answered 201 are missing")
        if exit_seconds > args.grace + 1:
            failures.append(f"round {number}: exit took {exit_seconds:.2f} s (grace {args.grace} s)")
        if not ids:
            failures.append(f"round {number}: no start succeeded before SIGTERM")
    if failures:
        print("shutdown check failed:\n  " + "\n  ".join(failures))
        print(f"logs in {directory}")
        return 1
    shutil.rmtree(directory, ignore_errors=True)
    print("shutdown check: no 5xx, every exit within the grace period, every 201 present after restart")
    return 0


if __name__ == "__main__":
    sys.exit(main())
