#!/usr/bin/env python3
"""The benchmark suite's driver: run.sh installs and builds, then runs this (see BENCHMARKS.md).

Starts the release gateway in sandbox mode on a free loopback port and measures, in one run: /healthz;
start through the sandbox Twilio emulator (and the emulator called directly); check with a wrong and with
the right code; the start -> read -> check flow; the gateway's added latency over the direct emulator call
at a fixed rate; start after 1,000,000 stored verifications; memory; launch-to-ready; the same flow against
django-phone-verify under gunicorn; phone-number parsing beside C++ libphonenumber. Every load goes to
127.0.0.1 and stops by itself. Writes raw results (JSON lines) and the Markdown report to --out.
"""
import argparse
import http.client
import json
import os
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

import profile_parts

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
KEY = "sk_sandbox_bench_suite_0001"
PYTHON = sys.executable


def log(message):
    print("[bench %s] %s" % (time.strftime("%H:%M:%S"), message), file=sys.stderr, flush=True)


def free_port():
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import sandbox_gateway

    return sandbox_gateway.free_port()


def http_get(port, path, timeout=2.0):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def http_json(port, method, path, body=None, key=KEY):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        headers = {"Authorization": "Bearer " + key} if key else {}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        raw = response.read()
        return response.status, json.loads(raw) if raw else {}
    finally:
        connection.close()


def median_ratio_interval(ratios, seed):
    """The median of paired rounds' ratios and a bootstrap 90% interval of that median (2,000 resamples)."""
    import random, statistics
    generator = random.Random(seed)
    medians = sorted(statistics.median(generator.choices(ratios, k=len(ratios))) for _ in range(2000))
    return statistics.median(ratios), medians[int(0.05 * len(medians))], medians[int(0.95 * len(medians)) - 1]


def active_rps(wrk_result):
    """Requests per second over the time the load ran."""
    return wrk_result.get("active_rps", wrk_result["rps"])


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


def cpu_seconds(pid):
    """User + system CPU time a process has used so far, from /proc."""
    with open("/proc/%d/stat" % pid) as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_cpu_seconds(pid):
    """The same for a process and its live descendants (gunicorn's master and workers)."""
    total, pending = 0.0, [pid]
    while pending:
        current = pending.pop()
        try:
            total += cpu_seconds(current)
            with open("/proc/%d/task/%d/children" % (current, current)) as handle:
                pending.extend(int(child) for child in handle.read().split())
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue
    return total



def approved_verification(port, to):
    """One real verification to `to` through the sandbox's Twilio emulator: started, its code read from the
    outbox, checked (approved). The start's answer; exits on any other answer."""
    status, started = http_json(port, "POST", "/v1/verifications", {"to": to, "channel": "sms", "provider": "twilio"})
    if status != 201:
        raise SystemExit("start answered %d: %s" % (status, started))
    _, outbox = http_get(port, "/sandbox/outbox?to=" + to.replace("+", "%2B"))
    code = json.loads(outbox)["messages"][-1]["code"]
    status, checked = http_json(port, "POST", "/v1/verifications/%s/check" % started["id"], {"code": code})
    if status != 200 or checked.get("status") != "approved":
        raise SystemExit("check answered %d: %s" % (status, checked))
    return started

def wrk_starts(base, clients, seconds, provider, prefix, counter_start):
    """`wrk -t1 -c<clients>` of start.lua against `base` for `seconds`: its RESULT (common.lua) with `starts`, the
    201 answers, added; exits unless every answer was a 201."""
    environment = dict(os.environ, BENCH_DIR=HERE, BENCH_KEY=KEY, BENCH_PROVIDER=provider, BENCH_PREFIX=prefix,
                       BENCH_COUNTER_START=str(counter_start))
    output = subprocess.run(["wrk", "-t1", "-c%d" % clients, "-d%ds" % seconds, "--timeout", "30s",
                             "-s", os.path.join(HERE, "start.lua"), base],
                            env=environment, capture_output=True, text=True, timeout=seconds + 120)
    match = re.search(r"^RESULT (.*)$", output.stdout, re.M)
    if not match:
        raise SystemExit("wrk gave no result:\n%s%s" % (output.stdout, output.stderr))
    result = json.loads(match.group(1))
    result["starts"] = result["statuses"].get("201", 0)
    if result["starts"] == 0 or result["starts"] != result["requests"]:
        raise SystemExit("%d clients: %d of %d starts answered 201: %s"
                         % (clients, result["starts"], result["requests"], result["statuses"]))
    return result


