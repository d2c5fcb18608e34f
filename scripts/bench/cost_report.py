#!/usr/bin/env python3
"""Issue 48: what each request costs the gateway, in counts that do not move and in CPU as a ratio to /healthz.

    swift build -c release --product gateway
    python3 scripts/bench/cost_report.py [--gateway .build/release/gateway] [--requests 2000] [--cpu-rounds 10]
    python3 scripts/bench/cost_report.py --gateway .build/debug/gateway --check scripts/bench/cost_budget.json

Two gateways on free loopback ports. The *vendor* gateway only serves the sandbox's emulators, in a process of
its own as a real vendor would be. The *measured* gateway runs with `LD_PRELOAD` of `alloc_count.c` (built
here with `cc`), which counts every heap allocation; its providers are the sandbox's in-process Twilio emulator
(`twilio`), the vendor gateway's Twilio Verify emulator (`twilio_remote`: the production path) and its Twilio
Messaging emulator (`messaging_remote`: the gateway's own code, without status callbacks).

Workloads, each run sequentially on one keep-alive connection after a warm-up of its own:
`healthz` (`GET /healthz`), `sandbox_start` (`POST /v1/verifications` on `twilio`), `start` (on
`twilio_remote`), `own_code_start` (on `messaging_remote`), `check_wrong` and `check_right` (`POST
/v1/verifications/{id}/check` on verifications started through `twilio_remote`, the right code read from
the vendor's outbox beforehand). For each: heap allocations and bytes per request (the interposer's totals,
read by SIGUSR2, before and after), store calls, statements and commits per request (`gateway_store_*_total`
of `/metrics`, by operation), and the gateway's CPU per request on that one connection.

With --profile, each workload runs 5 s under `wrk -c32` while `perf record -g` samples the gateway, and
profile_parts.py gives every sample to one part of the path (inbound HTTP, JSON, the engine, the store, the
outbound client, the emulator, the kernel's parts): a table of shares, or of µs per request with --cpu-rounds.

With --cpu-rounds N, N paired rounds of `wrk -t1 -c32` (`healthz.lua`, `start.lua`, `check.lua`) give each
workload's CPU per request as a ratio to /healthz's in the same round (median and bootstrap 90% interval),
the method of facade_cpu.py. The allocation counter runs in those rounds too (a relaxed atomic increment per
allocation); both sides pay for it.

--check FILE compares the counts with a budget file (`{"debug": {...}, "release": {...}}`, the section named
by --build, by default read from the binary's path) and exits 1 when any count is above its budget: `.ci/run`
runs this on the debug build. Prints the table in Markdown and one `RESULT {json}` line.
"""
import argparse, http.client, json, os, re, shutil, signal, statistics, subprocess, sys, tempfile, time, urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
from facade_cpu import run_wrk  # noqa: E402

TOKEN = "5a4db0c0sandbox0auth0token000001"
ACCOUNT = "AC5a4db0c5a4db0c5a4db0c5a4db0c0001"
SERVICE = "VA5a4db0c5a4db0c5a4db0c5a4db0c0001"
WORKLOADS = ("healthz", "sandbox_start", "start", "own_code_start", "check_wrong", "check_right")
# Operations the gateway's background services run on their own clocks (instance heartbeats, maintenance, the
# webhook and delivery-deadline pollers), whatever the requests do: left out of the per-request sums, and their
# writes (each one statement committing by itself) out of the commits. Listed apart in the output.
BACKGROUND = {"heartbeat": True, "instances": False, "remove_instance": True, "prune delivery tallies": True,
              "prune refusal counts": True, "prune_idempotency_keys": True, "prune console sessions": True,
              "adaptive prune": True, "claim webhooks": True, "claim delivery deadlines": True,
              "webhook cursor": True}
METRIC = re.compile(r'^gateway_store_(calls|statements|commits)_total(?:\{operation="([^"]*)"\})? ([0-9.e+]+)$')


