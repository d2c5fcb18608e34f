#!/usr/bin/env python3
"""Three gateway instances on one PostgreSQL, under load, through a kill -9 and a database outage (issue 15).

    swift build --product gateway && scripts/multi_instance_check.py                 # debug binary
    swift build -c release --product gateway
    scripts/multi_instance_check.py --binary .build/release/gateway                   # the figures
    scripts/multi_instance_check.py --short                                           # CI: at most 60 s
    scripts/multi_instance_check.py --sqlite --short                                  # CI: one SQLite instance

Everything runs on 127.0.0.1 and is stopped (and removed) by the script, on success and on failure:
- a throwaway PostgreSQL cluster (initdb + pg_ctl from /usr/lib/postgresql/<version>/bin, a free port);
- a "vendor" sandbox gateway (its own SQLite) that only serves its Twilio emulator and outbox: the one
  Twilio every instance talks to, as real instances would share the real Twilio;
- instances A, B and C: sandbox mode, each its own --data-dir and port, all `--store postgres://…`, with a
  configuration file whose Twilio provider's `base_url` is the vendor's emulator (sandbox emulators and
  outboxes stay per instance; the Twilio provider does not use them).

Load: USERS threads each run flows; a flow starts on one instance with an Idempotency-Key, replays that key
on another (same verification id), reads the code from the vendor's outbox, sends wrong codes at once to
different instances, then the right code at once to two instances (exactly one `200 approved`, the other
`409 already_approved`). One flow in four sends more wrong codes than the limit at once across the three
instances: at most max_attempts of them may be counted, and the right code afterwards must not approve.

Phases: throughput with one instance and with three (same load, same run, alternating in --rounds so the
drift of a shared machine's load falls on both; the CPU seconds each gateway process used per flow are
reported too, as they do not depend on that load); a kill -9 of instance C
mid-load and its restart on the same data directory; PostgreSQL stopped for --outage seconds mid-load
(every answer must be `503 store_unavailable` in the error shape or a success, within --hang-bound seconds,
no other 5xx, no crash), then started again: the time until each instance starts verifications again.
At the end, across instances: every verification whose start was answered (201) is readable on every
instance with its id, none was approved twice, no attempt limit was exceeded, and a verification token issued
by each instance verifies (ES256, checked here with integers) with every instance's JWKS. Exit 1 on any
violation.

Crash mid-start and mid-check (issue 31), after the kill phase: with the vendors slowed to 5 s, C gets
--crash-keys starts with Idempotency-Keys (on Sinch, Twilio and Vonage; some of the Sinch ones answered 503
after the delay, so Sinch never sends them) and one check of the right code, and is killed while they are at
the vendors, then restarted. The right code again on C must approve within 2 s of the restart, with the lost
check's attempt given back. Every key is retried on A and B until it gets an answer other than
`idempotency_conflict` ("retry shortly"): C is dead (its process is gone), so its claims are taken over at
once and the vendor is asked by reference. Each key's answer and its time from the kill are printed; it
fails if a key of a vendor that can look a start up (Sinch by reference, Twilio by `To`) answers anything but
201 (the same id on a second retry), if a Vonage key (no lookup) answers anything but the documented `409
idempotency_outcome_unknown`, if any key takes longer than the claim lease (start deadline + 15 s), or if a
number got two sends (or none).
Delivery deadlines (issue 47), after the crash phase: the instances also send the gateway's own codes (one
own-code secret for all), numbers of FR through sms_first then sms_second with `delivery: {deliver_within: 3s,
failover: true}`. The vendor's sms_first goes quiet for FR (answers, delivers nothing, no receipt); C starts a
few verifications and is killed as their deadlines come due, then restarted. Every one must fail over exactly
once (one `delivery_failover` resend, two sends, one message from sms_second at the vendor) within the deadline
plus the claim's lease plus 10 s, and the code it carries must approve.
`--sqlite` runs only that phase, with one instance on its SQLite file (restarted on the same data directory).
Stdlib only.
"""
import argparse, base64, collections, concurrent.futures, glob, hashlib, http.client, json, os, shutil, signal, socket
import statistics, subprocess, sys, tempfile, threading, time, urllib.parse, uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_gateway as gw

MAX_ATTEMPTS = 5  # the default policy's max_attempts
CHECK_LEASE = 15  # policy.check_lease_seconds of the instances: a dead instance's check lease lapses after it
START_DEADLINE = 1  # policy.start_deadline_seconds of the instances (one provider: no failover to bound)
CLAIM_LEASE = START_DEADLINE + 15  # VerificationPolicy.idempotencyLease: a dead start's key is taken over after it
CRASH_LATENCY_MS = 5000  # the vendor's latency while instances are killed mid-start and mid-check
CHECK_BOUND = 2.0  # seconds after a restart within which the right code must approve
TWILIO = {"account_sid": "AC5a4db0c5a4db0c5a4db0c5a4db0c0001", "service_sid": "VA5a4db0c5a4db0c5a4db0c5a4db0c0001",
          "auth_token": "5a4db0c0sandbox0auth0token000001"}  # TwilioSandbox: what the vendor's emulator accepts
TOKEN_VARIABLE = "MULTI_INSTANCE_TWILIO_AUTH_TOKEN"
SINCH = {"application_key": "5a4db0c0-5a4d-4b0c-8a4d-b0c05a4d0001",
         "application_secret": "c2FuZGJveC1zaW5jaC1hcHBsaWNhdGlvbi1zZWNyZXQ="}  # SinchSandbox
SINCH_VARIABLE = "MULTI_INSTANCE_SINCH_SECRET"
VONAGE = {"api_key": "5a4db0c1", "api_secret": "Sandbox0Secret01",
          "signature_secret": "sandbox-signature-secret-0000000000000001"}  # VonageSandbox
VONAGE_VARIABLE = "MULTI_INSTANCE_VONAGE_SECRET"
VONAGE_SIGNATURE_VARIABLE = "MULTI_INSTANCE_VONAGE_SIGNATURE_SECRET"
SIGNING_KEY_VARIABLE = "MULTI_INSTANCE_TOKEN_SIGNING_KEY"
OWN_CODE_VARIABLE = "MULTI_INSTANCE_OWN_CODE_SECRET"
DELIVER_WITHIN = 3  # the `deadlines` route's deliver_within, seconds
DEADLINE_COUNTRY = ("FR", "+3361234")  # its country, and the prefix of its numbers


def providers_yaml(vendor):
    """The instances' providers: Twilio (the load's), Sinch and Vonage, each the vendor gateway's emulator."""
    return ("providers:\n"
            "  - id: twilio\n"
            "    plugin: twilio\n"
            f"    settings: {{account_sid: {TWILIO['account_sid']}, service_sid: {TWILIO['service_sid']}, "
            f"auth_token_env: {TOKEN_VARIABLE}, base_url: '{vendor.base}/sandbox/twilio'}}\n"
            "  - id: sinch\n"
            "    plugin: sinch\n"
            f"    settings: {{application_key: {SINCH['application_key']}, application_secret_env: {SINCH_VARIABLE}, "
            f"base_url: '{vendor.base}/sandbox/sinch'}}\n"
            "  - id: vonage\n"
            "    plugin: vonage\n"
            f"    settings: {{api_key: {VONAGE['api_key']}, api_secret_env: {VONAGE_VARIABLE}, brand: Gateway, "
            f"signature_secret_env: {VONAGE_SIGNATURE_VARIABLE}, base_url: '{vendor.base}/sandbox/vonage'}}\n"
            # The gateway's own codes through two messaging vendors (issue 47's delivery deadlines).
            "  - id: sms_first\n"
            "    plugin: twilio_messaging\n"
            f"    settings: {{account_sid: {TWILIO['account_sid']}, auth_token_env: {TOKEN_VARIABLE}, "
            f"base_url: '{vendor.base}/sandbox/twilio_messaging'}}\n"
            "    senders: {default: '+15005550006'}\n"
            "  - id: sms_second\n"
            "    plugin: vonage_sms\n"
            f"    settings: {{api_key: {VONAGE['api_key']}, api_secret_env: {VONAGE_VARIABLE}, "
            f"base_url: '{vendor.base}/sandbox/vonage_sms'}}\n"
            "    senders: {default: '+14155550199'}\n")