def start_with_environment(gateway, **variables):
    """Starts `gateway` with `variables` added to this process's environment for its launch only."""
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        return gateway.start()
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def template_verification(binary, data_dir, log_path, to="+447480000001"):
    """A release gateway in sandbox mode on `data_dir` makes one approved verification (approved_verification) and
    stops; its WAL is checkpointed into gateway.sqlite, so the file alone can be copied. Returns the start's answer
    and the `--anchor` arguments of seed.py that find its rows: its id, the number, the vendor's SID."""
    gateway = Gateway(binary, data_dir, log_path)
    gateway.start()
    try:
        started = approved_verification(gateway.port, to)
    finally:
        gateway.stop()
    database = sqlite3.connect(os.path.join(data_dir, "gateway.sqlite"))
    try:
        sid = database.execute("SELECT provider_reference FROM verifications WHERE id = ?",
                               (started["id"],)).fetchone()[0]
        database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        database.close()
    return started, ["--anchor", started["id"], "--anchor", to] + (["--anchor", sid] if sid else [])


class Gateway:
    def __init__(self, binary, data_dir, log_path, extra=()):
        self.binary, self.data_dir, self.log_path = binary, data_dir, log_path
        # More command-line arguments (`--config FILE`).
        self.extra = list(extra)
        self.process = None
        self.port = None

    def start(self, timeout=60.0):
        """Launches and polls /healthz every 2 ms; returns seconds from launch to the first 200."""
        # A port set before the start (a configuration that names the gateway's own URL) is kept.
        self.port = self.port or free_port()
        env = dict(os.environ, GATEWAY_SANDBOX_API_KEY=KEY)
        log_file = open(self.log_path, "a")
        began = time.perf_counter()
        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--data-dir", self.data_dir, "--log-level", "warning",
             *self.extra],
            cwd=ROOT, env=env, stdout=log_file, stderr=log_file)
        deadline = began + timeout
        while time.perf_counter() < deadline:
            try:
                if http_get(self.port, "/healthz", timeout=1.0)[0] == 200:
                    return time.perf_counter() - began
            except OSError:
                pass
            if self.process.poll() is not None:
                raise SystemExit("gateway exited with %s; see %s" % (self.process.returncode, self.log_path))
            time.sleep(0.002)
        self.stop()
        raise SystemExit("gateway not ready after %.0f s; see %s" % (timeout, self.log_path))

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def cpu_seconds(self):
        """User + system CPU time the process has used so far."""
        return cpu_seconds(self.process.pid)

    def rss_mb(self):
        return rss_kb(self.process.pid) / 1024.0

    @property
    def base(self):
        return "http://127.0.0.1:%d" % self.port

    def credentials(self):
        """The Twilio sandbox credentials from the startup banner."""
        with open(self.log_path) as handle:
            for line in handle:
                if line.startswith("twilio sandbox settings:"):
                    return dict(pair.split("=", 1) for pair in line.split(":", 1)[1].split())
        raise SystemExit("no Twilio sandbox settings in the gateway's banner (%s)" % self.log_path)


