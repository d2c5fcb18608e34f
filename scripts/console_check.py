#!/usr/bin/env python3
"""The operator console in a real browser: headless Chromium (Debian's `chromium`) driven by Playwright.

    .venv/bin/pip install playwright
    .venv/bin/python scripts/console_check.py                    # builds and starts its own sandbox gateway
    .venv/bin/python scripts/console_check.py --screenshots docs/images/console --seed-verifications 100000

It starts a sandbox gateway with a 50/50 experiment on GB SMS (Twilio as control, Firebase delivering fewer
messages), an adaptive route for DE SMS (Sinch and Vonage, Vonage delivering half), KP denied, the SMS-pumping
guard, a webhook endpoint nobody listens on, and plays traffic: experiment users, German users, a start to KP,
12 own-code starts to Indonesia through Sinch SMS (three in four delivered), 24 unanswered starts to one French
prefix (the guard blocks it at the 20th), then US starts while Twilio answers 503 to
everything (they fail over to Sinch and Twilio's US breaker opens). Then, in the browser:

  - a `verify` key is refused at sign-in, and nothing is shown;
  - an `admin` key signs in (the cookie is HttpOnly and SameSite=Strict); the overview flags Twilio as failing
    and shows Sinch SMS's delivery rate and times;
  - the experiment's page shows the same p-value as `gateway experiments report` and a verdict;
  - a forged DELETE of the block without the CSRF token is refused (403) and the block stays; the Lift button
    (which sends the token) lifts it;
  - the countries page colours conversion per vendor and country, with Sinch SMS's delivery in Indonesia;
  - the adaptive page shows the German route's shares, posterior intervals and shares over time;
  - the abuse page counts the refusals per kind (the pumping guard's, a start to a denied country);
  - a verification is looked up by id, and by number: its timeline is shown and its number only masked;
  - the webhooks page shows the failing deliveries;
  - signing out ends the session: the admin API then answers 401 to the page.

Throughout, the browser's console must stay free of errors (except the refusals the check asks for) and no
request may go to any host but the gateway. With --seed-verifications N it first writes N verifications
straight into the gateway's SQLite file (spread over the last day) and reports the console's first paint and
the time until the overview is drawn. Exit status 0 when everything holds.
"""
import argparse, base64, os, random, re, shutil, sqlite3, subprocess, sys, tempfile, time, urllib.parse
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_gateway as gw

ROOT = gw.ROOT
ADMIN_KEY = gw.KEY
VERIFY_KEY = "sk_console_check_verify_0001"
READ_KEY = "sk_console_check_read_0001"
EXPERIMENT = "sandbox-ab"
PROOF = {"type": "recaptcha", "token": "console-check"}

CONFIG = """\
sandbox: true
api_keys:
  - {{name: backend, key_env: CONSOLE_VERIFY_KEY, scopes: [verify]}}
  - {{name: support, key_env: CONSOLE_READ_KEY, scopes: [read]}}
routing:
  default: [twilio, sinch]
  routes:
    - name: gb-ab
      match: {{channels: [sms], countries: [GB]}}
      experiment: {experiment}
    - name: de-adaptive
      match: {{channels: [sms], countries: [DE]}}
      adaptive: {{providers: [sinch, vonage], objective: conversions, min_share: 0.05, window: 1h}}
    - name: id-own-codes
      match: {{channels: [sms], countries: [ID]}}
      providers: [sinch_sms]
messages: {{app: Acme}}
countries: {{deny: [KP]}}
experiments:
  - name: {experiment}
    salt: "console"
    arms:
      - {{name: twilio, provider: twilio, weight: 50, control: true}}
      - {{name: firebase, provider: firebase, weight: 50}}
prices:
  twilio: {{default: 0.05}}
  firebase: {{default: 0.01}}
pumping_guard: {{prefix_digits: 6, min_starts: 20, conversion_floor: 0.2, cool_down_seconds: 3600}}
webhooks:
  endpoints:
    - {{name: nobody, url: "http://127.0.0.1:{dead_port}/hooks", secret_env: CONSOLE_WEBHOOK_SECRET}}
  max_attempts: 2
  initial_backoff_seconds: 1
"""

failures = []


def check(condition, message):
    print(("ok    " if condition else "FAIL  ") + message, flush=True)
    if not condition:
        failures.append(message)


def call(base, method, path, body=None, key=ADMIN_KEY):
    return gw.call(base, method, path, body, key=key, timeout=120)