def own_codes_yaml():
    """One own-code secret for every instance (a code derived on one is checked on another) and the route of
    the delivery deadlines: numbers of DEADLINE_COUNTRY through sms_first, then sms_second."""
    return (f"own_codes: {{secret_env: {OWN_CODE_VARIABLE}}}\n"
            "messages: {app: Multi}\n"
            "routing:\n"
            "  default: [twilio, sinch, vonage]\n"
            "  routes:\n"
            "    - name: deadlines\n"
            f"      match: {{countries: [{DEADLINE_COUNTRY[0]}]}}\n"
            "      providers: [sms_first, sms_second]\n"
            f"      delivery: {{deliver_within: {DELIVER_WITHIN}s, failover: true}}\n")


def vendor_instance(args, root):
    """The "vendor": a sandbox gateway whose Twilio, Sinch and Vonage emulators every instance calls. Its own
    providers are those three, on its own emulators (they take the emulators' callbacks); the default
    sandbox's IDaaS provider would read its area codes from the gateway's own port before that port listens,
    which holds a debug build's startup for the 10 s vendor timeout."""
    vendor = Instance("vendor", args.binary, root, gw.free_port(), [])
    config = os.path.join(root, "vendor.yaml")
    with open(config, "w") as file:
        file.write("sandbox: true\n" + providers_yaml(vendor))
    vendor.extra = ["--config", config]
    return vendor


def set_vendor_secrets():
    os.environ[TOKEN_VARIABLE] = TWILIO["auth_token"]
    os.environ[SINCH_VARIABLE] = SINCH["application_secret"]
    os.environ[VONAGE_VARIABLE] = VONAGE["api_secret"]
    os.environ[VONAGE_SIGNATURE_VARIABLE] = VONAGE["signature_secret"]
    os.environ[OWN_CODE_VARIABLE] = "multi-instance check own-code secret, 32 bytes or more"


class Violations:
    def __init__(self):
        self.lock = threading.Lock()
        self.items = []
        self.began = time.monotonic()
        self.phase = "setup"

    def add(self, text):
        with self.lock:
            if len(self.items) < 10000:
                self.items.append(f"[{time.monotonic() - self.began:6.1f}s {self.phase}] {text}")


VIOLATIONS = Violations()


# MARK: - PostgreSQL

