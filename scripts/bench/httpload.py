#!/usr/bin/env python3
"""The benchmark suite's own HTTP/1.1 load client (scripts/bench/run.sh calls it; see BENCHMARKS.md).

    httpload.py flow    --target gateway|django --base URL --seconds T --concurrency C --prefix +44743
    httpload.py prepare --base URL --count N --max-seconds T --concurrency C --prefix +44744 --out FILE
    httpload.py rate    --kind gateway|direct --base URL --rate R --seconds T --prefix +44745

`flow`: C users in a closed loop, each doing start -> read the code -> check the right code, for T seconds;
the same client drives the gateway (POST /v1/verifications, GET /sandbox/outbox?to=, POST .../check) and
django-phone-verify (POST /api/phone/register, GET /bench/code?phone_number=, POST /api/phone/verify).
`prepare`: start verifications and read their codes, writing `id<TAB>code<TAB>to` lines for wrk's checks.
`rate`: an open-loop load at a fixed rate (wrk2's model, wrk2 is not packaged by Debian): request i is due at
t0 + i/R whatever happened to the ones before it; latency is taken from the moment the request was written
(service time) and from the moment it was due (including any wait for a free connection).

Every run prints one `RESULT {json}` line. Load goes only where --base points (run.sh: 127.0.0.1), and every
mode stops by itself: after T seconds plus at most --drain seconds for the requests in flight.
Stdlib only; uses uvloop when it is installed (run.sh installs it), plain asyncio otherwise.
"""
import argparse
import asyncio
import base64
import json
import resource
import socket
import sys
import time
import urllib.parse

try:
    import uvloop  # noqa: F401
except ImportError:  # pragma: no cover - the suite installs it
    uvloop = None

now = time.perf_counter


class HTTPError(Exception):
    pass