def verify(base, started, rate, rng):
    """Types the code the sandbox sent, `rate` of the time; True when approved."""
    _, outbox = call(base, "GET", "/sandbox/outbox?to=" + urllib.parse.quote(started["to"]), key=None)
    messages = outbox.get("messages", [])
    if not messages or rng.random() >= rate:
        return False
    status, checked = call(base, "POST", f"/v1/verifications/{started['id']}/check", {"code": messages[-1]["code"]})
    return status == 200 and checked.get("status") == "approved"


def play_traffic(base, users):
    # The experiment: Firebase loses 40% of its messages, so the report has a difference to find.
    status, _ = call(base, "PUT", "/sandbox/faults/firebase", {"delivery_rate": 0.6, "delivery_seed": 3}, key=None)
    check(status == 200, f"firebase delivers 60% of its messages (PUT /sandbox/faults/firebase: {status})")

    def user(index):
        rng = random.Random(index)
        to = f"+447400{index:06d}"
        status, started = call(base, "POST", "/v1/verifications", {"to": to, "app_verification": PROOF})
        if status != 201:
            return f"{to}: {status} {started}"
        verify(base, started, 0.9, rng)
        return None

    with ThreadPoolExecutor(max_workers=6) as pool:
        errors = [e for e in pool.map(user, range(users)) if e]
    check(not errors, f"{users} experiment users started" + (f": {errors[:3]}" if errors else ""))

    # The adaptive route: German users, Vonage delivering half its messages, so the bandit has a difference.
    status, _ = call(base, "PUT", "/sandbox/faults/vonage", {"delivery_rate": 0.5, "delivery_seed": 5}, key=None)
    check(status == 200, f"vonage delivers 50% of its messages ({status})")

    def german(index):
        to = f"+4915112{index:06d}"
        status, started = call(base, "POST", "/v1/verifications", {"to": to})
        if status != 201:
            return f"{to}: {status} {started}"
        verify(base, started, 0.9, random.Random(1000 + index))
        return None

    with ThreadPoolExecutor(max_workers=6) as pool:
        errors = [e for e in pool.map(german, range(40)) if e]
    check(not errors, "40 users on the adaptive route" + (f": {errors[:3]}" if errors else ""))

    # The gateway's own codes in Indonesia through Sinch SMS, which delivers three messages in four: its
    # receipts make the delivery figures.
    status, _ = call(base, "PUT", "/sandbox/faults/sinch_sms", {"delivery_rate": 0.75, "delivery_seed": 9}, key=None)
    check(status == 200, f"sinch_sms delivers 75% of its messages ({status})")
    own = [call(base, "POST", "/v1/verifications", {"to": f"+62812555{n:04d}"}) for n in range(12)]
    check(all(status == 201 and started.get("provider") == "sinch_sms" for status, started in own),
          f"12 own-code starts to ID through sinch_sms: {[(s, a.get('provider')) for s, a in own]}")

    # A country the configuration denies: refused before anything is sent, counted as geo:KP.
    status, answer = call(base, "POST", "/v1/verifications", {"to": "+850212345678"})
    check(status == 403 or answer.get("error", {}).get("code") == "destination_blocked",
          f"a start to KP is refused ({status} {answer.get('error', {}).get('code')})")

    # SMS pumping: unanswered starts to one French prefix until the guard blocks it.
    answers = []
    for n in range(24):
        status, answer = call(base, "POST", "/v1/verifications", {"to": f"+3361234{n:04d}"})
        answers.append(answer.get("provider") or answer.get("error", {}).get("code", str(status)))
    status, blocks = call(base, "GET", "/v1/admin/blocks")
    prefixes = [b["prefix"] for b in blocks.get("blocks", [])]
    refused = answers.count("destination_blocked")
    check(refused > 0 and len(prefixes) == 1,
          f"the pumping guard blocked {prefixes} ({refused} starts refused; answers {' '.join(answers)})")

    # A failing vendor: Twilio answers 503 to everything; US starts fail over to Sinch and are verified.
    status, _ = call(base, "PUT", "/sandbox/faults/twilio", {"server_error_status": 503}, key=None)
    check(status == 200, "twilio answers 503 to every call")
    served = []
    for n in range(8):
        status, started = call(base, "POST", "/v1/verifications", {"to": f"+1415555{n:04d}"})
        if status == 201:
            served.append(started)
            verify(base, started, 1.0, random.Random(n))
    check(len(served) == 8 and all(s["provider"] == "sinch" for s in served),
          f"US starts failed over to sinch: {[s['provider'] for s in served]}")
    _, providers = call(base, "GET", "/v1/admin/providers")
    twilio = next(p for p in providers["providers"] if p["id"] == "twilio")
    states = {b["country"]: b["state"] for b in twilio["breakers"]}
    check(states.get("US") == "open", f"twilio's US breaker is open ({states})")
    return prefixes[0] if prefixes else None, served[0] if served else None