class Postgres:
    """A throwaway cluster in a temporary directory; as root it runs as `postgres` (initdb refuses root)."""

    def __init__(self, root):
        versions = sorted((int(os.path.basename(os.path.dirname(os.path.dirname(path)))), os.path.dirname(path))
                          for path in glob.glob("/usr/lib/postgresql/*/bin/initdb")
                          if os.path.basename(os.path.dirname(os.path.dirname(path))).isdigit())
        if not versions:
            raise SystemExit("no PostgreSQL under /usr/lib/postgresql (apt-get install postgresql)")
        self.bin = versions[-1][1]
        self.dir = os.path.join(root, "pg")
        os.makedirs(self.dir)
        self.user = "postgres" if os.geteuid() == 0 else None
        if self.user:
            shutil.chown(root, self.user)
            shutil.chown(self.dir, self.user)
        self.data = os.path.join(self.dir, "data")
        self.port = gw.free_port()
        self.url = f"postgres://gateway@127.0.0.1:{self.port}/postgres?sslmode=disable"
        self.running = False

    def tool(self, name, *arguments, check=True):
        argv = ([ "/usr/sbin/runuser", "-u", self.user, "--"] if self.user else []) + [os.path.join(self.bin, name), *arguments]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        if check and done.returncode != 0:
            raise SystemExit(f"{name} failed: {done.stdout}{done.stderr}")
        return done

    def watchdog(self, root):
        """A shell that outlives this script only if it dies without cleaning up (SIGKILL): it then kills the
        gateways it started and stops the cluster. Killed by the script's own cleanup otherwise."""
        stop = ("/usr/sbin/runuser -u postgres -- " if self.user else "") + \
            f"{os.path.join(self.bin, 'pg_ctl')} -D {self.data} -m immediate -w stop"
        script = (f"while kill -0 {os.getpid()} 2>/dev/null; do sleep 1; done; "
                  f"for p in $(cat {root}/pids 2>/dev/null); do kill -9 $p 2>/dev/null; done; {stop}")
        return subprocess.Popen(["/bin/sh", "-c", script], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)

    def init(self):
        self.tool("initdb", "-D", self.data, "-U", "gateway", "--auth=trust", "-E", "UTF8", "--no-sync")
        self.start()

    def start(self):
        options = (f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c synchronous_commit=off -c max_connections=300")
        self.tool("pg_ctl", "-D", self.data, "-o", options, "-l", os.path.join(self.dir, "log"), "-w", "start")
        self.running = True

    def stop(self, mode="fast"):
        self.tool("pg_ctl", "-D", self.data, "-m", mode, "-w", "stop", check=False)
        self.running = False


# MARK: - HTTP

class Answer:
    __slots__ = ("status", "body", "seconds", "error", "instance", "started", "headers_replayed")

    def __init__(self, status, body, seconds, error, instance, started, replayed=None):
        self.status, self.body, self.seconds, self.error = status, body, seconds, error
        self.instance, self.started, self.headers_replayed = instance, started, replayed

    @property
    def code(self):
        error = self.body.get("error") if isinstance(self.body, dict) else None
        return error.get("code") if isinstance(error, dict) else None


class Instance:
    def __init__(self, name, binary, root, port, extra):
        self.name, self.binary, self.port, self.extra = name, binary, port, extra
        self.data_dir = os.path.join(root, name)
        self.log = os.path.join(root, name + ".log")
        self.process = None
        self.epoch = 0  # bumped by each kill: a request begun before it may lose its connection
        self.down = False
        self.orphaned = set()
        self.base = f"http://127.0.0.1:{port}"

    def start(self):
        self.process, _ = gw.start(self.binary, self.data_dir, port=self.port, extra=self.extra, log_path=self.log)
        with open(os.path.join(os.path.dirname(self.data_dir), "pids"), "a") as pids:  # for the watchdog
            pids.write(f"{self.process.pid}\n")
        self.down = False

    def kill9(self, client):
        with client.lock:  # the verifications this instance may hold a check lease on when it dies
            self.orphaned = {path.split("/")[3] for path, n in client.inflight[self.name].items()
                             if n > 0 and path.count("/") >= 4}
        self.down = True
        self.epoch += 1
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


class Client:
    """Counts every request of the current phase."""

    def __init__(self, hang_bound):
        self.hang_bound = hang_bound
        self.lock = threading.Lock()
        self.phase = None
        self.answers = []
        self.inflight = collections.defaultdict(collections.Counter)  # instance name -> paths in flight
        self.slow = []  # (phase, answer, path): judged at the end (a dead instance's lease may explain them)

    def begin(self, phase):
        VIOLATIONS.phase = phase
        with self.lock:
            self.phase = phase
            self.answers = []

    def call(self, instance, method, path, body=None, key=gw.KEY, headers=None, record=True):
        data = None if body is None else json.dumps(body).encode()
        all_headers = {"Connection": "close"}
        if key:
            all_headers["Authorization"] = f"Bearer {key}"
        if data is not None:
            all_headers["Content-Type"] = "application/json"
        all_headers.update(headers or {})
        epoch = instance.epoch
        began = time.monotonic()
        status, parsed, error, replayed = None, {}, None, None
        try:
            with self.lock:
                self.inflight[instance.name][path] += 1
            connection = http.client.HTTPConnection(
                "127.0.0.1", instance.port, timeout=self.hang_bound + CHECK_LEASE + 10)
            try:
                connection.request(method, path, body=data, headers=all_headers)
                response = connection.getresponse()
                raw = response.read()
                status = response.status
                replayed = response.getheader("Idempotent-Replayed")
                try:
                    parsed = json.loads(raw) if raw else {}
                except ValueError:
                    parsed = {"raw": raw[:200].decode(errors="replace")}
            finally:
                connection.close()
        except (OSError, http.client.HTTPException) as failure:
            error = type(failure).__name__
        seconds = time.monotonic() - began
        with self.lock:
            self.inflight[instance.name][path] -= 1
        answer = Answer(status, parsed, seconds, error, instance, began, replayed)
        if error and not (instance.down or instance.epoch != epoch):
            VIOLATIONS.add(f"{instance.name} {method} {path}: {error} after {seconds:.2f}s (instance not killed)")
        if seconds > self.hang_bound and not (instance.down or instance.epoch != epoch):
            with self.lock:
                self.slow.append((VIOLATIONS.phase, answer, method, path))
        if status is not None and status >= 500:
            if status != 503 or answer.code != "store_unavailable" or not shaped(parsed):
                VIOLATIONS.add(f"{instance.name} {method} {path}: {status} {json.dumps(parsed)[:200]}")
        if record:
            with self.lock:
                self.answers.append((self.phase, answer))
        return answer


def shaped(body):
    error = body.get("error") if isinstance(body, dict) else None
    return isinstance(error, dict) and all(k in error for k in ("code", "message", "retryable", "request_id"))


# MARK: - The ledger: what the clients were told

class Ledger:
    def __init__(self):
        self.lock = threading.Lock()
        self.started = {}  # id -> (instance that answered 201, phase)
        self.approvals = collections.Counter()  # id -> `200 approved` answers
        self.counted_wrong = collections.defaultdict(list)  # id -> attempts_remaining of answers that spent one
        self.flows = collections.Counter()
        self.tokens = {}  # instance name -> the newest verification token it issued

    def start(self, vid, instance, phase):
        with self.lock:
            self.started.setdefault(vid, (instance.name, phase))


LEDGER = Ledger()


def note_checks(vid, answers):
    with LEDGER.lock:
        for answer in answers:
            if answer.status == 200 and answer.body.get("status") == "approved":
                LEDGER.approvals[vid] += 1
                if answer.body.get("token"):
                    LEDGER.tokens[answer.instance.name] = answer.body["token"]
            # 422 incorrect_code spends an attempt; so does the wrong code that spends the last one (429
            # max_attempts_reached with attempts_remaining 0 and the "Wrong code" message).
            if answer.status == 422 and answer.code == "incorrect_code":
                LEDGER.counted_wrong[vid].append(answer.body["error"].get("attempts_remaining"))
            elif answer.status == 429 and answer.code == "max_attempts_reached" and \
                    answer.body["error"].get("message", "").startswith("Wrong code"):
                LEDGER.counted_wrong[vid].append(0)


# MARK: - Flows

class Load:
    def __init__(self, client, vendor, instances, users, number_base):
        self.client, self.vendor, self.instances, self.users = client, vendor, instances, users
        self.counter = 0
        self.number = number_base
        self.lock = threading.Lock()
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=users * 8)

    def next(self):
        with self.lock:
            self.counter += 1
            self.number += 1
            return self.counter, f"+4475{self.number:08d}"

    def together(self, calls):
        futures = [self.pool.submit(call) for call in calls]
        return [future.result() for future in futures]

    def flow(self, active, phase, stop=None):
        """One user's flow; once `stop` is set (the phase is over) it ends before its checks, leaving its
        verification pending, so a phase ends within one start of its length."""
        index, to = self.next()
        ups = [i for i in active if not i.down]
        if not ups:
            time.sleep(0.05)
            return "no instance up"
        a, b, c = ups[index % len(ups)], ups[(index + 1) % len(ups)], ups[(index + 2) % len(ups)]
        key = str(uuid.uuid4())
        body = {"to": to, "provider": "twilio"}
        first = self.client.call(a, "POST", "/v1/verifications", body, headers={"Idempotency-Key": key})
        if first.status != 201:
            time.sleep(0.05)  # a client backs off a little before it tries again
            return f"start {first.status or first.error} {first.code or ''}".strip()
        vid = first.body["id"]
        LEDGER.start(vid, a, phase)
        replay = self.client.call(b, "POST", "/v1/verifications", body, headers={"Idempotency-Key": key})
        if replay.status in (200, 201):
            if replay.body.get("id") != vid:
                VIOLATIONS.add(f"replay of {key} on {b.name} gave {replay.body.get('id')}, not {vid} from {a.name}")
        elif replay.status is not None and replay.status != 503:
            VIOLATIONS.add(f"replay of {key} on {b.name}: {replay.status} {replay.code}")
        code = None
        for _ in range(50):
            outbox = self.client.call(self.vendor, "GET", "/sandbox/outbox?to=" + urllib.parse.quote(to), key=None)
            messages = outbox.body.get("messages") or []
            code = messages[-1].get("code") if messages else None
            if code:
                break
            time.sleep(0.02)
        if not code:
            VIOLATIONS.add(f"{vid}: no code in the vendor's outbox for {to}")
            return "no code"
        if stop is not None and stop.is_set():
            return "stopped"
        wrong = "000000" if code != "000000" else "111111"
        check = lambda instance, value: (lambda: self.client.call(
            instance, "POST", f"/v1/verifications/{vid}/check", {"code": value}))
        if index % 4 == 0:
            # More wrong codes than the limit, at once, across the instances.
            targets = [a, b, c] * 3
            answers = self.together([check(t, wrong) for t in targets[:MAX_ATTEMPTS + 3]])
            note_checks(vid, answers)
            final = self.client.call(c, "POST", f"/v1/verifications/{vid}/check", {"code": code})
            note_checks(vid, [final])
            if final.status == 200:
                spent = [x for x in answers if x.status in (422, 429)]
                if len(spent) == len(answers):
                    VIOLATIONS.add(f"{vid}: approved after {len(answers)} wrong codes (limit {MAX_ATTEMPTS})")
            return "attempts flow"
        note_checks(vid, self.together([check(b, wrong), check(c, wrong)]))
        pair = self.together([check(a, code), check(b, code)])
        note_checks(vid, pair)
        outcomes = sorted(f"{x.status} {x.body.get('status') or x.code}" for x in pair)
        if all(x.status is not None and x.status < 500 for x in pair):
            if outcomes != ["200 approved", "409 already_approved"]:
                VIOLATIONS.add(f"{vid}: right code on {a.name} and {b.name} at once gave {outcomes}")
            return "approved"
        return "checks interrupted"

    def run(self, phase, active, seconds, during=None):
        """Runs flows for `seconds` (or until `during` returns); `during` runs in this thread meanwhile."""
        self.client.begin(phase)
        stop = threading.Event()
        tally = collections.Counter()
        tally_lock = threading.Lock()
        finished = [0]

        def user():
            while not stop.is_set():
                outcome = self.flow(active, phase, stop)
                with tally_lock:
                    tally[outcome] += 1
                    if outcome in ("approved", "attempts flow"):
                        finished[0] += 1

        threads = [threading.Thread(target=user, daemon=True) for _ in range(self.users)]
        began = time.monotonic()
        for thread in threads:
            thread.start()
        if during:
            during()
        remaining = seconds - (time.monotonic() - began)
        if remaining > 0:
            time.sleep(remaining)
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
        elapsed = time.monotonic() - began
        with self.client.lock:
            answers = [a for p, a in self.client.answers if p == phase]
        return {"phase": phase, "seconds": elapsed, "flows": finished[0], "requests": len(answers),
                "tally": dict(tally), "answers": answers}


