"""Shared by the live checks: start a sandbox gateway on a free loopback port, and call its API.

Stdlib only. The gateway binary is built once with `swift build --product gateway`.
"""
import json, os, random, socket, subprocess, time
import urllib.error, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEY = "sk_sandbox_live_checks_0001"


def call(base, method, path, body=None, key=KEY, timeout=30):
    """Returns (status, parsed JSON body or {})."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method)
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
            return response.status, json.loads(raw) if raw else {}
    except urllib.error.HTTPError as error:
        raw = error.read()
        try:
            return error.code, json.loads(raw) if raw else {}
        except ValueError:
            return error.code, {"raw": raw.decode(errors="replace")}


_handed_out = set()


def free_port():
    """A loopback port for a server started next, from below the kernel's ephemeral range.

    A port from bind(0) is an ephemeral one, and any outbound connection may take it as its local port before the
    server binds it (the Swift suite's live servers failed so once, and LoopbackPort.swift does the same as this).
    Ports below the range are never handed out by the kernel on its own; each is tried with a real bind first,
    and none is returned twice by one process."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low, high = map(int, f.read().split())
    except (OSError, ValueError):
        low, high = 32768, 60999
    if low > 12000:
        first, last = 10000, low - 1
    else:
        first, last = (high + 1, 65535) if high < 63000 else (1024, 65535)
    for _ in range(2000):
        port = random.randint(first, last)
        if port in _handed_out:
            continue
        _handed_out.add(port)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise RuntimeError("no free loopback port in %d-%d" % (first, last))


def build():
    built = subprocess.run(["swift", "build", "--product", "gateway"], cwd=ROOT, capture_output=True, text=True)
    if built.returncode != 0:
        raise SystemExit("swift build failed:\n" + built.stdout + built.stderr)
    return os.path.join(ROOT, ".build", "debug", "gateway")


def start(binary, data_dir, port=None, extra=(), log_path=None):
    """Starts the sandbox gateway and waits for /healthz; returns (process, base URL)."""
    port = port or free_port()
    env = dict(os.environ, GATEWAY_SANDBOX_API_KEY=KEY)
    log = open(log_path or os.path.join(data_dir + ".log"), "a")
    process = subprocess.Popen(
        [binary, "--port", str(port), "--data-dir", data_dir, "--log-level", "warning", *extra],
        cwd=ROOT, env=env, stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if call(base, "GET", "/healthz", key=None, timeout=2)[0] == 200:
                return process, base
        except OSError:
            pass
        if process.poll() is not None:
            raise SystemExit(f"gateway exited with {process.returncode}; see {log.name}")
        time.sleep(0.05)
    process.kill()
    raise SystemExit("gateway did not start")


def code_for(base, to):
    """The newest code the sandbox sent to `to`."""
    import urllib.parse
    _, outbox = call(base, "GET", "/sandbox/outbox?to=" + urllib.parse.quote(to), key=None)
    messages = outbox.get("messages", [])
    return messages[-1]["code"] if messages else None


def stop(process):
    """Stops a gateway started by `start`: SIGTERM, then SIGKILL after 20 s."""
    process.terminate()
    try:
        process.wait(timeout=20)
    except Exception:
        process.kill()


def wait_for(condition, seconds=60):
    """Polls `condition` every 0.1 s until it holds (True) or `seconds` pass (False)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def finish(name, failures, work):
    """Removes the scratch directory (kept when a check failed), prints the verdict; the exit status."""
    import shutil
    if failures:
        print(f"kept {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{name}: " + ("FAILED" if failures else "passed"))
    return 1 if failures else 0


class Checks:
    """Prints each check as `ok` or `FAIL` and keeps the failed ones: `checks(condition, message)`."""

    def __init__(self):
        self.failures = []

    def __call__(self, condition, message):
        print(("ok    " if condition else "FAIL  ") + message, flush=True)
        if not condition:
            self.failures.append(message)


if __name__ == "__main__":
    # `python3 scripts/sandbox_gateway.py free-port`, for shell scripts.
    import sys

    if sys.argv[1:] == ["free-port"]:
        print(free_port())