class Connection:
    """One keep-alive connection to the measured gateway."""

    def __init__(self, port):
        self.port = port
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def send(self, method, path, body=None):
        headers = {"Authorization": "Bearer " + bench.KEY}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        for attempt in (0, 1):
            try:
                self.connection.request(method, path, body=data, headers=headers)
                response = self.connection.getresponse()
                raw = response.read()
                return response.status, raw
            except (http.client.HTTPException, ConnectionError):
                if attempt:
                    raise
                self.connection.close()
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)


class Allocations:
    """The interposer's totals in the measured gateway: SIGUSR2 appends one `count bytes syncs` line to `path`."""

    def __init__(self, path):
        self.path = path

    def read(self, pid):
        """(allocations, bytes) so far."""
        return self.totals(pid)[:2]

    def totals(self, pid):
        """(allocations, bytes, file syncs) so far: fsync, fdatasync and sync_file_range calls."""
        before = self._lines()
        os.kill(pid, signal.SIGUSR2)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            lines = self._lines()
            if len(lines) > len(before):
                return tuple(int(field) for field in lines[-1].split()[:3])
            time.sleep(0.002)
        raise SystemExit("the allocation counter did not answer (is LD_PRELOAD in effect?)")

    def _lines(self):
        try:
            with open(self.path) as handle:
                return [line for line in handle.read().splitlines() if line.strip()]
        except FileNotFoundError:
            return []


def store_counts(port):
    """{"calls": {op: n}, "statements": {op: n}, "commits": n} from the measured gateway's /metrics."""
    status, body = bench.http_get(port, "/metrics", timeout=10)
    if status != 200:
        raise SystemExit("/metrics answered %d" % status)
    counts = {"calls": {}, "statements": {}, "commits": 0.0}
    for line in body.decode().splitlines() if isinstance(body, bytes) else body.splitlines():
        match = METRIC.match(line)
        if not match:
            continue
        kind, operation, value = match.group(1), match.group(2), float(match.group(3))
        if kind == "commits":
            counts["commits"] = value
        else:
            counts[kind][operation] = value
    return counts


def difference(after, before, requests):
    per = {}
    for kind in ("calls", "statements"):
        per[kind] = {op: (n - before[kind].get(op, 0)) / requests for op, n in after[kind].items()
                     if n - before[kind].get(op, 0) > 0}
    per["commits"] = (after["commits"] - before["commits"]) / requests
    return per


def write_config(path, vendor_base, own_base):
    account = "account_sid: %s, auth_token_env: COST_TWILIO_TOKEN" % ACCOUNT
    with open(path, "w") as handle:
        handle.write(
            "sandbox: true\napi_keys:\n  - {name: bench, key_env: COST_GATEWAY_KEY, scopes: [verify]}\n"
            "messages: {app: Bench, origin_bound: {host: example.com}}\nproviders:\n"
            "  - {id: twilio, plugin: twilio, settings: {%s, service_sid: %s, base_url: \"%s/sandbox/twilio\"}}\n"
            "  - {id: twilio_remote, plugin: twilio, settings: {%s, service_sid: %s, base_url: \"%s/sandbox/twilio\"}}\n"
            "  - {id: messaging_remote, plugin: twilio_messaging, settings: {%s,"
            " api_key_sid: SK5a4db0c5a4db0c5a4db0c5a4db0c0001, base_url: \"%s/sandbox/twilio_messaging\"}}\n"
            % (account, SERVICE, own_base, account, SERVICE, vendor_base, account, vendor_base))