def cpu_seconds(instances):
    """User + system CPU seconds each gateway process has used (from /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    used = {}
    for instance in instances:
        try:
            with open(f"/proc/{instance.process.pid}/stat") as file:
                fields = file.read().rsplit(")", 1)[1].split()
            used[instance.name] = (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            used[instance.name] = 0.0
    return used


def summary(result):
    answers = result["answers"]
    latencies = sorted(a.seconds for a in answers if a.status is not None)
    p50 = statistics.median(latencies) * 1000 if latencies else 0
    p95 = latencies[int(len(latencies) * 0.95) - 1] * 1000 if len(latencies) > 20 else 0
    statuses = collections.Counter(str(a.status or a.error) for a in answers)
    return (f"{result['phase']:<14} {result['seconds']:5.1f}s  {result['flows'] / result['seconds']:7.1f} flows/s  "
            f"{result['requests'] / result['seconds']:7.1f} req/s  p50 {p50:5.1f} ms  p95 {p95:6.1f} ms  "
            f"statuses {dict(statuses.most_common())}")


# MARK: - Phases with faults

def kill_phase(load, instances, seconds, victim=None):
    """kill -9 of `victim` (instance C by default) 30% into `seconds` of load, and its restart a second later:
    every start it answered before it died must be readable on it after."""
    victim = victim or instances[2]
    report = {}

    def during():
        time.sleep(seconds * 0.3)
        before = [vid for vid, (name, _) in list(LEDGER.started.items()) if name == victim.name]
        victim.kill9(load.client)
        killed_at = time.monotonic()
        time.sleep(1.0)
        victim.start()
        report.update(restart=time.monotonic() - killed_at, answered_before=before)

    result = load.run("kill -9 " + victim.name, instances, seconds, during)
    # Every start C answered before it died is readable on C after its restart.
    missing = [vid for vid in report.get("answered_before", [])
               if load.client.call(victim, "GET", f"/v1/verifications/{vid}", record=False).status != 200]
    for vid in missing:
        VIOLATIONS.add(f"{vid}: answered by {victim.name} before kill -9, not readable after its restart")
    report.update(result=result, missing=missing)
    return report


def outage_phase(load, instances, postgres, outage, recovery_bound, lead=2.0, tail=3.0):
    """PostgreSQL stopped `lead` seconds into the load for `outage` seconds; the load goes on `tail` seconds
    after every instance has started verifications again."""
    report = {}

    def during():
        time.sleep(lead)
        stopped_at = time.monotonic()
        postgres.stop("fast")
        report["stopped"] = stopped_at
        time.sleep(max(0.0, outage - (time.monotonic() - stopped_at)))
        postgres.start()
        back = time.monotonic()
        report["down_seconds"] = back - stopped_at
        report["back"] = back
        recovered = {}
        deadline = back + recovery_bound
        while len(recovered) < len(instances) and time.monotonic() < deadline:
            for instance in instances:
                if instance.name in recovered:
                    continue
                _, to = load.next()
                probe = load.client.call(instance, "POST", "/v1/verifications", {"to": to, "provider": "twilio"})
                if probe.status == 201:
                    recovered[instance.name] = time.monotonic() - back
                    LEDGER.start(probe.body["id"], instance, "outage probe")
            time.sleep(0.1)
        report["recovered"] = recovered
        for instance in instances:
            if instance.name not in recovered:
                VIOLATIONS.add(f"{instance.name}: no successful start within {recovery_bound}s after PostgreSQL came back")
        time.sleep(tail)  # load after recovery

    result = load.run("pg outage", instances, 0, during)
    stopped, back = report.get("stopped", 0), report.get("back", 0)
    during_outage = [a for a in result["answers"] if stopped <= a.started < back and a.instance is not load.vendor]
    unavailable = sorted(a.seconds for a in during_outage if a.status == 503)
    report.update(result=result, unavailable=unavailable, during=len(during_outage),
                  other=collections.Counter(f"{a.status or a.error}" for a in during_outage if a.status != 503))
    for instance in instances:
        if instance.process.poll() is not None:
            VIOLATIONS.add(f"{instance.name} exited ({instance.process.returncode}) during the outage")
    if not unavailable:
        VIOLATIONS.add("no 503 store_unavailable while PostgreSQL was stopped")
    return report


def jwks_check(client, instances):
    """Every instance on the shared store serves the same JWKS, so a token from one verifies with another's."""
    sets = {}
    for instance in instances:
        answer = client.call(instance, "GET", "/.well-known/jwks.json", key=None, record=False)
        sets[instance.name] = json.dumps(answer.body.get("keys"), sort_keys=True)
    if len(set(sets.values())) != 1 or not json.loads(next(iter(sets.values())) or "null"):
        VIOLATIONS.add(f"instances serve different JWKS: {sets}")
    kids = [key.get("kid") for key in json.loads(next(iter(sets.values())) or "[]") or []]
    return f"JWKS: {'the same' if len(set(sets.values())) == 1 else 'DIFFERENT'} on {', '.join(sets)} (kid {kids})"


# ES256 (ECDSA on P-256 with SHA-256), verified with integers: the script stays stdlib only.
P256_P = 2**256 - 2**224 + 2**192 + 2**96 - 1
P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551
P256_G = (0x6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296,
          0x4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5)


def p256_add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    if a[0] == b[0] and (a[1] + b[1]) % P256_P == 0:
        return None
    if a == b:
        slope = (3 * a[0] * a[0] - 3) * pow(2 * a[1], -1, P256_P) % P256_P
    else:
        slope = (b[1] - a[1]) * pow(b[0] - a[0], -1, P256_P) % P256_P
    x = (slope * slope - a[0] - b[0]) % P256_P
    return x, (slope * (a[0] - x) - a[1]) % P256_P


def p256_multiply(k, point):
    result = None
    while k:
        if k & 1:
            result = p256_add(result, point)
        point = p256_add(point, point)
        k >>= 1
    return result


def b64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def es256_verifies(token, jwk):
    """Whether the compact JWS `token` carries a valid ES256 signature by the public key `jwk`."""
    try:
        header, claims, signature = token.split(".")
        raw = b64url(signature)
        if json.loads(b64url(header)).get("alg") != "ES256" or len(raw) != 64 or jwk.get("crv") != "P-256":
            return False
        r, s = int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")
        if not (0 < r < P256_N and 0 < s < P256_N):
            return False
        q = (int.from_bytes(b64url(jwk["x"]), "big"), int.from_bytes(b64url(jwk["y"]), "big"))
        e = int.from_bytes(hashlib.sha256(f"{header}.{claims}".encode()).digest(), "big")
        w = pow(s, -1, P256_N)
        point = p256_add(p256_multiply(e * w % P256_N, P256_G), p256_multiply(r * w % P256_N, q))
        return point is not None and point[0] % P256_N == r
    except (ValueError, KeyError, TypeError):
        return False