class Suite:
    def __init__(self, args):
        self.args = args
        self.duration = 3 if args.quick else args.seconds
        # Rounds of the no-decay comparison (a gateway on a new data directory, then the seeded one).
        self.decay_rounds = 1 if args.quick else 3
        self.results = {}
        self.notes = []
        self.out = args.out
        os.makedirs(self.out, exist_ok=True)
        self.raw = open(os.path.join(self.out, "raw.jsonl"), "a")
        self.tmp = tempfile.mkdtemp(prefix="gateway-bench-")
        self.gateways = []
        self.others = []

    def record(self, name, value):
        self.results[name] = value
        self.raw.write(json.dumps({"phase": name, "result": value}) + "\n")
        self.raw.flush()

    def gateway(self, name):
        data_dir = os.path.join(self.tmp, name)
        os.makedirs(data_dir, exist_ok=True)
        gateway = Gateway(self.args.gateway, data_dir, os.path.join(self.out, "gateway-%s.log" % name))
        self.gateways.append(gateway)
        return gateway

    def cleanup(self):
        for gateway in self.gateways:
            gateway.stop()
        for process in self.others:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
        if not self.args.keep:
            shutil.rmtree(self.tmp, ignore_errors=True)

    # Load tools --------------------------------------------------------------------------------------

    def wrk(self, name, base, script, env=None, duration=None, threads=1, connections=32, gateway=None):
        duration = duration or self.duration
        cpu_before = gateway.cpu_seconds() if gateway else None
        env = dict(os.environ, BENCH_DIR=HERE, **(env or {}))
        command = ["wrk", "-t%d" % threads, "-c%d" % connections, "-d%ds" % duration, "--latency",
                   "-s", os.path.join(HERE, script), base]
        log("%s: %s" % (name, " ".join(command[:-3] + [script])))
        output = subprocess.run(command, env=env, capture_output=True, text=True, timeout=duration + 60)
        with open(os.path.join(self.out, "wrk-%s.txt" % name), "w") as handle:
            handle.write(output.stdout + output.stderr)
        match = re.search(r"^RESULT (.*)$", output.stdout, re.M)
        if not match:
            raise SystemExit("wrk gave no result for %s:\n%s%s" % (name, output.stdout, output.stderr))
        result = json.loads(match.group(1))
        if gateway:
            # Cores the gateway kept busy: about 1 of 2 with wrk and nothing else on the machine means the
            # bound is not its CPU but something it waits for (a lock, a queue, the disk).
            result["gateway_cores"] = (gateway.cpu_seconds() - cpu_before) / result["seconds"]
        result["command"] = "wrk -t%d -c%d -d%ds -s scripts/bench/%s" % (threads, connections, duration, script)
        self.record(name, result)
        return result

    def httpload(self, name, *arguments, timeout=300):
        command = [PYTHON, os.path.join(HERE, "httpload.py"), *map(str, arguments)]
        log("%s: httpload.py %s" % (name, " ".join(map(str, arguments))))
        output = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        match = re.search(r"^RESULT (.*)$", output.stdout, re.M)
        if not match:
            raise SystemExit("httpload.py gave no result for %s:\n%s%s" % (name, output.stdout, output.stderr))
        result = json.loads(match.group(1))
        self.record(name, result)
        return result

    # Phases ------------------------------------------------------------------------------------------

    def run(self):
        try:
            self.gateway_phases()
            self.ready_phase()
            self.million_phase()
            if not self.args.skip_django:
                self.django_phase()
            if not self.args.skip_phone:
                self.phone_phase()
        finally:
            self.cleanup()

    def gateway_phases(self):
        gateway = self.gateway("main")
        ready = gateway.start()
        time.sleep(1.0)
        self.record("idle", {"rss_mb": gateway.rss_mb(), "ready_s": ready})
        credentials = gateway.credentials()
        basic = __import__("base64").b64encode(
            ("%s:%s" % (credentials["account_sid"], credentials["auth_token"])).encode()).decode()
        base = gateway.base
        key_env = {"BENCH_KEY": KEY}

        self.wrk("healthz", base, "healthz.lua", gateway=gateway)
        self.wrk("start", base, "start.lua", dict(key_env, BENCH_PREFIX="+44741"), gateway=gateway)
        self.wrk("direct", base, "direct.lua",
                 {"BENCH_PREFIX": "+44742", "BENCH_BASIC": basic, "BENCH_SERVICE_SID": credentials["service_sid"]},
                 gateway=gateway)

        # Checks: verifications prepared (started, code read) beforehand, enough for the check runs if the
        # time budget allows; each gets two wrong checks (of the five Twilio allows), then its right code.
        prepared = os.path.join(self.tmp, "prepared.tsv")
        start_rps = self.results["start"]["rps"]
        healthz_rps = self.results["healthz"]["rps"]
        want = int(min(healthz_rps, 40000) * self.duration * 0.6) + 1000
        budget = 12 if self.args.quick else self.args.prepare_seconds
        self.httpload("prepare", "prepare", "--base", base, "--key", KEY, "--count", want,
                      "--max-seconds", budget, "--concurrency", 32, "--prefix", "+44743",
                      "--out", prepared)
        check_env = dict(key_env, BENCH_PREPARED=prepared, BENCH_THREADS="1")
        self.wrk("check_wrong", base, "check.lua", dict(check_env, BENCH_MODE="wrong", BENCH_REPEAT="2"), gateway=gateway)
        self.wrk("check_right", base, "check.lua", dict(check_env, BENCH_MODE="right"), gateway=gateway)

        cpu_before = gateway.cpu_seconds()
        flow = self.httpload("flow", "flow", "--target", "gateway", "--base", base, "--key", KEY,
                             "--seconds", self.duration, "--concurrency", 32, "--prefix", "+44744")
        flow["server_cpu_s"] = gateway.cpu_seconds() - cpu_before
        self.record("flow", flow)

        # Added latency at a fixed rate: the gateway's start, then the same emulator called directly, in three
        # interleaved rounds (one with --quick) whose medians the target reads: a single stall of this shared
        # machine moves one run's p99 by milliseconds. When either cannot sustain the rate (the closed-loop
        # runs above say so), a pair runs again at half the lower of their capacities, so the added latency
        # is still measured, at a rate both sustain.
        rate = self.args.rate
        capacity = min(self.rate_of("start"), self.rate_of("direct"))
        pairs = [("" if index == 0 else "_%d" % index, rate, "+44745%d" % index, "+44746%d" % index, 6)
                 for index in range(1 if self.args.quick else 3)]
        if capacity < 1.2 * rate:
            pairs.append(("_low", max(5, int(round(capacity * 0.5))), "+44750", "+44751", 7))
        for suffix, pair_rate, gateway_prefix, direct_prefix, digits in pairs:
            for kind, prefix in (("gateway", gateway_prefix), ("direct", direct_prefix)):
                self.httpload("rate_" + kind + suffix, "rate", "--kind", kind, "--base", base, "--key", KEY,
                              "--rate", pair_rate, "--seconds", self.duration, "--warmup", 1,
                              "--prefix", prefix, "--digits", digits, "--account-sid", credentials["account_sid"],
                              "--auth-token", credentials["auth_token"], "--service-sid", credentials["service_sid"])
        self.record("after_load", {"rss_mb": gateway.rss_mb(), "stored": self.stored(gateway.data_dir)})
        if not self.args.no_profile and shutil.which("perf"):
            self.profile(gateway, key_env)
        gateway.stop()

    def profile(self, gateway, key_env):
        """CPU profiles of the gateway (perf, 499 Hz, 4 s each) under the start load and under the flow's,
        after the measured runs so that they perturb none of them: which code a start's and a flow's CPU time
        goes to, by library, by symbol and by part of the path (profile_parts.py)."""
        env = dict(os.environ, BENCH_DIR=HERE, BENCH_PREFIX="+44752", **key_env)
        log("profile: perf record during wrk start.lua")
        load = subprocess.Popen(["wrk", "-t1", "-c32", "-d5s", "-s", os.path.join(HERE, "start.lua"),
                                 gateway.base], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        start = self.perf_record(gateway, load, "perf.data")
        if "error" in start:
            self.record("profile", start)
            return
        log("profile: perf record during httpload.py flow")
        load = subprocess.Popen([PYTHON, os.path.join(HERE, "httpload.py"), "flow", "--target", "gateway",
                                 "--base", gateway.base, "--key", KEY, "--seconds", "5", "--concurrency", "32",
                                 "--prefix", "+44753"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        flow = self.perf_record(gateway, load, "perf-flow.data")
        self.record("profile", dict(start, flow=flow))

    def perf_record(self, gateway, load, name):
        """Records 4 s of the gateway's CPU while `load` (already started, about 5 s long) runs."""
        data = os.path.join(self.out, name)
        self.others.append(load)
        time.sleep(0.5)
        cpu_before, began = gateway.cpu_seconds(), time.perf_counter()
        recorded = subprocess.run(["perf", "record", "-F", "499", "-g", "-p", str(gateway.process.pid), "-o", data,
                                   "--", "sleep", "4"], capture_output=True, text=True, timeout=60)
        cores = (gateway.cpu_seconds() - cpu_before) / (time.perf_counter() - began)
        load.wait(timeout=60)
        if recorded.returncode != 0:
            return {"error": recorded.stderr[-500:]}

        def table(sort):
            output = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", sort, "-g", "none",
                                     "--stdio"], capture_output=True, text=True, timeout=120).stdout
            rows = []
            for line in output.splitlines():
                match = re.match(r"^\s+([\d.]+)%\s+(.*\S)\s*$", line)
                if match:
                    rows.append((float(match.group(1)), match.group(2)))
            return rows

        symbols = table("dso,sym")[:25]
        if shutil.which("swift"):  # Swift symbols, readable
            demangled = subprocess.run(["swift", "demangle", "--simplified", "--compact"],
                                       input="\n".join(name for _, name in symbols), capture_output=True, text=True)
            names = demangled.stdout.splitlines()
            if demangled.returncode == 0 and len(names) == len(symbols):
                symbols = [(pct, name) for (pct, _), name in zip(symbols, names)]
        try:
            parts, samples = profile_parts.parts_of_file(data)
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            parts, samples = [], str(error)
        return {"cores": cores, "dso": table("dso")[:12], "symbols": symbols, "parts": parts, "samples": samples}

    def rate_of(self, name):
        result = self.results[name]
        return result.get("active_rps", result["rps"])

    def stored(self, data_dir):
        for name in os.listdir(data_dir):
            path = os.path.join(data_dir, name)
            if os.path.isfile(path) and not name.endswith(("-wal", "-shm")):
                try:
                    with sqlite3.connect("file:%s?mode=ro" % path, uri=True) as connection:
                        return connection.execute("SELECT count(*) FROM verifications").fetchone()[0]
                except sqlite3.Error:
                    continue
        return None

    def emulator_live(self, data_dir):
        """The Twilio emulator's verifications in its table (its live ones), or None without the file."""
        path = os.path.join(data_dir, "sandbox", "emulators.sqlite")
        try:
            with sqlite3.connect("file:%s?mode=ro" % path, uri=True) as connection:
                return connection.execute("SELECT count(*) FROM emulator_rows WHERE plugin = 'twilio' "
                                          "AND tbl = 'verifications'").fetchone()[0]
        except sqlite3.Error:
            return None

    def ready_phase(self):
        """Launch to ready, several launches: each on a new data directory (creates the store and keys),
        then each on the directory of the first (opens them)."""
        launches = 3 if self.args.quick else 7
        fresh, reopen = [], []
        for index in range(launches):
            gateway = self.gateway("ready-%d" % index)
            fresh.append(gateway.start())
            gateway.stop()
        first = self.gateways[-launches]
        for _ in range(launches):
            reopen.append(first.start())
            first.stop()
        self.record("ready", {"fresh_s": fresh, "reopen_s": reopen,
                              "fresh_median_s": statistics.median(fresh),
                              "reopen_median_s": statistics.median(reopen)})

    def million_phase(self):
        count = self.args.seeded
        gateway = self.gateway("million")
        gateway.start()
        port = gateway.port
        # The template: one verification started through Twilio, its code read, checked: approved.
        to = "+447490000001"
        status, started = http_json(port, "POST", "/v1/verifications",
                                    {"to": to, "channel": "sms", "provider": "twilio"})
        if status != 201:
            raise SystemExit("template start failed: %s %s" % (status, started))
        status, outbox = http_json(port, "GET", "/sandbox/outbox?to=" + urllib.parse.quote(to), key=None)
        code = outbox["messages"][-1]["code"]
        status, checked = http_json(port, "POST", "/v1/verifications/%s/check" % started["id"], {"code": code})
        if status != 200:
            raise SystemExit("template check failed: %s %s" % (status, checked))
        # The emulator's template: one verification started and left pending. An approved one is gone from the
        # Twilio emulator (it answers 404, as Twilio does), so copying it would leave the emulator empty; a
        # pending one is a live row, which is what a million verifications started within its 10-minute window
        # leave in it.
        live_to = "+447490000002"
        status, live = http_json(port, "POST", "/v1/verifications", {"to": live_to, "channel": "sms", "provider": "twilio"})
        if status != 201:
            raise SystemExit("live template start failed: %s %s" % (status, live))
        # The target compares with "the first 10k": this gateway's own first starts, measured here on its new
        # data directory just before seeding, so the comparison is not across the minutes (and the machine's
        # drift) between the suite's first runs and this phase.
        self.wrk("start_first", gateway.base, "start.lua", {"BENCH_KEY": KEY, "BENCH_PREFIX": "+44748"},
                 gateway=gateway)
        gateway.stop()
        def anchors_of(verification_id, number):
            anchors = [verification_id, number]
            path = os.path.join(gateway.data_dir, "gateway.sqlite")
            try:
                with sqlite3.connect("file:%s?mode=ro" % path, uri=True) as connection:
                    row = connection.execute("SELECT provider_reference FROM verifications WHERE id = ?",
                                             (verification_id,)).fetchone()
                    if row and row[0]:
                        anchors.append(row[0])
            except sqlite3.Error:
                pass
            return anchors
        anchors = anchors_of(started["id"], to)
        live_anchors = anchors_of(live["id"], live_to)
        reference = anchors[2] if len(anchors) > 2 else None
        # Two steps, so the gateway's own cost of a million stored verifications shows apart from the
        # sandbox emulator's: first the gateway's store alone, then the Twilio emulator's rows as well.
        log("seeding %d verifications (template %s, %s, %s)" % (count, started["id"], to, reference))
        files = []
        for root, _, names in os.walk(gateway.data_dir):
            for name in names:
                if name.endswith((".sqlite", ".db")):
                    files.append(os.path.relpath(os.path.join(root, name), gateway.data_dir))
        store = [name for name in files if name == "gateway.sqlite"] or ["gateway.sqlite"]
        steps = [("store", store), ("emulator", [name for name in files if name not in store])]
        for step, only in steps:
            if not only:
                self.notes.append("no emulator SQLite file to seed")
                continue
            command = [PYTHON, os.path.join(HERE, "seed.py"), gateway.data_dir, "--count", str(count),
                       "--prefix", "+44740"] + \
                sum((["--anchor", a] for a in (anchors if step == "store" else live_anchors)), []) + \
                sum((["--only", name] for name in only), [])
            output = subprocess.run(command, capture_output=True, text=True, timeout=900)
            match = re.search(r"^RESULT (.*)$", output.stdout, re.M)
            if not match:
                raise SystemExit("seed.py failed:\n%s%s" % (output.stdout, output.stderr))
            seed = json.loads(match.group(1))
            # seed.py writes with synchronous=OFF: the kernel still holds the rows as dirty pages (over a GB),
            # and writing them back would stall the measured run's own syncs behind it. Measure the store
            # holding a million rows, not that write-back: sync first, and report how long it took.
            synced = time.time()
            os.sync()
            seed["sync_s"] = round(time.time() - synced, 1)
            seed["stored"] = self.stored(gateway.data_dir)
            seed["emulator_live"] = self.emulator_live(gateway.data_dir)
            seed["files_mb"] = {os.path.relpath(os.path.join(root, name), gateway.data_dir):
                                round(os.path.getsize(os.path.join(root, name)) / 1e6, 1)
                                for root, _, names in os.walk(gateway.data_dir) for name in names}
            self.record("seed_" + step, seed)
            ready = gateway.start(timeout=300)
            time.sleep(1.0)
            idle = gateway.rss_mb()
            # Interleaved with a gateway on a new, empty data directory (the target's "first 10k"), round by
            # round, so the comparison does not span the minutes (and this shared machine's drift, as wide as
            # the 10% allowed) between the phase's first starts and this step: the medians are compared.
            prefix = "+44747" if step == "store" else "+44749"
            seeded, fresh = [], []
            for index in range(self.decay_rounds):
                other = self.gateway("million-fresh-%s-%d" % (step, index))
                other.start()
                fresh.append(self.wrk("fresh_%s_%d" % (step, index), other.base, "start.lua",
                                      {"BENCH_KEY": KEY, "BENCH_PREFIX": "+44746"}, gateway=other))
                other.stop()
                name = "start_1m_" + step if index == 0 else "start_1m_%s_%d" % (step, index)
                seeded.append(self.wrk(name, gateway.base, "start.lua",
                                       {"BENCH_KEY": KEY, "BENCH_PREFIX": prefix,
                                        "BENCH_COUNTER_START": str(index * 400000)}, gateway=gateway))
            self.record("million_" + step, {"ready_s": ready, "rss_idle_mb": idle,
                                            "rss_after_load_mb": gateway.rss_mb(), "stored": seed["stored"],
                                            "emulator_live": seed["emulator_live"],
                                            "seeded_rps": [active_rps(x) for x in seeded],
                                            "fresh_rps": [active_rps(x) for x in fresh],
                                            "seeded_us": [x["gateway_cores"] / active_rps(x) * 1e6 for x in seeded],
                                            "fresh_us": [x["gateway_cores"] / active_rps(x) * 1e6 for x in fresh]})
            gateway.stop()

    def django_phase(self):
        project = os.path.join(self.tmp, "django")
        os.makedirs(project)
        subprocess.run([PYTHON, os.path.join(HERE, "django_project.py"), project], check=True)
        subprocess.run([PYTHON, "manage.py", "migrate", "-v", "0"], cwd=project, check=True, timeout=120)
        port = free_port()
        workers = 2 * os.cpu_count() + 1  # gunicorn's documented starting point
        log_path = os.path.join(self.out, "gunicorn.log")
        gunicorn = os.path.join(os.path.dirname(PYTHON), "gunicorn")
        process = subprocess.Popen(
            [gunicorn, "--chdir", project, "--bind", "127.0.0.1:%d" % port, "--workers", str(workers),
             "--log-level", "warning", "benchsite.wsgi:application"],
            stdout=open(log_path, "a"), stderr=subprocess.STDOUT)
        self.others.append(process)
        for _ in range(3000):
            try:
                if http_get(port, "/bench/code?phone_number=%2B447400000000")[0] in (200, 404):
                    break
            except OSError:
                time.sleep(0.01)
        else:
            raise SystemExit("gunicorn did not start; see %s" % log_path)
        # Interleaved with the gateway, round by round (a gateway on a new data directory, idle while django
        # runs and the other way round), so the machine's drift between phases does not enter the ratio:
        # single runs minutes apart moved django's flows/s by 25%.
        gateway = self.gateway("django-pair")
        gateway.start()
        pairs = []
        try:
            for round_index in range(1 if self.args.quick else 3):
                pair = {}
                for side, base, cpu, prefix in (
                        ("gateway", gateway.base, gateway.cpu_seconds, "+4477%d" % round_index),
                        ("django", "http://127.0.0.1:%d" % port, lambda: tree_cpu_seconds(process.pid),
                         "+4478%d" % round_index)):
                    arguments = ["flow", "--target", side, "--base", base, "--seconds", self.duration,
                                 "--concurrency", 32, "--prefix", prefix]
                    if side == "gateway":
                        arguments += ["--key", KEY]
                    cpu_before = cpu()
                    result = self.httpload("%s_flow_%d" % (side, round_index), *arguments)
                    result["server_cpu_s"] = cpu() - cpu_before
                    pair[side] = result
                pairs.append(pair)
        finally:
            gateway.stop()
        self.record("django_pairs", {"workers": workers, "rounds": pairs})
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)

    def phone_phase(self):
        seconds = 2 if self.args.quick else 10
        log("phones: scripts/phonemeta/run.sh cpp --seconds %d" % seconds)
        output = subprocess.run([os.path.join(ROOT, "scripts", "phonemeta", "run.sh"), "cpp", "--seconds",
                                 str(seconds)], capture_output=True, text=True, timeout=900, cwd=ROOT)
        with open(os.path.join(self.out, "phones.txt"), "w") as handle:
            handle.write(output.stdout + output.stderr)
        values = dict(re.findall(r"^RESULT (\S+) (.*)$", output.stdout, re.M))
        if output.returncode != 0 or "phone_gateway_per_s" not in values:
            self.record("phones", {"error": (output.stdout + output.stderr)[-2000:]})
            return
        agreed, total = map(int, values["phone_agree"].split())
        version = re.search(r"^C\+\+ libphonenumber (\S+)", output.stdout, re.M)
        self.record("phones", {
            "seconds": seconds, "gateway_per_s": float(values["phone_gateway_per_s"]),
            "cpp_full_per_s": float(values["phone_cpp_full_per_s"]),
            "cpp_parse_type_per_s": float(values["phone_cpp_parse_type_per_s"]),
            "agreed": agreed, "total": total, "cpp_version": version.group(1) if version else "?",
            "summary": [line for line in output.stdout.splitlines() if line.startswith(("agreement", "  of the"))],
        })


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gateway", default=os.path.join(ROOT, ".build", "release", "gateway"))
    parser.add_argument("--quick", action="store_true", help="3 s load runs, fewer launches, 2 s phone runs")
    parser.add_argument("--seconds", type=int, default=10, help="seconds per load run")
    parser.add_argument("--prepare-seconds", type=float, default=40, help="time budget to prepare checks")
    parser.add_argument("--rate", type=float, default=1000, help="starts per second for the added-latency runs")
    parser.add_argument("--seeded", type=int, default=1_000_000, help="verifications to store before start_1m")
    parser.add_argument("--skip-django", action="store_true")
    parser.add_argument("--skip-phone", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the temporary data directories")
    parser.add_argument("--no-profile", action="store_true", help="skip the perf profiles of a start and a flow")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    suite = Suite(args)
    began = time.time()
    git = lambda *a: subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    code = {"commit": git("rev-parse", "--short", "HEAD"), "branch": git("rev-parse", "--abbrev-ref", "HEAD"),
            "dirty": git("status", "--porcelain", "--untracked-files=no").splitlines()}
    try:
        suite.run()
    finally:
        with open(os.path.join(args.out, "results.json"), "w") as handle:
            json.dump({"results": suite.results, "quick": args.quick, "seconds": suite.duration,
                       "wall_s": time.time() - began, "rate": args.rate, "seeded": args.seeded, "code": code,
                       "load_end": open("/proc/loadavg").read().split()[:3]}, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