class Connection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection, one request at a time."""

    def __init__(self):
        self.transport = None
        self.buffer = bytearray()
        self.waiter = None
        self.closed = False

    def connection_made(self, transport):
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def connection_lost(self, exc):
        self.closed = True
        if self.waiter and not self.waiter.done():
            # A response delimited by the close itself (no Content-Length) is complete now.
            parsed = self._parse(final=True)
            if parsed:
                self.waiter.set_result(parsed)
            else:
                self.waiter.set_exception(HTTPError("connection closed"))

    def data_received(self, data):
        self.buffer += data
        if self.waiter and not self.waiter.done():
            parsed = self._parse()
            if parsed:
                self.waiter.set_result(parsed)

    def _parse(self, final=False):
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return None
        head = bytes(self.buffer[:end]).decode("latin-1").split("\r\n")
        status = int(head[0].split(" ", 2)[1])
        length, chunked, close = None, False, False
        for line in head[1:]:
            name, _, value = line.partition(":")
            name = name.strip().lower()
            if name == "content-length":
                length = int(value.strip())
            elif name == "transfer-encoding" and "chunked" in value.lower():
                chunked = True
            elif name == "connection" and "close" in value.lower():
                close = True
        start = end + 4
        if chunked:
            body, pos = bytearray(), start
            while True:
                line_end = self.buffer.find(b"\r\n", pos)
                if line_end < 0:
                    return None
                size = int(bytes(self.buffer[pos:line_end]).split(b";")[0], 16)
                if size == 0:  # last chunk, then (no trailers) an empty line
                    consumed = line_end + 4
                    if len(self.buffer) < consumed:
                        return None
                    break
                if len(self.buffer) < line_end + 2 + size + 2:
                    return None
                body += self.buffer[line_end + 2:line_end + 2 + size]
                pos = line_end + 2 + size + 2
            del self.buffer[:consumed]
        elif length is not None:
            if len(self.buffer) < start + length:
                return None
            body = bytes(self.buffer[start:start + length])
            del self.buffer[:start + length]
        elif final or status in (204, 304):
            body = bytes(self.buffer[start:])
            del self.buffer[:]
        else:
            return None
        if close:
            self.closed = True
        return status, bytes(body), now()

    def send(self, data):
        loop = asyncio.get_running_loop()
        self.waiter = loop.create_future()
        self.transport.write(data)
        return self.waiter


class Client:
    """A pool-less client for one user: reconnects when the server closed the connection."""

    def __init__(self, host, port):
        self.host, self.port = host, port
        self.connection = None

    async def connect(self):
        loop = asyncio.get_running_loop()
        _, self.connection = await loop.create_connection(Connection, self.host, self.port)

    async def request(self, data, timeout=30.0):
        if self.connection is None or self.connection.closed:
            await self.connect()
        sent = now()
        try:
            status, body, done = await asyncio.wait_for(self.connection.send(data), timeout)
        except Exception:
            if self.connection and self.connection.transport:
                self.connection.transport.close()
            self.connection = None
            raise
        if self.connection.closed:
            self.connection.transport.close()
            self.connection = None
        return status, body, done - sent

    def close(self):
        if self.connection and self.connection.transport:
            self.connection.transport.close()


def build(method, host, path, body=None, content_type="application/json", headers=()):
    lines = ["%s %s HTTP/1.1" % (method, path), "Host: %s" % host]
    lines += list(headers)
    if body is not None:
        lines += ["Content-Type: %s" % content_type, "Content-Length: %d" % len(body)]
    data = ("\r\n".join(lines) + "\r\n\r\n").encode()
    return data + body if body is not None else data


def percentile(sorted_values, p):
    if not sorted_values:
        return None
    index = min(len(sorted_values) - 1, max(0, int(round(p / 100.0 * len(sorted_values) + 0.5)) - 1))
    return sorted_values[index]


def summary(latencies):
    values = sorted(latencies)
    return {
        "count": len(values),
        "p50_ms": percentile(values, 50) and percentile(values, 50) * 1000,
        "p90_ms": percentile(values, 90) and percentile(values, 90) * 1000,
        "p99_ms": percentile(values, 99) and percentile(values, 99) * 1000,
        "p999_ms": percentile(values, 99.9) and percentile(values, 99.9) * 1000,
        "max_ms": values[-1] * 1000 if values else None,
        "mean_ms": sum(values) / len(values) * 1000 if values else None,
    }


class Numbers:
    """Distinct valid numbers: PREFIX followed by a zero-padded counter (run.sh gives each phase its own
    prefix, so no number is started twice: the Twilio emulator limits sends per number)."""

    def __init__(self, prefix, digits, start=0):
        self.prefix, self.digits, self.next = prefix, digits, start

    def take(self):
        value = "%s%0*d" % (self.prefix, self.digits, self.next)
        self.next += 1
        return value


class GatewayTarget:
    def __init__(self, host, key):
        self.host = host
        self.auth = "Authorization: Bearer %s" % key

    def start(self, to):
        body = json.dumps({"to": to, "channel": "sms", "provider": "twilio"}).encode()
        return build("POST", self.host, "/v1/verifications", body, headers=[self.auth])

    def started(self, status, body, to):
        if status != 201:
            return None
        return json.loads(body)["id"]

    def read(self, to, started):
        return build("GET", self.host, "/sandbox/outbox?to=" + urllib.parse.quote(to))

    def code(self, status, body):
        if status != 200:
            return None
        messages = json.loads(body).get("messages", [])
        return messages[-1]["code"] if messages else None

    def check(self, to, started, code):
        body = json.dumps({"code": code}).encode()
        return build("POST", self.host, "/v1/verifications/%s/check" % started, body, headers=[self.auth])

    def checked(self, status, body):
        return status == 200 and json.loads(body).get("status") == "approved"


class DjangoTarget:
    """django-phone-verify's own API; the code is read from its table by a one-line view of the bench
    project (its sending backend sends nothing), as the gateway's is read from the sandbox outbox."""

    def __init__(self, host):
        self.host = host

    def start(self, to):
        return build("POST", self.host, "/api/phone/register", json.dumps({"phone_number": to}).encode())

    def started(self, status, body, to):
        if status != 200:
            return None
        return json.loads(body)["session_token"]

    def read(self, to, started):
        return build("GET", self.host, "/bench/code?phone_number=" + urllib.parse.quote(to))

    def code(self, status, body):
        if status != 200:
            return None
        return json.loads(body).get("code")

    def check(self, to, started, code):
        body = json.dumps({"phone_number": to, "session_token": started, "security_code": code}).encode()
        return build("POST", self.host, "/api/phone/verify", body)

    def checked(self, status, body):
        return status == 200