def token_check(client, instances):
    """A verification token issued by each instance verifies with every instance's JWKS."""
    keys = {}
    for instance in instances:
        answer = client.call(instance, "GET", "/.well-known/jwks.json", key=None, record=False)
        keys[instance.name] = answer.body.get("keys") or []
    verified, tried = 0, 0
    for issuer, token in sorted(LEDGER.tokens.items()):
        kid = json.loads(b64url(token.split(".")[0])).get("kid")
        for instance in instances:
            tried += 1
            jwk = next((k for k in keys[instance.name] if k.get("kid") == kid), None)
            if jwk is not None and es256_verifies(token, jwk):
                verified += 1
            else:
                VIOLATIONS.add(f"a token issued by {issuer} (kid {kid}) does not verify with {instance.name}'s JWKS")
    missing = [i.name for i in instances if i.name not in LEDGER.tokens]
    if missing:
        VIOLATIONS.add(f"no verification token seen from {', '.join(missing)}")
    return (f"tokens: one issued by each of {', '.join(sorted(LEDGER.tokens))} verified with every instance's JWKS "
            f"({verified} of {tried} ES256 signatures)")


# MARK: - Crashes mid-start and mid-check (issue 31)

def vendor_sends(client, vendor, to):
    outbox = client.call(vendor, "GET", "/sandbox/outbox?to=" + urllib.parse.quote(to), key=None, record=False)
    return len(outbox.body.get("messages") or [])


def set_faults(client, vendor, plugin, faults):
    answer = client.call(vendor, "PUT", f"/sandbox/faults/{plugin}", faults, record=False)
    if answer.status != 200:
        VIOLATIONS.add(f"PUT /sandbox/faults/{plugin} on the vendor: {answer.status or answer.error}")


# The keyed starts of the crash phase, by what their vendor can say of a start whose instance died (the
# vendor's Sinch, Twilio and Vonage emulators, each slowed to CRASH_LATENCY_MS):
# - "sinch": Sinch gets the start; the retry finds it by its reference (the gateway id) and answers it, 201;
# - "sinch-lost": Sinch answers 503 after the latency, sending nothing; the retry finds nothing under the
#   reference and, once the dead call can no longer arrive (the provider's 10 s request timeout after it
#   began), starts anew under the same id, 201, one send;
# - "twilio": Twilio gets the start; the retry finds the number's pending verification by its `To`, 201;
# - "vonage": Vonage has no lookup; the retry answers 409 idempotency_outcome_unknown (not retryable).
LOOKUP_KINDS = ("sinch", "sinch-lost", "twilio")


def deadline_phase(client, vendor, instances, count, lease):
    """Issue 47: kill -9 of the instance that holds pending delivery deadlines. `count` verifications start on
    C through sms_first, whose vendor answers and then delivers nothing and sends no receipt; C is killed just
    as their deadlines come due (it may have claimed some) and restarted. Holds: every verification fails over
    exactly once, to sms_second (one `delivery_failover` resend, one sms_second message per number at the
    vendor), within the deadline plus the claim's lease plus 10 s; the code it carries approves."""
    client.begin("deadlines")
    victim = instances[2]
    set_faults(client, vendor, "twilio_messaging",
               {"delivery_rate_by_country": {DEADLINE_COUNTRY[0]: 0},
                "undelivered_receipt_rate_by_country": {DEADLINE_COUNTRY[0]: 0}})
    base = int(time.time() * 1000) % 10_000
    numbers = [f"{DEADLINE_COUNTRY[1]}{(base + i) % 10_000:04d}" for i in range(count)]
    started = {}
    for to in numbers:
        answer = client.call(victim, "POST", "/v1/verifications", {"to": to, "channel": "sms"}, record=False)
        if answer.status != 201 or answer.body.get("provider") != "sms_first":
            VIOLATIONS.add(f"deadlines: start to {to} on C: {answer.status} {json.dumps(answer.body)[:200]}")
            continue
        started[to] = answer.body["id"]
    began = time.monotonic()
    time.sleep(DELIVER_WITHIN + 0.4)
    victim.kill9(client)
    killed = time.monotonic()
    victim.start()
    restarted = time.monotonic()
    bound = DELIVER_WITHIN + lease + 10
    pending = dict(started)
    moved = {}
    while pending and time.monotonic() - began < bound:
        for to, vid in list(pending.items()):
            answer = client.call(instances[0], "GET", f"/v1/verifications/{vid}", record=False)
            if answer.body.get("provider") == "sms_second":
                moved[to] = time.monotonic() - began
                del pending[to]
        time.sleep(0.5)
    for to in pending:
        VIOLATIONS.add(f"deadlines: {started[to]} to {to} did not fail over within {bound:.0f}s of its start")
    time.sleep(1.5)  # a second failover, were there one, would be on its way
    approved = 0
    for to, vid in started.items():
        read = client.call(instances[1], "GET", f"/v1/verifications/{vid}?include=timeline", record=False)
        reasons = [e["detail"].get("delivery_failover") for e in read.body.get("timeline", [])
                   if e.get("kind") == "resent" and e.get("detail", {}).get("delivery_failover")]
        outbox = client.call(vendor, "GET", "/sandbox/outbox?to=" + urllib.parse.quote(to), key=None, record=False)
        sent = [m.get("provider") for m in outbox.body.get("messages") or []]
        if len(reasons) != 1 or read.body.get("sends") != 2 or sent != ["vonage_sms"]:
            VIOLATIONS.add(f"deadlines: {vid}: failovers {reasons}, sends {read.body.get('sends')}, "
                           f"delivered by {sent} (one failover, two sends, one delivered message expected)")
            continue
        code = outbox.body["messages"][0].get("code")
        check = client.call(instances[1], "POST", f"/v1/verifications/{vid}/check", {"code": code}, record=False)
        approved += check.status == 200 and check.body.get("status") == "approved"
    if approved != len(started):
        VIOLATIONS.add(f"deadlines: {approved} of {len(started)} failed-over codes approved")
    set_faults(client, vendor, "twilio_messaging", {})
    times = sorted(moved.values())
    return (f"delivery deadlines: {len(started)} verifications on C, kill -9 {killed - began:.1f}s after the starts "
            f"(deliver_within {DELIVER_WITHIN}s), C healthy again in {restarted - killed:.1f}s; each failed over once "
            f"to sms_second, {times[0] if times else 0:.1f}-{times[-1] if times else 0:.1f}s after its start "
            f"(bound {bound:.0f}s); {approved} approved")