def seed(data_dir, count):
    """Writes `count` verifications into the gateway's SQLite file, over the last day (the gateway stopped)."""
    database = sqlite3.connect(os.path.join(data_dir, "gateway.sqlite"))
    now = time.time()
    rng = random.Random(7)
    vendors = ["twilio", "sinch", "vonage", "firebase"]
    rows = []
    for n in range(count):
        vendor = vendors[n % 4]
        status = "approved" if rng.random() < 0.8 else rng.choice(["expired", "pending", "failed"])
        created = now - rng.random() * 86_000
        rows.append((f"vf_seed{n:012d}", "phone", f"+4479{n:08d}", "sms", vendor, f"seed-{n}", "{}", status, 1, 5, 1,
                     created, created, created + 600, "[]", "{}", "[]" if n % 50 else f'["twilio:provider_unavailable"]',
                     "delivery_failed" if status == "failed" else None, "GB"))
    database.executemany(
        "INSERT INTO verifications (id, destination_kind, destination_value, channel, provider_id, provider_reference,"
        " provider_state, status, attempts, max_attempts, sends, created_at, updated_at, expires_at, locales,"
        " metadata, failovers, status_reason, country, version)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)",
        rows)
    database.commit()
    database.close()


def experiments_report_p(binary, config, data_dir, env):
    """The firebase arm's p-value as `gateway experiments report` prints it."""
    report = subprocess.run([binary, "experiments", "report", EXPERIMENT, "--config", config, "--data-dir", data_dir],
                            env=env, capture_output=True, text=True, timeout=300)
    for line in report.stdout.splitlines():
        columns = re.split(r"\s{2,}", line.strip())
        if columns and columns[0] == "firebase":
            return columns[10], report.stdout
    raise SystemExit("no firebase row in `gateway experiments report`:\n" + report.stdout + report.stderr)