def split_base(base):
    parsed = urllib.parse.urlsplit(base)
    if parsed.hostname not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit("httpload.py only loads the loopback interface, not %s" % parsed.hostname)
    return parsed.hostname, parsed.port or 80, "%s:%d" % (parsed.hostname, parsed.port or 80)


def process_cpu_seconds():
    """User + system CPU time this process has used so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def run_flow(args):
    host, port, host_header = split_base(args.base)
    target = GatewayTarget(host_header, args.key) if args.target == "gateway" else DjangoTarget(host_header)
    numbers = Numbers(args.prefix, args.digits)
    steps = {"start": [], "read": [], "check": []}
    flows, failures = [], {}
    deadline = now() + args.seconds

    def fail(step, what):
        key = "%s:%s" % (step, what)
        failures[key] = failures.get(key, 0) + 1

    async def user():
        client = Client(host, port)
        try:
            while now() < deadline:
                to = numbers.take()
                began = now()
                try:
                    status, body, took = await client.request(target.start(to))
                    steps["start"].append(took)
                    started = target.started(status, body, to)
                    if started is None:
                        fail("start", status)
                        continue
                    status, body, took = await client.request(target.read(to, started))
                    steps["read"].append(took)
                    code = target.code(status, body)
                    if code is None:
                        fail("read", status)
                        continue
                    status, body, took = await client.request(target.check(to, started, code))
                    steps["check"].append(took)
                    if not target.checked(status, body):
                        fail("check", status)
                        continue
                    flows.append(now() - began)
                except (HTTPError, OSError, asyncio.TimeoutError) as error:
                    fail("transport", type(error).__name__)
        finally:
            client.close()

    began, cpu_began = now(), process_cpu_seconds()
    await asyncio.wait_for(asyncio.gather(*(user() for _ in range(args.concurrency))),
                           args.seconds + args.drain)
    elapsed = now() - began
    result = {
        "mode": "flow", "target": args.target, "seconds": elapsed, "concurrency": args.concurrency,
        # The client's own CPU: it shares the machine's cores with the server it loads.
        "client_cpu_s": process_cpu_seconds() - cpu_began,
        "flows": len(flows), "flows_per_s": len(flows) / elapsed,
        "requests_per_s": sum(len(v) for v in steps.values()) / elapsed,
        "flow": summary(flows), "steps": {name: summary(v) for name, v in steps.items()},
        "failures": failures, "numbers_used": numbers.next,
    }
    print("RESULT " + json.dumps(result))


async def run_prepare(args):
    host, port, host_header = split_base(args.base)
    target = GatewayTarget(host_header, args.key)
    numbers = Numbers(args.prefix, args.digits)
    rows, failures = [], {}
    deadline = now() + args.max_seconds

    async def user():
        client = Client(host, port)
        try:
            while len(rows) < args.count and now() < deadline:
                to = numbers.take()
                try:
                    status, body, _ = await client.request(target.start(to))
                    started = target.started(status, body, to)
                    if started is None:
                        failures["start:%s" % status] = failures.get("start:%s" % status, 0) + 1
                        continue
                    status, body, _ = await client.request(target.read(to, started))
                    code = target.code(status, body)
                    if code is None:
                        failures["read:%s" % status] = failures.get("read:%s" % status, 0) + 1
                        continue
                    rows.append((started, code, to))
                except (HTTPError, OSError, asyncio.TimeoutError) as error:
                    key = "transport:" + type(error).__name__
                    failures[key] = failures.get(key, 0) + 1
        finally:
            client.close()

    began = now()
    await asyncio.wait_for(asyncio.gather(*(user() for _ in range(args.concurrency))),
                           args.max_seconds + args.drain)
    with open(args.out, "w") as out:
        for started, code, to in rows:
            out.write("%s\t%s\t%s\n" % (started, code, to))
    print("RESULT " + json.dumps({"mode": "prepare", "prepared": len(rows), "seconds": now() - began,
                                  "failures": failures, "numbers_used": numbers.next}))


async def run_rate(args):
    host, port, host_header = split_base(args.base)
    numbers = Numbers(args.prefix, args.digits)
    if args.kind == "gateway":
        gateway = GatewayTarget(host_header, args.key)
        make, ok = gateway.start, (lambda status: status == 201)
    else:
        credentials = base64.b64encode(("%s:%s" % (args.account_sid, args.auth_token)).encode()).decode()
        path = "/sandbox/twilio/v2/Services/%s/Verifications" % args.service_sid

        def make(to):
            body = urllib.parse.urlencode({"To": to, "Channel": "sms"}).encode()
            return build("POST", host_header, path, body, "application/x-www-form-urlencoded",
                         headers=["Authorization: Basic %s" % credentials])

        def ok(status):
            return status == 201

    loop = asyncio.get_running_loop()
    idle, every = [], []
    for _ in range(args.connections):
        _, connection = await loop.create_connection(Connection, host, port)
        idle.append(connection)
        every.append(connection)
    total = int(args.rate * args.seconds)
    warmup = int(args.rate * args.warmup)
    service, corrected, failures = [], [], {}
    waiting = asyncio.Queue()
    for connection in idle:
        waiting.put_nowait(connection)
    opened = [len(idle)]
    pending = set()

    async def one(index, due):
        # Wait for a free connection (opening more up to --max-connections), then send.
        try:
            connection = waiting.get_nowait()
        except asyncio.QueueEmpty:
            if opened[0] < args.max_connections:
                opened[0] += 1
                _, connection = await loop.create_connection(Connection, host, port)
                every.append(connection)
            else:
                connection = await waiting.get()
        data = make(numbers.take())
        sent = now()
        try:
            status, _, done = await asyncio.wait_for(connection.send(data), args.timeout)
        except (HTTPError, OSError, asyncio.TimeoutError) as error:
            failures[type(error).__name__] = failures.get(type(error).__name__, 0) + 1
            connection.transport.close()
            opened[0] -= 1
            return
        if connection.closed:
            connection.transport.close()
            opened[0] -= 1
        else:
            waiting.put_nowait(connection)
        if not ok(status):
            failures[str(status)] = failures.get(str(status), 0) + 1
        if index >= warmup:
            service.append(done - sent)
            corrected.append(done - due)

    start = now() + 0.05
    for index in range(warmup + total):
        due = start + index / args.rate
        delay = due - now()
        if delay > 0:
            await asyncio.sleep(delay)
        task = loop.create_task(one(index, due))
        pending.add(task)
        task.add_done_callback(pending.discard)
    sending_done = now()
    if pending:
        await asyncio.wait(list(pending), timeout=args.drain)
    for task in list(pending):
        task.cancel()
    for connection in every:  # whatever is still queued at the server goes with its connection
        if connection.transport is not None:
            connection.transport.close()
    measured = (sending_done - start) * total / max(1, warmup + total)
    result = {
        "mode": "rate", "kind": args.kind, "rate": args.rate, "seconds": args.seconds, "warmup_s": args.warmup,
        "sent": total, "completed": len(service), "achieved_per_s": len(service) / max(measured, 1e-9),
        "service": summary(service), "from_due": summary(corrected), "failures": failures,
        "connections": opened[0], "unfinished": len(pending),
    }
    print("RESULT " + json.dumps(result))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["flow", "prepare", "rate"])
    parser.add_argument("--base", required=True)
    parser.add_argument("--target", choices=["gateway", "django"], default="gateway")
    parser.add_argument("--kind", choices=["gateway", "direct"], default="gateway")
    parser.add_argument("--key", default="")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--drain", type=float, default=15.0)
    parser.add_argument("--timeout", type=float, default=15.0)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--max-connections", type=int, default=256)
    parser.add_argument("--rate", type=float, default=1000)
    parser.add_argument("--count", type=int, default=10000)
    parser.add_argument("--max-seconds", type=float, default=60)
    parser.add_argument("--prefix", default="+44743")
    parser.add_argument("--digits", type=int, default=7)
    parser.add_argument("--out", default="prepared.tsv")
    parser.add_argument("--account-sid", default="")
    parser.add_argument("--auth-token", default="")
    parser.add_argument("--service-sid", default="")
    args = parser.parse_args()
    runner = {"flow": run_flow, "prepare": run_prepare, "rate": run_rate}[args.mode]
    if uvloop is not None:
        uvloop.run(runner(args))
    else:
        asyncio.run(runner(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