class Report:
    def __init__(self, args):
        self.args = args
        self.scratch = tempfile.mkdtemp(prefix="gateway-cost-report-")
        library = os.path.join(self.scratch, "alloc_count.so")
        compiler = shutil.which("cc") or shutil.which("clang") or "cc"
        built = subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-o", library,
                                os.path.join(bench.HERE, "alloc_count.c")], capture_output=True, text=True)
        if built.returncode != 0:
            raise SystemExit("cc alloc_count.c failed:\n" + built.stderr)
        self.library = library
        self.counter_path = os.path.join(self.scratch, "allocations.txt")
        self.vendor = bench.Gateway(args.gateway, os.path.join(self.scratch, "vendor"),
                                    os.path.join(self.scratch, "vendor.log"))
        self.vendor_port = None
        self.gateway = None
        self.numbers = 0

    def number(self, prefix):
        self.numbers += 1
        return "%s%06d" % (prefix, self.numbers)

    def start(self):
        os.makedirs(self.vendor.data_dir, exist_ok=True)
        self.vendor.start()
        config = os.path.join(self.scratch, "gateway.yaml")
        os.environ.update(COST_GATEWAY_KEY=bench.KEY, COST_TWILIO_TOKEN=TOKEN)
        self.gateway = bench.Gateway(self.args.gateway, os.path.join(self.scratch, "measured"),
                                     os.path.join(self.scratch, "measured.log"), extra=["--config", config])
        # `twilio` is the measured gateway's own in-process emulator, reached over its own port.
        self.gateway.port = bench.free_port()
        write_config(config, self.vendor.base, self.gateway.base)
        os.makedirs(self.gateway.data_dir, exist_ok=True)
        bench.start_with_environment(self.gateway, LD_PRELOAD=self.library, ALLOC_COUNT_OUT=self.counter_path)
        self.allocations = Allocations(self.counter_path)
        self.allocations.read(self.gateway.process.pid)  # the counter answers before anything is measured

    def stop(self):
        for gateway in (self.gateway, self.vendor):
            if gateway:
                gateway.stop()

    def requests(self, workload, count, prefix):
        """`count` (method, path, body, expected statuses) of `workload`; checks prepare their verifications."""
        if workload == "healthz":
            return [("GET", "/healthz", None, (200,))] * count
        provider = {"sandbox_start": "twilio", "start": "twilio_remote", "own_code_start": "messaging_remote"}
        if workload in provider:
            return [("POST", "/v1/verifications",
                     {"to": self.number(prefix), "channel": "sms", "provider": provider[workload]}, (201,))
                    for _ in range(count)]
        prepared = self.prepare(count, prefix)
        if workload == "check_wrong":
            return [("POST", "/v1/verifications/%s/check" % vid, {"code": "000000" if code != "000000" else "111111"},
                     (422,)) for vid, code in prepared]
        return [("POST", "/v1/verifications/%s/check" % vid, {"code": code}, (200,)) for vid, code in prepared]

    def prepare(self, count, prefix):
        """`count` verifications started through twilio_remote, with their codes from the vendor's outbox."""
        connection = Connection(self.gateway.port)
        prepared = []
        for _ in range(count):
            to = self.number(prefix)
            status, raw = connection.send("POST", "/v1/verifications",
                                          {"to": to, "channel": "sms", "provider": "twilio_remote"})
            if status != 201:
                raise SystemExit("preparing a check: start answered %d %s" % (status, raw[:300]))
            status, outbox = bench.http_get(self.vendor.port, "/sandbox/outbox?to=" + urllib.parse.quote(to))
            messages = json.loads(outbox).get("messages", [])
            if status != 200 or not messages:
                raise SystemExit("preparing a check: no code in the vendor's outbox for %s" % to)
            prepared.append((json.loads(raw)["id"], messages[-1]["code"]))
        return prepared

    def run(self, requests, connection):
        for method, path, body, expected in requests:
            status, raw = connection.send(method, path, body)
            if status not in expected:
                raise SystemExit("%s %s answered %d, not %s: %s" % (method, path, status, expected, raw[:300]))

    def counts(self, workload, index):
        """The workload's counts per request over --requests sequential requests, after a warm-up."""
        prefix = "+4474%d%d" % (index, 0)
        connection = Connection(self.gateway.port)
        self.run(self.requests(workload, self.args.warmup, prefix), connection)
        measured = self.requests(workload, self.args.requests, prefix)
        pid = self.gateway.process.pid
        store_before = store_counts(self.gateway.port)
        allocations_before = self.allocations.read(pid)
        cpu_before = self.gateway.cpu_seconds()
        began = time.perf_counter()
        self.run(measured, connection)
        seconds = time.perf_counter() - began
        cpu = self.gateway.cpu_seconds() - cpu_before
        allocations_after = self.allocations.read(pid)
        store = difference(store_counts(self.gateway.port), store_before, self.args.requests)
        n = self.args.requests
        background = {op: v for op, v in store["calls"].items() if op in BACKGROUND}
        for kind in ("calls", "statements"):
            store[kind] = {op: v for op, v in store[kind].items() if op not in BACKGROUND}
        store["commits"] -= sum(v for op, v in background.items() if BACKGROUND[op])
        return {
            "requests": n,
            "allocations": round((allocations_after[0] - allocations_before[0]) / n, 1),
            "allocated_bytes": round((allocations_after[1] - allocations_before[1]) / n),
            "store_calls": round(sum(store["calls"].values()), 3),
            "store_statements": round(sum(store["statements"].values()), 3),
            "store_commits": round(store["commits"], 3),
            "calls_by_operation": {op: round(v, 3) for op, v in sorted(store["calls"].items()) if v >= 0.005},
            "background_calls": {op: round(v, 3) for op, v in sorted(background.items())},
            "sequential_cpu_us": round(cpu / n * 1e6, 1),
            "sequential_rps": round(n / seconds),
        }

    def idle(self, seconds):
        """Allocations per second with no request: the background services' share of a window."""
        pid = self.gateway.process.pid
        before = self.allocations.read(pid)
        time.sleep(seconds)
        after = self.allocations.read(pid)
        return round((after[0] - before[0]) / seconds, 1)

    def profiles(self):
        """Each workload under `wrk -c32` for 5 s while `perf record -g` samples the gateway for 4 s; the shares of
        profile_parts.py (each sample to one part of the path), and the gateway's CPU per request meanwhile."""
        import profile_parts
        shares = {}
        for index, workload in enumerate(WORKLOADS):
            environment = {"BENCH_DIR": bench.HERE, "BENCH_KEY": bench.KEY, "BENCH_COUNTER_START": str(900000)}
            if workload == "healthz":
                script = "healthz.lua"
            elif workload in ("check_wrong", "check_right"):
                prepared_path = os.path.join(self.scratch, "profile-%s.tsv" % workload)
                prepared = self.prepare(self.args.profile_checks, "+44756%d" % index)
                with open(prepared_path, "w") as handle:
                    handle.writelines("%s\t%s\t-\n" % pair for pair in prepared)
                script = "check.lua"
                environment.update(BENCH_PREPARED=prepared_path, BENCH_THREADS="1",
                                   BENCH_MODE="wrong" if workload == "check_wrong" else "right", BENCH_REPEAT="1")
            else:
                script = "start.lua"
                provider = {"sandbox_start": "twilio", "start": "twilio_remote", "own_code_start": "messaging_remote"}
                environment.update(BENCH_PROVIDER=provider[workload], BENCH_PREFIX="+4475%d" % index)
            data = os.path.join(self.scratch, "perf-%s.data" % workload)
            load = subprocess.Popen(["wrk", "-t1", "-c32", "-d5s", "-s", os.path.join(bench.HERE, script),
                                     self.gateway.base], env=dict(os.environ, **environment),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(0.5)
            recorded = subprocess.run(["perf", "record", "-F", "499", "-g", "-p", str(self.gateway.process.pid),
                                       "-o", data, "--", "sleep", "4"], capture_output=True, text=True, timeout=60)
            output, _ = load.communicate(timeout=120)
            if recorded.returncode != 0:
                raise SystemExit("perf record failed: " + recorded.stderr[-500:])
            match = re.search(r"^RESULT (.*)$", output, re.M)
            statuses = json.loads(match.group(1))["statuses"] if match else {}
            expected = "4" if workload == "check_wrong" else "2"
            if not statuses or any(not status.startswith(expected) for status in statuses):
                raise SystemExit("%s under wrk answered %s, not only %sxx" % (workload, statuses, expected))
            parts, samples = profile_parts.parts_of_file(data)
            shares[workload] = {"parts": [[name, round(share, 1)] for name, share in parts], "samples": samples}
            bench.log("%s: %d samples, %s" % (workload, samples, ", ".join(
                "%s %.0f%%" % (name, share) for name, share in parts[:4])))
        return shares

    def cpu_rounds(self):
        """Paired wrk rounds: each workload's CPU per request over /healthz's in the same round."""
        block = 10000 * max(2, self.args.seconds)
        results = {workload: [] for workload in WORKLOADS}
        for index in range(self.args.cpu_rounds + 1):
            seconds = self.args.seconds if index else 1
            environment = {"BENCH_KEY": bench.KEY, "BENCH_COUNTER_START": str(index * block)}
            round_results = {"healthz": run_wrk(self.gateway, "healthz.lua", environment, seconds)}
            for workload, provider, prefix in (("sandbox_start", "twilio", "+44751"), ("start", "twilio_remote", "+44752"),
                                               ("own_code_start", "messaging_remote", "+44753")):
                round_results[workload] = run_wrk(self.gateway, "start.lua",
                                                  dict(environment, BENCH_PROVIDER=provider, BENCH_PREFIX=prefix),
                                                  seconds)
            prepared_path = os.path.join(self.scratch, "prepared-%d.tsv" % index)
            prepared = self.prepare(self.args.check_batch, "+44754%d" % (index % 10))
            with open(prepared_path, "w") as handle:
                handle.writelines("%s\t%s\t-\n" % pair for pair in prepared)
            check_env = dict(environment, BENCH_PREPARED=prepared_path, BENCH_THREADS="1")
            # check.lua stops its thread when its list runs out: wrk's -d only bounds it.
            round_results["check_wrong"] = run_wrk(self.gateway, "check.lua",
                                                   dict(check_env, BENCH_MODE="wrong", BENCH_REPEAT="1"), 60, "4")
            round_results["check_right"] = run_wrk(self.gateway, "check.lua", dict(check_env, BENCH_MODE="right"), 60)
            if index == 0:
                continue  # a warm-up of each workload
            for workload, result in round_results.items():
                results[workload].append(result)
            bench.log("round %d: " % index + ", ".join(
                "%s %.0f µs" % (workload, round_results[workload]["us_per_start"]) for workload in WORKLOADS))
        figures = {}
        for workload in WORKLOADS:
            per_request = [r["us_per_start"] for r in results[workload]]
            figure = {"us_per_request": round(statistics.median(per_request), 1),
                      "rps": round(statistics.median(r["rps"] for r in results[workload]))}
            if workload != "healthz":
                ratios = [w["us_per_start"] / h["us_per_start"] for w, h in zip(results[workload], results["healthz"])]
                ratio, low, high = bench.median_ratio_interval(ratios, seed=48)
                figure.update(ratio=round(ratio, 2), ratio_interval=[round(low, 2), round(high, 2)])
            figures[workload] = figure
        return figures


def check_budget(path, build, figures):
    with open(path) as handle:
        budgets = json.load(handle)
    if build not in budgets:
        return ["%s has no %s section" % (path, build)]
    failures = []
    for workload, limits in budgets[build].items():
        measured = figures.get(workload)
        if measured is None:
            failures.append("%s: not measured" % workload)
            continue
        for field, limit in limits.items():
            if measured[field] > limit:
                failures.append("%s: %s %s per request, budget %s" % (workload, field, measured[field], limit))
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gateway", default=os.path.join(bench.ROOT, ".build", "release", "gateway"))
    parser.add_argument("--requests", type=int, default=2000, help="counted requests per workload")
    parser.add_argument("--warmup", type=int, default=200, help="requests per workload before counting")
    parser.add_argument("--cpu-rounds", type=int, default=0, help="paired wrk rounds for the CPU ratios")
    parser.add_argument("--seconds", type=int, default=3, help="seconds per wrk run in a CPU round")
    parser.add_argument("--check-batch", type=int, default=3000, help="verifications prepared per round's checks")
    parser.add_argument("--profile", action="store_true",
                        help="where each workload's CPU goes, by part of the path (perf record -g, profile_parts.py)")
    parser.add_argument("--profile-checks", type=int, default=8000,
                        help="verifications prepared for each check workload's profile")
    parser.add_argument("--keep", action="store_true",
                        help="keep the scratch directory (the perf data, the gateways' logs) and print its path")
    parser.add_argument("--check", metavar="BUDGET", help="fail when a count is above this budget file's")
    parser.add_argument("--build", choices=("debug", "release"), help="the budget's section (default: from --gateway)")
    args = parser.parse_args()
    build = args.build or ("debug" if "/debug/" in os.path.abspath(args.gateway) else "release")
    report = Report(args)
    figures, cpu, profiles = {}, None, None
    try:
        report.start()
        for index, workload in enumerate(WORKLOADS):
            figures[workload] = report.counts(workload, index)
            bench.log("%s: %s" % (workload, json.dumps(figures[workload])))
        idle = report.idle(2.0)
        if args.cpu_rounds:
            cpu = report.cpu_rounds()
        if args.profile:
            profiles = report.profiles()
    finally:
        report.stop()
    print("\n| workload | allocations | bytes allocated | store calls | statements | commits | CPU µs, one connection |"
          + (" CPU µs, wrk -c32 | ratio to /healthz (90% interval) |" if cpu else ""))
    print("|---|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if cpu else ""))
    for workload in WORKLOADS:
        f = figures[workload]
        line = "| %s | %.1f | %s | %.2f | %.2f | %.2f | %.0f |" % (
            workload, f["allocations"], f["allocated_bytes"], f["store_calls"], f["store_statements"],
            f["store_commits"], f["sequential_cpu_us"])
        if cpu:
            c = cpu[workload]
            ratio = "1" if workload == "healthz" else "%.2f (%.2f–%.2f)" % (
                c["ratio"], c["ratio_interval"][0], c["ratio_interval"][1])
            line += " %.0f | %s |" % (c["us_per_request"], ratio)
        print(line)
    print("\nper request, %d counted after %d of warm-up, %s build; background allocations with no request: %.0f/s"
          % (args.requests, args.warmup, build, idle))
    for workload in WORKLOADS[1:]:
        print("  %s store calls: %s" % (workload, ", ".join(
            "%s %.2f" % pair for pair in figures[workload]["calls_by_operation"].items())))
    if profiles:
        names = []
        for workload in WORKLOADS:
            for name, _ in profiles[workload]["parts"]:
                if name not in names:
                    names.append(name)
        per = "µs per request (share × wrk CPU)" if cpu else "share of the samples"
        print("\nwhere the CPU goes, %s:\n" % per)
        print("| part | " + " | ".join(WORKLOADS) + " |")
        print("|---|" + "---:|" * len(WORKLOADS))
        for name in names:
            cells = []
            for workload in WORKLOADS:
                share = dict(profiles[workload]["parts"]).get(name, 0.0)
                cells.append("%.0f" % (share / 100 * cpu[workload]["us_per_request"]) if cpu else "%.1f%%" % share)
            print("| %s | %s |" % (name, " | ".join(cells)))
    result = {"build": build, "figures": figures, "cpu": cpu, "profiles": profiles, "idle_allocations_per_s": idle,
              "command": "python3 scripts/bench/cost_report.py " + " ".join(sys.argv[1:])}
    failures = check_budget(args.check, build, figures) if args.check else []
    result["budget_failures"] = failures
    print("RESULT " + json.dumps(result))
    if args.check:
        for failure in failures:
            print("over budget: " + failure)
        print("cost budget (%s): %s" % (build, "FAILED" if failures else "passed"))
        if failures:
            raise SystemExit(1)
    if args.keep:
        print("kept: " + report.scratch)
    else:
        shutil.rmtree(report.scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