def crash_kinds(keys):
    lost, twilio, vonage = max(1, keys // 8), max(1, keys // 8), max(1, keys // 4)
    return ["sinch-lost"] * lost + ["sinch"] * max(1, keys - lost - twilio - vonage) + ["twilio"] * twilio \
        + ["vonage"] * vonage


def crash_phase(load, victim, retry_on, keys, latency, lease, check_bound):
    """kill -9 of `victim` while `keys` starts (each with an Idempotency-Key, on Sinch, Twilio and Vonage) and
    one check with the right code are at slow vendors; then the check is retried on the restarted victim, and
    every key on `retry_on` until an answer that is not `idempotency_conflict` ("still in progress, retry").

    Holds: every key is answered within its claim's lease of the kill: 201 (the same id on a second retry) for
    the vendors that can look a start up, 409 idempotency_outcome_unknown (not retryable) for Vonage, which
    cannot; no number gets two sends; the right code approves within `check_bound` seconds of the restart with
    the dead check's attempt given back."""
    client = load.client
    client.begin("crash mid-start")
    report = {}
    # A verification to check, and its code, while the vendor is fast.
    _, checked_to = load.next()
    started = client.call(victim, "POST", "/v1/verifications", {"to": checked_to, "provider": "twilio"})
    if started.status != 201:
        VIOLATIONS.add(f"crash phase: start on {victim.name}: {started.status} {started.code}")
        return report
    vid = started.body["id"]
    LEDGER.start(vid, victim, "crash mid-start")
    code = None
    for _ in range(100):
        outbox = client.call(load.vendor, "GET", "/sandbox/outbox?to=" + urllib.parse.quote(checked_to), key=None,
                             record=False)
        messages = outbox.body.get("messages") or []
        code = messages[-1].get("code") if messages else None
        if code:
            break
        time.sleep(0.02)
    if not code:
        VIOLATIONS.add(f"crash phase: no code for {vid}")
        return report
    requests = []
    for kind in crash_kinds(keys):
        _, to = load.next()
        provider = "sinch" if kind.startswith("sinch") else kind
        requests.append((str(uuid.uuid4()), to, {"to": to, "provider": provider}, kind))
    lost = [r for r in requests if r[3] == "sinch-lost"]
    in_flight = []

    def send(batch):
        for key, _, body, _ in batch:
            in_flight.append(load.pool.submit(client.call, victim, "POST", "/v1/verifications", body,
                                              headers={"Idempotency-Key": key}, record=False))

    # First the starts Sinch will drop: each draws the fault as it arrives (a 503 after the latency, nothing
    # sent); then the vendors are slow for everything else.
    set_faults(client, load.vendor, "sinch", {"latency_ms": latency, "server_error_status": 503,
                                              "remaining": len(lost)})
    send(lost)
    wait_until = time.monotonic() + 5
    while time.monotonic() < wait_until and vendor_fault_remaining(client, load.vendor, "sinch") is not None:
        time.sleep(0.02)
    for plugin in ("sinch", "twilio", "vonage"):
        set_faults(client, load.vendor, plugin, {"latency_ms": latency})
    send([r for r in requests if r[3] != "sinch-lost"])
    in_flight.append(load.pool.submit(client.call, victim, "POST", f"/v1/verifications/{vid}/check",
                                      {"code": code}, record=False))
    time.sleep(min(0.8, latency / 4000))  # every request has reached its vendor, none has its answer
    victim.kill9(client)
    killed = time.monotonic()
    for plugin in ("sinch", "twilio", "vonage"):
        set_faults(client, load.vendor, plugin, {})
    for future in in_flight:
        future.result()
    victim.start()
    restarted = time.monotonic()
    report["restart"] = restarted - killed
    # The right code again, on the restarted instance: the dead check's lease must not hold it up.
    check = client.call(victim, "POST", f"/v1/verifications/{vid}/check", {"code": code})
    report["check"] = time.monotonic() - restarted
    report["check_answer"] = f"{check.status} {check.body.get('status') or check.code}"
    note_checks(vid, [check])
    if check.status != 200 or check.body.get("status") != "approved":
        VIOLATIONS.add(f"crash phase: right code after the restart answered {report['check_answer']}")
    elif report["check"] > check_bound:
        VIOLATIONS.add(f"crash phase: right code approved {report['check']:.2f}s after the restart (> {check_bound}s)")
    after = client.call(victim, "GET", f"/v1/verifications/{vid}", record=False)
    report["attempts_remaining"] = after.body.get("attempts_remaining")
    if report["attempts_remaining"] != MAX_ATTEMPTS - 1:
        VIOLATIONS.add(f"crash phase: {vid} has {report['attempts_remaining']} attempts left after one check "
                       f"answered and one lost in the crash (the lost one's attempt is given back: {MAX_ATTEMPTS - 1})")
    # Every key, retried until it gets an answer that is not "still in progress".
    pending = {key: (to, body, kind) for key, to, body, kind in requests}
    answers, conflicts = {}, collections.Counter()
    deadline = killed + lease + 5
    turn = 0
    while pending and time.monotonic() < deadline:
        for key, (to, body, kind) in list(pending.items()):
            instance = retry_on[turn % len(retry_on)]
            turn += 1
            answer = client.call(instance, "POST", "/v1/verifications", body, headers={"Idempotency-Key": key})
            if answer.status == 409 and answer.code == "idempotency_conflict" or answer.status == 503:
                conflicts[key] += 1
                continue
            answers[key] = (answer, time.monotonic() - killed)
            del pending[key]
        if pending:
            time.sleep(0.25)
    for key, (_, _, kind) in pending.items():
        VIOLATIONS.add(f"crash phase: {kind} key {key} still answered idempotency_conflict {lease + 5:.0f}s after the kill")
    kinds = collections.defaultdict(collections.Counter)
    per_key = []
    for key, (answer, seconds) in answers.items():
        to, body, kind = pending_of(requests, key)
        outcome = f"{answer.status} {answer.code or answer.body.get('status')}"
        kinds[kind][outcome] += 1
        per_key.append((kind, outcome, seconds, conflicts[key]))
        if seconds > lease:
            VIOLATIONS.add(f"crash phase: {kind} key {key} answered {outcome} {seconds:.1f}s after the kill "
                           f"(claim lease {lease:.0f}s)")
        if kind in LOOKUP_KINDS:
            if answer.status != 201:
                VIOLATIONS.add(f"crash phase: {kind} key {key} (its vendor can look the start up) answered {outcome}")
                continue
            LEDGER.start(answer.body["id"], answer.instance, "crash mid-start")
            again = client.call(retry_on[0], "POST", "/v1/verifications", body, headers={"Idempotency-Key": key})
            if again.status != 201 or again.body.get("id") != answer.body["id"] \
                    or again.headers_replayed != "true":
                VIOLATIONS.add(f"crash phase: key {key} answered {answer.body['id']}, then {again.status} "
                               f"{again.body.get('id') or again.code}")
        else:
            error = answer.body.get("error") or {}
            if not (answer.status == 409 and answer.code == "idempotency_outcome_unknown"
                    and error.get("retryable") is False and "new Idempotency-Key" in error.get("message", "")):
                VIOLATIONS.add(f"crash phase: {kind} key {key} (no lookup) answered {outcome}, not the documented "
                               f"409 idempotency_outcome_unknown (not retryable, start with a new key)")
    time.sleep(max(0.0, killed + latency / 1000 + 0.5 - time.monotonic()))  # the vendors have answered them all
    sends = collections.Counter(vendor_sends(client, load.vendor, to) for _, to, _, _ in requests)
    twice = sum(n for count, n in sends.items() if count > 1)
    if twice:
        VIOLATIONS.add(f"crash phase: {twice} numbers got two or more sends")
    unsent = [kind for _, to, _, kind in requests if vendor_sends(client, load.vendor, to) == 0]
    if unsent:
        VIOLATIONS.add(f"crash phase: numbers with no send at all: {collections.Counter(unsent)}")
    seconds = [s for _, s in answers.values()]
    report.update(keys=keys, kinds={kind: dict(counter) for kind, counter in kinds.items()}, sends=dict(sends),
                  twice=twice, pending=len(pending), slowest=max(seconds, default=0),
                  fastest=min(seconds, default=0), conflicts=sum(conflicts.values()), per_key=sorted(per_key))
    return report


def pending_of(requests, key):
    return next((to, body, kind) for k, to, body, kind in requests if k == key)


def vendor_fault_remaining(client, vendor, plugin):
    """How many requests the emulator's counted faults still hit; None once they all drew theirs (cleared)."""
    answer = client.call(vendor, "GET", f"/sandbox/faults/{plugin}", record=False)
    return (answer.body or {}).get("remaining")


def crash_summary(report, lease):
    if not report:
        return "crash mid-start: not run"
    lines = [f"crash mid-start: {report['keys']} keyed starts and a right code at slow vendors during kill -9; "
             f"restart {report['restart']:.1f}s; right code after restart {report['check_answer']} in "
             f"{report['check']:.2f}s (attempts left {report['attempts_remaining']})"]
    for kind, outcome, seconds, conflicts in report["per_key"]:
        lines.append(f"  key on {kind:<10} {outcome:<40} {seconds:5.1f}s after the kill "
                     f"({conflicts} 'retry shortly' answers before)")
    lines.append(f"keys answered {report['fastest']:.1f}-{report['slowest']:.1f}s after the kill (claim lease "
                 f"{lease:.0f}s), {report['pending']} unanswered; answers {report['kinds']}; vendor sends per "
                 f"number {report['sends']}: {report['twice']} numbers sent twice")
    return "\n".join(lines)


# MARK: - Final checks

def judge_slow(client, instances, hang_bound):
    """Answers slower than the bound are violations, except checks of a verification a killed instance was
    working on (its check lease lapses after CHECK_LEASE seconds): those within CHECK_LEASE + the bound."""
    orphaned = set().union(*(i.orphaned for i in instances))
    waited = []
    for phase, answer, method, path in client.slow:
        vid = path.split("/")[3] if path.count("/") >= 4 else None
        if vid in orphaned and answer.status is not None and answer.seconds <= CHECK_LEASE + hang_bound:
            waited.append(answer.seconds)
            continue
        VIOLATIONS.items.append(f"[{phase}] {answer.instance.name} {method} {path}: "
                                f"{answer.status or answer.error} after {answer.seconds:.2f}s (> {hang_bound}s)")
    return orphaned, waited


def final_checks(client, instances, parallel):
    ids = list(LEDGER.started)

    def read(vid):
        seen = []
        for instance in instances:
            answer = client.call(instance, "GET", f"/v1/verifications/{vid}", record=False)
            if answer.status != 200 or answer.body.get("id") != vid:
                VIOLATIONS.add(f"{vid} (answered 201 by {LEDGER.started[vid][0]}) on {instance.name}: "
                               f"{answer.status or answer.error} {answer.code or ''}")
                continue
            seen.append(answer.body)
        return vid, seen

    statuses = collections.Counter()
    with concurrent.futures.ThreadPoolExecutor(parallel) as pool:
        for vid, seen in pool.map(read, ids):
            if not seen:
                continue
            states = {(body["status"], body["attempts_remaining"]) for body in seen}
            if len(states) > 1:
                VIOLATIONS.add(f"{vid}: instances disagree: {states}")
            status, remaining = seen[0]["status"], seen[0]["attempts_remaining"]
            statuses[status] += 1
            if remaining < 0:
                VIOLATIONS.add(f"{vid}: attempts_remaining {remaining}")
            if LEDGER.approvals[vid] > 1:
                VIOLATIONS.add(f"{vid}: approved {LEDGER.approvals[vid]} times")
            if LEDGER.approvals[vid] == 1 and status != "approved":
                VIOLATIONS.add(f"{vid}: a check answered approved, but it reads {status}")
            spent = LEDGER.counted_wrong.get(vid, [])
            if len(spent) > MAX_ATTEMPTS or len(spent) != len(set(spent)):
                VIOLATIONS.add(f"{vid}: wrong codes counted {len(spent)} times, remaining seen {sorted(spent)}")
    return len(ids), statuses


# MARK: - Main

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(gw.ROOT, ".build", "debug", "gateway"))
    parser.add_argument("--users", type=int, default=24, help="concurrent users (16 to 32 is the intent)")
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds of load with one instance, and again with three (split over --rounds)")
    parser.add_argument("--rounds", type=int, default=2, help="alternations of the 1- and 3-instance runs")
    parser.add_argument("--kill-seconds", type=float, default=15.0, help="length of the kill -9 phase")
    parser.add_argument("--outage", type=float, default=10.0, help="seconds PostgreSQL stays stopped")
    parser.add_argument("--hang-bound", type=float, default=8.0,
                        help="no answer may take longer (store_timeout is 5 s)")
    parser.add_argument("--recovery-bound", type=float, default=20.0,
                        help="seconds each instance gets to start verifications again after PostgreSQL is back")
    parser.add_argument("--short", action="store_true",
                        help="CI (at most 60 s): 16 users, 4 s phases, 6 s kill phase, 8 keys, shorter load around the outage")
    parser.add_argument("--sqlite", action="store_true",
                        help="one instance on its SQLite file: a kill -9 under load, and the crash mid-start and mid-check")
    parser.add_argument("--crash-keys", type=int, default=16, help="keyed starts at the vendor when an instance dies")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (logs)")
    args = parser.parse_args()
    if args.short:
        args.users, args.seconds, args.kill_seconds, args.rounds, args.crash_keys = 16, 4.0, 6.0, 1, 8
    if not os.access(args.binary, os.X_OK):
        raise SystemExit(f"{args.binary}: not built (swift build --product gateway)")
    root = tempfile.mkdtemp(prefix="gateway-multi-")
    os.chmod(root, 0o755)
    started = []
    postgres = None
    watchdog = None
    client = Client(args.hang_bound)
    began = time.monotonic()
    completed = False

    def interrupted(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)
    try:
        if args.sqlite:
            completed = sqlite_main(args, root, started, client)
        else:
            postgres = Postgres(root)
            watchdog = postgres.watchdog(root)
            postgres.init()
            migrated = subprocess.run([args.binary, "migrate", "--store", postgres.url], capture_output=True, text=True,
                                      timeout=60)
            print(f"postgres {postgres.bin} on 127.0.0.1:{postgres.port}; gateway migrate: "
                  f"{(migrated.stdout or migrated.stderr).strip()}")
            if migrated.returncode != 0:
                raise SystemExit("gateway migrate failed")
            vendor = vendor_instance(args, root)
            config = os.path.join(root, "instance.yaml")
            with open(config, "w") as file:
                file.write(
                    "# Sandbox (its API key, its own emulators unused) with real providers: the vendor's emulators.\n"
                    "sandbox: true\n"
                    + providers_yaml(vendor) + own_codes_yaml() +
                    f"store: '{postgres.url}'\n"
                    f"token: {{signing_key_env: {SIGNING_KEY_VARIABLE}}}\n"
                    f"policy: {{check_lease_seconds: {CHECK_LEASE}, start_deadline_seconds: {START_DEADLINE}}}\n"
                    "store_pool_size: 10\n"
                    "store_timeout: 5\n")
            set_vendor_secrets()
            # One token signing key for every instance on the shared store (they refuse to start without one).
            generated = subprocess.run([args.binary, "token-key", "generate"], capture_output=True, text=True,
                                       timeout=30, check=True)
            os.environ[SIGNING_KEY_VARIABLE] = generated.stdout
            instances = [Instance(name, args.binary, root, gw.free_port(), ["--config", config])
                         for name in ("A", "B", "C")]
            # The four start at once (each a few seconds on a busy machine); the instances call the vendor only
            # once requests come.
            start_all([vendor, *instances], started)
            print(f"vendor {vendor.base}; instances " + ", ".join(f"{i.name} {i.base}" for i in instances)
                  + f"; {args.users} users")
            load = Load(client, vendor, instances, args.users, number_base=int(time.time()) % 10_000 * 10_000)
            print(jwks_check(client, instances))

            # One instance against three, alternating in rounds so the shared machine's load drifts evenly.
            rounds = {1: [], 3: []}
            for round_index in range(args.rounds):
                for count in (1, 3):
                    cpu_before = cpu_seconds([vendor, *instances])
                    result = load.run(f"{count} instance{'s' if count > 1 else ''}", instances[:count],
                                      args.seconds / args.rounds)
                    cpu_after = cpu_seconds([vendor, *instances])
                    result["cpu"] = {name: cpu_after[name] - cpu_before[name] for name in cpu_after}
                    rounds[count].append(result)
                    print(summary(result) + f"  (round {round_index + 1})")
            rates = {}
            for count, results in rounds.items():
                seconds = sum(r["seconds"] for r in results)
                flows = sum(r["flows"] for r in results)
                requests = sum(r["requests"] for r in results)
                gateway_cpu = sum(r["cpu"][i.name] for r in results for i in instances)
                vendor_cpu = sum(r["cpu"]["vendor"] for r in results)
                rates[count] = flows / seconds
                print(f"{count} instance{'s' if count > 1 else ' '}: {flows / seconds:6.1f} flows/s, {requests / seconds:6.1f} req/s "
                      f"over {seconds:.0f}s; CPU per flow: instances {1000 * gateway_cpu / max(1, flows):.1f} ms, "
                      f"vendor {1000 * vendor_cpu / max(1, flows):.1f} ms")
            print(f"three instances / one: {rates[3] / max(1e-9, rates[1]):.2f}x flows/s (one machine: the instances, the "
                  f"vendor, PostgreSQL and this client share {os.cpu_count()} cores; load average "
                  f"{' '.join(f'{x:.2f}' for x in os.getloadavg())})")

            killed = kill_phase(load, instances, args.kill_seconds)
            print(summary(killed["result"]))
            print(f"kill -9 of C: {len(killed['answered_before'])} starts C had answered before it died, "
                  f"{len(killed['missing'])} missing after its restart ({killed['restart']:.1f}s to healthy again)")

            crashed = crash_phase(load, instances[2], instances[:2], args.crash_keys, CRASH_LATENCY_MS, CLAIM_LEASE,
                                  CHECK_BOUND)
            print(crash_summary(crashed, CLAIM_LEASE))
            print(deadline_phase(client, vendor, instances, 6 if args.short else 16, CHECK_LEASE))

            outage = outage_phase(load, instances, postgres, args.outage, args.recovery_bound,
                                  *((1.0, 1.5) if args.short else (2.0, 3.0)))
            print(summary(outage["result"]))
            unavailable = outage["unavailable"]
            if unavailable:
                print(f"PostgreSQL stopped {outage['down_seconds']:.1f}s: {outage['during']} requests began meanwhile, "
                      f"{len(unavailable)} answered 503 store_unavailable in {1000 * unavailable[0]:.0f} ms (min), "
                      f"{1000 * statistics.median(unavailable):.0f} ms (median), {1000 * unavailable[-1]:.0f} ms (max); "
                      f"others {dict(outage['other'])}")
            print("recovered (first successful start after pg_ctl start): "
                  + ", ".join(f"{name} {seconds:.2f}s" for name, seconds in sorted(outage["recovered"].items())))

            orphaned, waited = judge_slow(client, instances, args.hang_bound)
            print(f"checks that waited for the lease of a killed instance: {len(waited)} "
                  f"(of {len(orphaned)} verifications C was working on), longest {max(waited, default=0):.1f}s")
            print(token_check(client, instances))
            count, statuses = final_checks(client, instances, args.users)
            print(f"final: {count} answered starts read on each of {len(instances)} instances; statuses {dict(statuses)}; "
                  f"{sum(LEDGER.approvals.values())} approvals for {len(LEDGER.approvals)} verifications")
            completed = True
    except KeyboardInterrupt:
        VIOLATIONS.add("interrupted")
    finally:
        stop_all(started)
        if postgres is not None and os.path.exists(os.path.join(postgres.data, "postmaster.pid")):
            postgres.stop("immediate")
        if watchdog is not None:
            watchdog.kill()
            watchdog.wait()
    return finish(args, root, began, completed)