def run_browser(args, base, binary, config, data_dir, env, prefix, looked_up):
    from playwright.sync_api import sync_playwright

    console_errors, foreign = [], []
    timeout = 120_000  # a busy two-core machine: generous, never a speed figure

    def shot(page, name):
        if args.screenshots:
            os.makedirs(args.screenshots, exist_ok=True)
            page.screenshot(path=os.path.join(args.screenshots, f"{name}.png"))

    def expect_refusals(page, statuses, action):
        """Runs `action`; the browser's 'Failed to load resource' lines for `statuses` are the ones it asked for."""
        before = len(console_errors)
        result = action()
        page.wait_for_timeout(300)
        extra = console_errors[before:]
        del console_errors[before:]
        unexpected = [e for e in extra if not any(f"status of {s}" in e for s in statuses)]
        console_errors.extend(unexpected)
        return result

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=args.chromium, headless=True)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.set_default_timeout(timeout)
        page = context.new_page()
        page.on("console", lambda m: m.type == "error" and console_errors.append(m.text))
        page.on("pageerror", lambda e: console_errors.append(f"page error: {e}"))
        page.on("request", lambda r: r.url.startswith(base + "/") or foreign.append(r.url))

        page.goto(base + "/console")
        page.wait_for_selector("#sign-in:not([hidden])")
        shot(page, "sign-in")

        # A verify key is refused, and nothing but the form is shown.
        def verify_sign_in():
            page.fill("#sign-in-key", VERIFY_KEY)
            page.click("#sign-in button[type=submit]")
            page.wait_for_selector("#sign-in-error:not(:empty)")  # (wait_for_function would need eval: CSP)
        expect_refusals(page, [403], verify_sign_in)
        refusal = page.text_content("#sign-in-error")
        check("admin" in refusal and page.is_hidden("#nav"), f"a verify key is refused: {refusal!r}")
        check(not [c for c in context.cookies() if c["name"] == "gateway_console"], "no session cookie for it")

        # The admin key: the overview flags Twilio.
        page.fill("#sign-in-key", ADMIN_KEY)
        page.click("#sign-in button[type=submit]")
        page.wait_for_selector("#view[data-loaded=overview]")
        cookie = next(c for c in context.cookies() if c["name"] == "gateway_console")
        check(cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["expires"] > time.time(),
              f"session cookie HttpOnly, SameSite={cookie['sameSite']}, expires in "
              f"{(cookie['expires'] - time.time()) / 3600:.1f} h")
        check(page.evaluate("document.cookie").find("gateway_console") < 0, "the page's script cannot read it")
        twilio = page.wait_for_selector("#vendors tr[data-vendor=twilio]")
        flagged = twilio.get_attribute("data-state")
        sinch = page.get_attribute("#vendors tr[data-vendor=sinch]", "data-state")
        check(flagged == "failing" and sinch == "ok",
              f"the overview flags twilio ({flagged}: {' '.join(twilio.inner_text().split())}); sinch is {sinch}")
        latency = page.text_content("#vendors tr[data-vendor=sinch] td.latency").strip()
        check(latency.endswith(" ms"), f"the overview shows sinch's latency p50 / p95: {latency}")
        # Sinch SMS's receipts: a delivery rate and times (wait for the last receipts: the overview redraws).
        delivery = ""
        for _ in range(120):
            delivery = page.text_content("#vendors tr[data-vendor=sinch_sms] td.delivery").strip()
            if "%" in delivery and "–" not in delivery.split("·")[0]:
                break
            time.sleep(0.5)
        check(re.match(r"^\d+\.\d% · [\d.]+ (ms|s) / [\d.]+ (ms|s)$", delivery) is not None,
              f"the overview shows sinch_sms's delivery rate and times: {delivery!r}")
        check(page.text_content("#vendors tr[data-vendor=sinch] td.delivery").strip() == "–",
              "and none for sinch's Verify product")
        shot(page, "overview")

        # First paint and the overview drawn, on a fresh load (signed in).
        page.reload()
        page.wait_for_selector("#view[data-loaded=overview]")
        paint = page.evaluate(
            "(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime || null")
        drawn = page.evaluate("performance.now()")
        print(f"first contentful paint {paint:.0f} ms; overview drawn by {drawn:.0f} ms", flush=True)
        if args.seed_verifications:
            # A bound against a page that never paints, not a speed figure (the figure is printed above and
            # recorded in docs/console.md; CI's machine may be busy).
            check(paint is not None and paint < 15000,
                  f"first paint within 15 s with {args.seed_verifications} verifications stored ({paint:.0f} ms)")

        # Countries: conversion per vendor and country, coloured by conversion.
        page.click("nav a[data-view=countries]")
        page.wait_for_selector("#view[data-loaded=countries]")
        gb = page.wait_for_selector("#countries tr[data-country=GB]")
        heated = page.eval_on_selector_all(
            "#countries tr[data-country=GB] td.heat", "cells => cells.map(c => [c.dataset.vendor, c.className])")
        check(len(heated) >= 2 and all(re.search(r"heat-\d", c) for _, c in heated),
              f"the countries page colours GB per vendor: {heated}; {' '.join(gb.inner_text().split())}")
        indonesia = page.text_content("#countries tr[data-country=ID] td[data-vendor=sinch_sms] .delivery") or ""
        check(re.match(r"^delivered \d+\.\d% · p50 [\d.]+ (ms|s)$", indonesia.strip()) is not None,
              f"the countries page shows sinch_sms's delivery in ID: {indonesia.strip()!r}")
        shot(page, "countries")

        # The experiment: the same p-value as the command line, and a verdict.
        page.click("nav a[data-view=experiments]")
        page.click(f"a[data-experiment={EXPERIMENT}]")
        page.wait_for_selector("#verdict p")
        shown = page.text_content("#arms tr[data-arm=firebase] td.p-value").strip()
        printed, table = experiments_report_p(binary, config, data_dir, env)
        verdict = page.text_content("#verdict").strip()
        check(shown == printed, f"experiment p-value on the page {shown} = `gateway experiments report` {printed}")
        check(bool(re.search(r"better, p = |not yet significant", verdict)), f"verdict: {verdict}")
        shot(page, "experiment")

        # Adaptive routing: the route's providers with their shares and posterior intervals, and the history.
        page.click("nav a[data-view=adaptive]")
        page.wait_for_selector("#view[data-loaded=adaptive]")
        context = ".context[data-route=de-adaptive][data-context='DE/sms']"
        page.wait_for_selector(f"{context} tbody tr")
        shares = page.eval_on_selector_all(
            f"{context} tbody tr", "rows => rows.map(r => [r.dataset.provider, r.querySelector('td.share').textContent])")
        bars = page.eval_on_selector_all(f"{context} svg.interval", "bars => bars.length")
        columns = page.eval_on_selector_all(f"{context} svg.history rect", "rects => rects.length")
        check(len(shares) == 2 and bars == 2 and columns >= 1,
              f"the adaptive page: shares {shares}, {bars} posterior intervals, {columns} history columns")
        shot(page, "adaptive")

        # The block: a forged request without the CSRF token is refused; the Lift button lifts it.
        page.click("nav a[data-view=abuse]")
        row = f"#blocks tr[data-prefix='{prefix}']"
        page.wait_for_selector(row)
        refused = {k: page.text_content(f"#refusals tr[data-kind='{k}'] td.num") for k in ("pumping_guard", "geo:KP")}
        check(all(v and int(v) >= 1 for v in refused.values()), f"the abuse page counts refusals per kind: {refused}")
        shot(page, "abuse")
        forged = expect_refusals(page, [403], lambda: page.evaluate(
            "async (path) => { const r = await fetch(path, {method: 'DELETE', credentials: 'same-origin'});"
            " return [r.status, (await r.json()).error.code]; }",
            "/v1/admin/blocks/" + urllib.parse.quote(prefix, safe="")))
        _, still = call(base, "GET", "/v1/admin/blocks")
        check(forged == [403, "forbidden"] and len(still["blocks"]) == 1,
              f"a DELETE without the CSRF token is refused ({forged}) and the block stays")
        page.click(f"{row} button.lift")
        page.wait_for_selector("#no-blocks")
        _, after = call(base, "GET", "/v1/admin/blocks")
        check(after["blocks"] == [], f"the Lift button lifted {prefix}")

        # A verification by id: its timeline, its number masked.
        page.click("nav a[data-view=lookup]")
        page.fill("#lookup-id", looked_up["id"])
        page.click("#lookup-form button[type=submit]")
        page.wait_for_selector("#timeline tbody tr")
        kinds = page.eval_on_selector_all("#timeline tbody tr", "rows => rows.map(r => r.dataset.kind)")
        text = page.inner_text("#view")
        masked = page.text_content("#facts").find(looked_up["to"][:5] + "•") >= 0
        check(len(kinds) >= 2 and looked_up["to"] not in text and masked,
              f"lookup {looked_up['id']}: timeline {kinds}; number masked")
        shot(page, "lookup")

        # A verification by number: the number's verifications listed, masked; one opened.
        page.fill("#lookup-id", looked_up["to"])
        page.click("#lookup-form button[type=submit]")
        page.wait_for_selector("#by-number tbody tr")
        ids = page.eval_on_selector_all("#by-number tbody tr", "rows => rows.map(r => r.dataset.id)")
        text = page.inner_text("#view")
        check(looked_up["id"] in ids and looked_up["to"] not in text and looked_up["to"][:5] + "*" in text,
              f"lookup by number {looked_up['to'][:5]}…: {ids}; number masked")
        shot(page, "lookup-number")
        page.click(f"#by-number tr[data-id='{looked_up['id']}'] button.open")
        page.wait_for_selector(f"#lookup-result h3:has-text('{looked_up['id']}')")
        page.wait_for_selector("#timeline tbody tr")
        check(looked_up["to"] not in page.inner_text("#view"), "the verification opened from the list, number masked")

        # Webhooks: the deliveries to the endpoint nobody listens on fail, are parked after their second
        # attempt, and one is replayed with the button (a POST with the CSRF token).
        for _ in range(240):
            if call(base, "GET", "/v1/admin/webhooks/deliveries?state=parked&limit=1")[1].get("deliveries"):
                break
            time.sleep(0.5)
        page.click("nav a[data-view=webhooks]")
        page.wait_for_selector("#view[data-loaded=webhooks]")
        page.wait_for_selector("#deliveries tbody tr")
        pending = page.text_content("#pending-count")
        parked = page.text_content("#parked-count")
        rows = page.eval_on_selector_all("#deliveries tbody tr", "rows => rows.length")
        check(rows > 0 and int(parked) > 0, f"webhooks: {rows} deliveries shown, retry queue {pending}, parked {parked}")
        endpoint = page.text_content("#endpoints tr[data-endpoint=nobody]") or ""
        check("standard" in endpoint and "active" in endpoint,
              f"the webhooks page lists the endpoint, Standard Webhooks signing, active: {' '.join(endpoint.split())!r}")
        shot(page, "webhooks")
        replayed = page.get_attribute("#parked tbody tr", "data-delivery")
        page.click(f"#parked tr[data-delivery='{replayed}'] button.replay")
        page.wait_for_selector("#status:has-text('again')")
        _, queued = call(base, "GET", "/v1/admin/webhooks/deliveries?state=pending&limit=500")
        again = next((d for d in queued["deliveries"] if d["id"] == replayed), None)
        check(again is not None and again["attempts"] == 0, f"the Replay button queued {replayed} again")

        # Sign out: the session is gone for the page too.
        page.click("#sign-out")
        page.wait_for_selector("#sign-in:not([hidden])")
        after_out = expect_refusals(page, [401], lambda: page.evaluate(
            "async () => (await fetch('/v1/admin/providers', {credentials: 'same-origin'})).status"))
        check(after_out == 401, f"signed out: the admin API answers {after_out}")

        # A read key: the same pages, and nothing to press.
        page.fill("#sign-in-key", READ_KEY)
        page.click("#sign-in button[type=submit]")
        page.click("nav a[data-view=overview]")
        page.wait_for_selector("#view[data-loaded=overview]")
        check("read" in page.text_content("#who-name"), f"a read key signs in: {page.text_content('#who-name')}")
        page.click("nav a[data-view=webhooks]")
        page.wait_for_selector("#view[data-loaded=webhooks]")
        buttons = page.eval_on_selector_all("#parked button.replay", "buttons => buttons.map(b => b.disabled)")
        check(buttons and all(buttons), f"a read key's {len(buttons)} Replay buttons are disabled")
        page.click("#sign-out")
        page.wait_for_selector("#sign-in:not([hidden])")

        browser.close()

    check(not console_errors, f"the browser's console has no errors {console_errors[:5]}")
    check(not foreign, f"no request to another host {foreign[:5]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gateway", help="a built gateway binary (default: swift build --product gateway)")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--users", type=int, default=300, help="experiment users")
    parser.add_argument("--screenshots", help="save a screenshot of each page here")
    parser.add_argument("--seed-verifications", type=int, default=0,
                        help="write this many verifications into the store first and measure the first paint")
    args = parser.parse_args()

    binary = args.gateway or gw.build()
    directory = tempfile.mkdtemp(prefix="gateway-console-check-")
    data_dir = os.path.join(directory, "data")
    config = os.path.join(directory, "gateway.yaml")
    with open(config, "w") as f:
        f.write(CONFIG.format(experiment=EXPERIMENT, dead_port=gw.free_port()))
    env = dict(os.environ, GATEWAY_SANDBOX_API_KEY=ADMIN_KEY, CONSOLE_VERIFY_KEY=VERIFY_KEY,
               CONSOLE_READ_KEY=READ_KEY, CONSOLE_WEBHOOK_SECRET="whsec_" + base64.b64encode(b"console-check-webhook-secret-32b").decode())
    os.environ.update(env)
    extra = ["--config", config]
    if args.seed_verifications:
        process, _ = gw.start(binary, data_dir, extra=extra, log_path=os.path.join(directory, "gateway.log"))
        process.terminate()
        process.wait(timeout=120)
        began = time.monotonic()
        seed(data_dir, args.seed_verifications)
        print(f"seeded {args.seed_verifications} verifications in {time.monotonic() - began:.1f} s", flush=True)
    process, base = gw.start(binary, data_dir, extra=extra, log_path=os.path.join(directory, "gateway.log"))
    try:
        began = time.monotonic()
        prefix, looked_up = play_traffic(base, args.users)
        print(f"traffic played in {time.monotonic() - began:.1f} s", flush=True)
        for path in ("/v1/admin/stats", "/v1/admin/stats/countries"):
            for window in ("1h", "24h"):
                took = []
                for _ in range(5):
                    began = time.monotonic()
                    status, _ = call(base, "GET", f"{path}?window={window}")
                    took.append((time.monotonic() - began) * 1000)
                check(status == 200, f"GET {path}?window={window}: median {sorted(took)[2]:.0f} ms of 5")
        if prefix and looked_up:
            run_browser(args, base, binary, config, data_dir, env, prefix, looked_up)
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
    if failures:
        raise SystemExit(f"console check: {len(failures)} failed (the gateway's log is in {directory}):\n  "
                         + "\n  ".join(failures))
    shutil.rmtree(directory, ignore_errors=True)
    print("console check: passed", flush=True)


if __name__ == "__main__":
    main()