def start_all(instances, started):
    """Starts the gateways at once and waits for each to be healthy; every one started is in `started`."""
    with concurrent.futures.ThreadPoolExecutor(len(instances)) as pool:
        futures = [(instance, pool.submit(instance.start)) for instance in instances]
        failure = None
        for instance, future in futures:
            try:
                future.result()
            except BaseException as error:  # SystemExit from a gateway that did not start
                failure = failure or error
            if instance.process is not None:
                started.append(instance)
        if failure is not None:
            raise failure


def stop_all(instances):
    """SIGINT to every gateway at once, then waits for each (killed after 15 s)."""
    running = [i for i in instances if i.process and i.process.poll() is None]
    for instance in running:
        instance.process.send_signal(signal.SIGINT)
    deadline = time.monotonic() + 15
    for instance in running:
        try:
            instance.process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            instance.process.kill()
            instance.process.wait(timeout=10)


def finish(args, root, began, completed):
    """Removes the temporary directory unless kept or something failed; prints the verdict."""
    if args.keep or VIOLATIONS.items or not completed:
        print(f"logs kept in {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)
    elapsed = time.monotonic() - began
    if VIOLATIONS.items:
        print(f"FAILED after {elapsed:.0f}s: {len(VIOLATIONS.items)} violations")
        for item in VIOLATIONS.items[:30]:
            print("  " + item)
        return 1
    print(f"multi-instance check: passed in {elapsed:.0f}s")
    return 0


def sqlite_main(args, root, started, client):
    """`--sqlite`: the vendor and one instance on its own SQLite file, killed mid-start and mid-check and
    restarted on the same data directory."""
    vendor = vendor_instance(args, root)
    config = os.path.join(root, "instance.yaml")
    with open(config, "w") as file:
        file.write(
            "sandbox: true\n"
            + providers_yaml(vendor) +
            f"policy: {{check_lease_seconds: {CHECK_LEASE}, start_deadline_seconds: {START_DEADLINE}}}\n")
    set_vendor_secrets()
    instance = Instance("A", args.binary, root, gw.free_port(), ["--config", config])
    start_all([vendor, instance], started)
    print(f"vendor {vendor.base}; instance A {instance.base} on SQLite")
    # kill -9 under load: with --users concurrent flows the store's commits group and wait for one another
    # (docs/performance.md, "Commit delay"); no start answered before the kill may be lost.
    busy = Load(client, vendor, [instance], args.users, number_base=int(time.time()) % 10_000 * 10_000 + 5_000)
    killed = kill_phase(busy, [instance], args.kill_seconds, victim=instance)
    print(summary(killed["result"]))
    print(f"kill -9 of A under load: {len(killed['answered_before'])} starts A had answered before it died, "
          f"{len(killed['missing'])} missing after its restart ({killed['restart']:.1f}s to healthy again)")
    load = Load(client, vendor, [instance], 1, number_base=int(time.time()) % 10_000 * 10_000)
    crashed = crash_phase(load, instance, [instance], args.crash_keys, CRASH_LATENCY_MS, CLAIM_LEASE, CHECK_BOUND)
    print(crash_summary(crashed, CLAIM_LEASE))
    judge_slow(client, [instance], args.hang_bound)
    count, statuses = final_checks(client, [instance], 4)
    print(f"final: {count} answered starts read on A; statuses {dict(statuses)}; "
          f"{sum(LEDGER.approvals.values())} approvals for {len(LEDGER.approvals)} verifications")
    return True


if __name__ == "__main__":
    sys.exit(main())
