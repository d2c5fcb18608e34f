#!/usr/bin/env python3
"""Turns a benchmark run (results.json from bench.py) into Markdown tables with the issue's targets
flagged met or missed, prints them, and with --write puts them into BENCHMARKS.md between the
`<!-- bench-suite:begin -->` and `<!-- bench-suite:end -->` markers (appended the first time).

    report.py OUT_DIR [--write BENCHMARKS.md] [--command "scripts/bench/run.sh"]
"""
import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

BEGIN, END = "<!-- bench-suite:begin -->", "<!-- bench-suite:end -->"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sh(*command):
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=30, cwd=ROOT).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "?"


def machine():
    cpu = "?"
    with open("/proc/cpuinfo") as handle:
        for line in handle:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    free = sh("free", "-h").splitlines()
    memory = free[1].split()[1] if len(free) > 1 else "?"
    swift = sh("swift", "--version").splitlines()
    return {
        "cpu": cpu, "nproc": sh("nproc"), "memory": memory, "kernel": platform.release(),
        "swift": swift[0] if swift else "?", "load": open("/proc/loadavg").read().split()[:3],
        "commit": sh("git", "rev-parse", "--short", "HEAD"), "branch": sh("git", "rev-parse", "--abbrev-ref", "HEAD"),
        "dirty": bool(sh("git", "status", "--porcelain", "--untracked-files=no")),
        "wrk": sh("dpkg-query", "-W", "-f=${Version}", "wrk"), "python": platform.python_version(),
    }


def f(value, digits=0):
    if value is None:
        return "–"
    return "{:,.{}f}".format(value, digits)


def ms(value):
    if value is None:
        return "–"
    return "%.2f" % value if value < 10 else "%.1f" % value if value < 100 else "%.0f" % value


def verdict(met, detail):
    return ("**met**" if met else "**missed**") + (" (%s)" % detail if detail else "")


def build(out, command):
    data = json.load(open(os.path.join(out, "results.json")))
    r = data["results"]
    m = machine()
    # The code and the machine's load as they were during the run (bench.py records them).
    if data.get("code"):
        m.update(commit=data["code"]["commit"], branch=data["code"]["branch"], dirty=bool(data["code"]["dirty"]),
                 dirty_files=[line.split(None, 1)[-1] for line in data["code"]["dirty"]])
    if data.get("load_end"):
        m["load"] = data["load_end"]
    seconds = data["seconds"]
    lines = []
    add = lines.append
    add("## Server benchmark suite (`scripts/bench/run.sh`)")
    add("")
    add("Run %s%s, %s s per load run, %d s wall time in all. Command:" % (
        time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(os.path.getmtime(os.path.join(out, "results.json")))), " (`--quick`)" if data["quick"] else "",
        seconds, data.get("wall_s", 0)))
    add("")
    add("```")
    add(command)
    add("```")
    add("")
    add("| machine | |")
    add("|---|---|")
    add("| CPU | %s, `nproc` = %s |" % (m["cpu"], m["nproc"]))
    add("| memory (`free -h`) | %s |" % m["memory"])
    add("| kernel | Linux %s |" % m["kernel"])
    add("| Swift | %s, `swift build -c release` |" % m["swift"])
    add("| code | `%s` (branch `%s`%s) |" % (m["commit"], m["branch"], (", uncommitted changes: " + ", ".join("`%s`" % n for n in m.get("dirty_files", [])) if m.get("dirty_files")
                  else ", uncommitted changes") if m["dirty"] else ""))
    add("| tools | wrk %s, Python %s (uvloop) for the flow, fixed-rate and django runs |" % (m["wrk"], m["python"]))
    add("| load average at the end | %s (the machine is shared with other builds) |" % " ".join(m["load"]))
    add("")

    add("### Throughput (closed loop, `wrk -t1 -c32`, or the Python client with 32 users)")
    add("")
    add("Gateway CPU: the cores the gateway process kept busy during the run (user + system time over wall "
        "time; the machine has %s, and wrk or the Python client uses the rest)." % m["nproc"])
    add("")
    add("| request | req/s | p50 ms | p90 ms | p99 ms | gateway CPU | CPU µs per request | answers | note |")
    add("|---|---:|---:|---:|---:|---:|---:|---|---|")

    def wrk_row(label, key, note=""):
        x = r.get(key)
        if not x:
            return
        rps = rate_of(x)
        statuses = ", ".join("%s×%s" % (n, s) for s, n in sorted(x["statuses"].items()) if s != "404")
        cores = "%.2f" % x["gateway_cores"] if x.get("gateway_cores") is not None else "–"
        per = f(x["gateway_cores"] / rps * 1e6) if x.get("gateway_cores") is not None and rps else "–"
        add("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (label, f(rps), ms(x["p50_ms"]), ms(x["p90_ms"]),
                                                              ms(x["p99_ms"]), cores, per, statuses, note))

    wrk_row("`GET /healthz` (the server's ceiling)", "healthz")
    wrk_row("`POST /v1/verifications` via the Twilio emulator, empty store", "start", "a new number per request")
    wrk_row("`POST /sandbox/twilio/v2/Services/{sid}/Verifications` (the emulator alone)", "direct")
    prep = r.get("prepare", {})
    cw, cr = r.get("check_wrong"), r.get("check_right")
    if cw:
        wrk_row("`POST /v1/verifications/{id}/check`, wrong code", "check_wrong",
                "%s prepared verifications, 2 wrong checks each; %.1f s of load" % (f(prep.get("prepared")), cw["active_seconds"]))
    if cr:
        wrk_row("`POST /v1/verifications/{id}/check`, right code", "check_right",
                "each prepared verification once; %.1f s of load" % cr["active_seconds"])
    fl = r.get("flow")
    if fl:
        cores = "%.2f" % (fl["server_cpu_s"] / fl["seconds"]) if "server_cpu_s" in fl else "–"
        per = f(fl["server_cpu_s"] / max(fl["flows"], 1) * 1e6) + " per flow" if "server_cpu_s" in fl else "–"
        add("| start → read code (`GET /sandbox/outbox?to=`) → check, per flow | %s flows/s (%s req/s) | %s | %s | %s | %s | %s | %s flows%s | Python client, 32 users |" % (
            f(fl["flows_per_s"]), f(fl["requests_per_s"]), ms(fl["flow"]["p50_ms"]), ms(fl["flow"]["p90_ms"]),
            ms(fl["flow"]["p99_ms"]), cores, per, f(fl["flows"]), failures(fl)))
    add("")

    add("### Added latency of the gateway over the emulator alone, at %s starts/s (open loop)" % f(data["rate"]))
    add("")
    add("Requests are due at fixed times whatever happened to the ones before (wrk2's model; Debian has no "
        "`wrk2` package, so `scripts/bench/httpload.py rate` does it); latency from the moment the request is "
        "written, and in brackets from the moment it was due. The first second is a warm-up and not counted.")
    add("")
    add("| target | offered/s | achieved/s | p50 ms | p90 ms | p99 ms | p99.9 ms | failures |")
    add("|---|---:|---:|---:|---:|---:|---:|---|")
    rg, rd = r.get("rate_gateway"), r.get("rate_direct")
    for suffix in ("", "_low"):
        g, d_ = r.get("rate_gateway" + suffix), r.get("rate_direct" + suffix)
        for label, x in (("`POST /v1/verifications`", g), ("emulator directly", d_)):
            if x:
                s, d = x["service"], x["from_due"]
                add("| %s | %s | %s | %s (%s) | %s (%s) | %s (%s) | %s (%s) | %s |" % (
                    label, f(x["rate"]), f(x["achieved_per_s"]), ms(s["p50_ms"]), ms(d["p50_ms"]), ms(s["p90_ms"]),
                    ms(d["p90_ms"]), ms(s["p99_ms"]), ms(d["p99_ms"]), ms(s["p999_ms"]), ms(d["p999_ms"]),
                    ", ".join("%s %s" % kv for kv in sorted(x["failures"].items())) or "none"))
        if g and d_:
            add("| **added by the gateway at %s/s** | | | **%s** | | **%s** | | |" % (
                f(g["rate"]), signed(g["service"]["p50_ms"], d_["service"]["p50_ms"]),
                signed(g["service"]["p99_ms"], d_["service"]["p99_ms"])))
    if r.get("rate_gateway_low"):
        add("")
        add("The gateway's start or the emulator alone does not sustain %s/s on this build (see the closed-loop "
            "runs), so the pair also ran at %s/s, half the lower of their closed-loop rates." % (
                f(data["rate"]), f(r["rate_gateway_low"]["rate"])))
    add("")
    latency_rounds = added_latency_rounds(r)
    if len(latency_rounds) > 1:
        add("The table shows the first round. The pair ran %d times, interleaved (gateway, then the emulator "
            "directly, each %s s), and the target reads the medians of the added p50 and p99 over the rounds: "
            "one stall of this shared machine moves a single run's p99 by milliseconds." % (
                len(latency_rounds), f(data["seconds"])))
        add("")
        add("| round | gateway p50 / p99 ms | direct p50 / p99 ms | added p50 | added p99 |")
        add("|---|---:|---:|---:|---:|")
        for index, (g, d_) in enumerate(latency_rounds):
            add("| %d | %s / %s | %s / %s | %s | %s |" % (
                index + 1, ms(g["service"]["p50_ms"]), ms(g["service"]["p99_ms"]), ms(d_["service"]["p50_ms"]),
                ms(d_["service"]["p99_ms"]), signed(g["service"]["p50_ms"], d_["service"]["p50_ms"]),
                signed(g["service"]["p99_ms"], d_["service"]["p99_ms"])))
        p50s, p99s = added_latency_medians(latency_rounds)
        add("| **medians** | | | **%+.2f ms** | **%+.2f ms** |" % (p50s, p99s))
        add("")

    seed_store, seed_emulator = r.get("seed_store"), r.get("seed_emulator")
    m_store, m_emulator = r.get("million_store"), r.get("million_emulator")
    million = m_emulator or m_store
    if seed_store and m_store:
        add("### After %s stored verifications" % f(seed_store["count"]))
        add("")
        described = []
        for seed in (seed_store, seed_emulator):
            for t in (seed or {}).get("tables", []):
                described.append("`%s` in `%s`: %s rows (%s s)" % (t["table"], t["file"], f(t["rows_added"]), t["seconds"]))
        add("Seeded with `scripts/bench/seed.py` while the gateway was stopped, in two steps, restarting and measuring "
            "after each, so that the gateway's own cost shows apart from the sandbox emulator's: first the gateway's "
            "store, from one real verification (started through the Twilio emulator, its code read, checked: approved); "
            "then the Twilio emulator's table, from one verification started and left pending (an approved one is gone "
            "from the emulator, as from Twilio), so the emulator holds a million live verifications, as it would a "
            "million started within their 10-minute window. Each is copied inside SQLite with new ids, SIDs and numbers "
            "(%s)." % "; ".join(described))
        syncs = [seed["sync_s"] for seed in (seed_store, seed_emulator) if seed and "sync_s" in seed]
        if syncs:
            add("After each step, before the gateway restarts, `sync` writes the seeded pages back (%s s): seed.py writes "
                "without syncing, and that write-back would otherwise stall the first seconds of the measured run's own "
                "syncs." % " and ".join("%.1f" % x for x in syncs))
        snapshots = seed_store.get("json_snapshots_not_seeded") or []
        if snapshots:
            add("Not seeded: the emulators' JSON snapshots (%s): that state is one file rewritten on every "
                "emulator call, so a million entries would make every call take seconds." % ", ".join("`sandbox/%s`" % n for n in snapshots))
        last = seed_emulator or seed_store
        add("Files after seeding: %s." % ", ".join("`%s` %s MB" % (n, v) for n, v in sorted(last["files_mb"].items()) if v >= 0.1))
        add("")
        add("| start (`POST /v1/verifications`) | stored before | req/s | p50 ms | p99 ms | gateway CPU | CPU µs per request | answers | launch → ready | RSS idle | RSS after |")
        add("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|")
        rows = [("empty store", r.get("start"), 0, r.get("idle"), r.get("after_load"))]
        if r.get("start_first"):
            rows.append(("the same phase's first starts, on its new data directory, before seeding", r.get("start_first"),
                         1, None, None))
        rows.append(("1M in the gateway's store", r.get("start_1m_store"), m_store["stored"], m_store, None))
        if m_emulator:
            rows.append(("1M in the store and %s live in the Twilio emulator" % f(m_emulator.get("emulator_live") or 0),
                         r.get("start_1m_emulator"), m_emulator["stored"], m_emulator, None))
        for label, x, stored, mem, after in rows:
            if not x:
                continue
            if mem is None:
                ready, idle, later = None, None, None
            elif mem is r.get("idle"):
                ready, idle, later = mem["ready_s"], mem["rss_mb"], after and after["rss_mb"]
            else:
                ready, idle, later = mem["ready_s"], mem["rss_idle_mb"], mem["rss_after_load_mb"]
            cores = x.get("gateway_cores")
            add("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                label, f(stored), f(rate_of(x)), ms(x["p50_ms"]), ms(x["p99_ms"]),
                "%.2f" % cores if cores is not None else "–", f(cores / rate_of(x) * 1e6) if cores else "–",
                ", ".join("%s×%s" % (n, s_) for s_, n in sorted(x["statuses"].items())),
                "%s ms" % ms(ready * 1000) if ready is not None else "–", "%.1f MB" % idle if idle is not None else "–",
                "%.1f MB" % later if later else "–"))
        add("")
        interleaved = [(label, x) for label, x in (("1M in the gateway's store", m_store),
                                                   ("1M in the store and 1M live in the emulator", m_emulator))
                       if x and x.get("seeded_rps")]
        if interleaved:
            add("No decay, measured interleaved: after each step, round by round, %s s of starts on a gateway with a "
                "new, empty data directory (the target's \"first 10k\"), then %s s on the seeded one; the medians are "
                "compared, so the machine's drift over the minutes between steps does not enter the comparison "
                "(the table above shows the first round of each step)." % (seconds, seconds))
            add("")
            add("| step | new data directory, req/s per round | seeded, req/s per round | CPU µs per start, new / seeded (medians) | medians | change |")
            add("|---|---|---|---:|---:|---:|")
            for label, x in interleaved:
                fresh, seeded = statistics.median(x["fresh_rps"]), statistics.median(x["seeded_rps"])
                add("| %s | %s | %s | %s / %s | %s vs %s | %+.1f%% |" % (
                    label, ", ".join(f(v) for v in x["fresh_rps"]), ", ".join(f(v) for v in x["seeded_rps"]),
                    f(statistics.median(x["fresh_us"])), f(statistics.median(x["seeded_us"])),
                    f(seeded), f(fresh), 100 * (seeded / fresh - 1)))
            add("")

    pr = r.get("profile")
    if pr and "error" not in pr:
        flow_pr = pr.get("flow") if pr.get("flow") and "error" not in pr["flow"] else None
        add("### Where the CPU time goes")
        add("")
        add("`perf record -F 499 -g` on the gateway for 4 s of `wrk -c32` starts%s, after the measured runs "
            "(`perf.data`%s in the raw results). The gateway kept %.2f cores busy during the starts%s." % (
                " and 4 s of the flow (Python client, 32 users)" if flow_pr else "",
                " and `perf-flow.data`" if flow_pr else "", pr["cores"],
                " and %.2f during the flow" % flow_pr["cores"] if flow_pr else ""))
        add("")
        if pr.get("parts"):
            start_x, flow_x = r.get("start"), r.get("flow")
            start_us = (start_x["gateway_cores"] / rate_of(start_x) * 1e6
                        if start_x and start_x.get("gateway_cores") and rate_of(start_x) else None)
            flow_us = (flow_x["server_cpu_s"] / flow_x["flows"] * 1e6
                       if flow_x and flow_x.get("server_cpu_s") and flow_x.get("flows") else None)
            add("By part of the path (`scripts/bench/profile_parts.py`): each sample goes to the first frame, from "
                "the leaf up, that belongs to a part, so the shares add up to 100%% and say what kind of work the "
                "CPU did; NIO and the concurrency runtime get only what no other part claims. The µs columns are "
                "the share times the CPU that a start (%s µs) and a flow (%s µs) cost in the measured runs above "
                "(%s and %s samples)." % (
                    f(start_us) if start_us else "–", f(flow_us) if flow_us else "–", sample_count(pr),
                    sample_count(flow_pr)))
            add("")
            start_parts = dict(pr["parts"])
            flow_parts = dict(flow_pr["parts"]) if flow_pr and flow_pr.get("parts") else {}
            names = [name for name, _ in pr["parts"]] + [n for n in flow_parts if n not in start_parts]
            add("| part | start | µs per start | flow | µs per flow |")
            add("|---|---:|---:|---:|---:|")
            for name in names:
                a, b = start_parts.get(name, 0.0), flow_parts.get(name)
                add("| %s | %.1f%% | %s | %s | %s |" % (
                    name, a, f(a / 100 * start_us) if start_us else "–", "%.1f%%" % b if b is not None else "–",
                    f(b / 100 * flow_us) if b is not None and flow_us else "–"))
            add("")
        add("| share of a start's samples | library | share of a flow's samples |")
        add("|---:|---|---:|")
        flow_dso = dict((name, pct) for pct, name in flow_pr["dso"]) if flow_pr else {}
        for pct, name in pr["dso"][:8]:
            add("| %.1f%% | `%s` | %s |" % (pct, name, "%.1f%%" % flow_dso[name] if name in flow_dso else "–"))
        add("")
        add("<details><summary>Top symbols of a start</summary>")
        add("")
        add("| share | library, symbol |")
        add("|---:|---|")
        for pct, name in pr["symbols"][:20]:
            add("| %.1f%% | `%s` |" % (pct, re.sub(r"\s+", " ", name).replace("|", "\\|")[:120]))
        add("")
        add("</details>")
        add("")

    add("### Memory and start-up")
    add("")
    add("| measure | value |")
    add("|---|---:|")
    if r.get("idle"):
        add("| RSS idle after start, empty store | %.1f MB |" % r["idle"]["rss_mb"])
    if r.get("after_load"):
        add("| RSS after the load above (%s stored) | %.1f MB |" % (f(r["after_load"]["stored"]), r["after_load"]["rss_mb"]))
    for label, x in (("in the gateway's store", m_store), ("in the store and live in the Twilio emulator", m_emulator)):
        if x:
            add("| RSS idle after restart, 1M %s | %.1f MB |" % (label, x["rss_idle_mb"]))
            add("| RSS after %s s of starts, 1M %s | %.1f MB |" % (seconds, label, x["rss_after_load_mb"]))
    rd_ = r.get("ready")
    if rd_:
        add("| launch → first 200 from `/healthz`, new data directory, median of %d | %s ms (%s) |" % (
            len(rd_["fresh_s"]), ms(rd_["fresh_median_s"] * 1000), ", ".join(ms(v * 1000) for v in rd_["fresh_s"])))
        add("| launch → ready, existing data directory, median of %d | %s ms |" % (len(rd_["reopen_s"]), ms(rd_["reopen_median_s"] * 1000)))
    for label, x in (("in the gateway's store", m_store), ("in the store and live in the Twilio emulator", m_emulator)):
        if x:
            add("| launch → ready, 1M %s | %s ms |" % (label, ms(x["ready_s"] * 1000)))
    add("")

    dj = r.get("django_flow")
    pairs = r.get("django_pairs")
    django_ratio = None  # the target's reading: the ratio of the medians of interleaved rounds (or one run, before)

    def per_flow(run, key):
        # Results before 2026-11-24 16:40 UTC have no CPU figures.
        return f(run[key] / max(run["flows"], 1) * 1e6) if key in run else "–"

    if pairs:
        rounds = pairs["rounds"]
        add("### The same flow against django-phone-verify")
        add("")
        add("django-phone-verify 3.3.0 (Django 5.2, DRF 3.18, `scripts/bench/requirements.txt`) in a throwaway "
            "project (`scripts/bench/django_project.py`): SQLite in WAL mode, gunicorn with %d sync workers "
            "(2 × cores + 1), DEBUG off, a sending backend that sends nothing; the code is read from its table. The "
            "gateway runs the same flow through its sandbox Twilio emulator (each start and each check is also a call "
            "to the emulator over HTTP), on a new data directory. Same client, 32 users, %s s per run, the two "
            "interleaved round by round (each server idle while the other is loaded), so that the machine's drift "
            "between runs does not enter the ratio; the ratio is that of the medians." % (pairs["workers"], seconds))
        add("")
        add("| round | gateway flows/s | django flows/s | ratio | gateway CPU µs per flow | django CPU µs per flow (all workers) | client CPU µs per flow, gateway / django | failures |")
        add("|---|---:|---:|---:|---:|---:|---:|---|")
        for index, pair in enumerate(rounds):
            g, d = pair["gateway"], pair["django"]
            add("| %d | %s | %s | %.1f× | %s | %s | %s / %s | %s |" % (
                index + 1, f(g["flows_per_s"]), f(d["flows_per_s"]), g["flows_per_s"] / max(d["flows_per_s"], 1e-9),
                per_flow(g, "server_cpu_s"), per_flow(d, "server_cpu_s"), per_flow(g, "client_cpu_s"),
                per_flow(d, "client_cpu_s"), "; ".join(x for x in (failures(g), failures(d)) if x) or "none"))
        gm = statistics.median(p["gateway"]["flows_per_s"] for p in rounds)
        dm = statistics.median(p["django"]["flows_per_s"] for p in rounds)
        django_ratio = gm / max(dm, 1e-9)
        def median_per_flow(side, key):
            return f(statistics.median(p[side][key] / max(p[side]["flows"], 1) * 1e6 for p in rounds))
        add("| **medians** | **%s** | **%s** | **%.1f×** | %s | %s | %s / %s | |" % (
            f(gm), f(dm), django_ratio, median_per_flow("gateway", "server_cpu_s"),
            median_per_flow("django", "server_cpu_s"), median_per_flow("gateway", "client_cpu_s"),
            median_per_flow("django", "client_cpu_s")))
        add("")
        add("Server CPU is the gateway process's user + system time during the run, or gunicorn's master and "
            "workers'; client CPU is the Python client's own. Both share the machine's %d cores, so a flow's "
            "throughput is bounded by server and client CPU together: at most %d cores × 1,000,000 µs divided by "
            "their sum per flow." % (os.cpu_count() or 0, os.cpu_count() or 0))
        add("")
    elif dj:
        add("### The same flow against django-phone-verify")
        add("")
        add("django-phone-verify 3.3.0 (Django 5.2, DRF 3.18, `scripts/bench/requirements.txt`) in a throwaway "
            "project (`scripts/bench/django_project.py`): SQLite in WAL mode, gunicorn with %d sync workers "
            "(2 × cores + 1), DEBUG off, a sending backend that sends nothing; the code is read from its table. Same client, "
            "32 users, %s s." % (dj.get("workers", 0), seconds))
        add("")
        add("| server | flows/s | req/s | flow p50 ms | flow p99 ms | server CPU µs per flow | client CPU µs per flow | failures |")
        add("|---|---:|---:|---:|---:|---:|---:|---|")
        for name, run in (("gateway", fl), ("django-phone-verify", dj)):
            if run:
                add("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    name, f(run["flows_per_s"]), f(run["requests_per_s"]), ms(run["flow"]["p50_ms"]),
                    ms(run["flow"]["p99_ms"]), per_flow(run, "server_cpu_s"), per_flow(run, "client_cpu_s"),
                    failures(run) or "none"))
        if fl and dj["flows_per_s"]:
            django_ratio = fl["flows_per_s"] / dj["flows_per_s"]
            add("| **ratio** | **%.1f×** | | | | | | |" % django_ratio)
        add("")

    ph = r.get("phones")
    if ph and "error" not in ph:
        add("### Phone numbers beside Google's C++ libphonenumber")
        add("")
        add("`scripts/phonemeta/run.sh cpp --seconds %s`: the corpus of `run.sh bench` (100,000 inputs, seed 20261122), "
            "single thread. C++: Debian's `libphonenumber-dev` %s (built with ICU regular expressions, no RE2), driven by "
            "`scripts/phonemeta/cpp_phonebench.cc` (g++ -O2)." % (ph["seconds"], ph["cpp_version"]))
        add("")
        add("| implementation | inputs/s | µs each | gateway is |")
        add("|---|---:|---:|---:|")
        add("| gateway (Swift): parse + region + type + validity | %s | %.2f | |" % (f(ph["gateway_per_s"]), 1e6 / ph["gateway_per_s"]))
        add("| C++ libphonenumber: Parse + IsValidNumber + GetNumberType | %s | %.2f | %.1f× |" % (
            f(ph["cpp_full_per_s"]), 1e6 / ph["cpp_full_per_s"], ph["gateway_per_s"] / ph["cpp_full_per_s"]))
        add("| C++ libphonenumber: Parse + GetNumberType | %s | %.2f | %.1f× |" % (
            f(ph["cpp_parse_type_per_s"]), 1e6 / ph["cpp_parse_type_per_s"], ph["gateway_per_s"] / ph["cpp_parse_type_per_s"]))
        add("")
        add("Agreement, reported apart (the Debian package's metadata is older than the gateway's 9.0.43): %s of %s "
            "inputs (%.3f%%) have the same parse outcome, validity, E.164, region and type. %s" % (
                f(ph["agreed"]), f(ph["total"]), 100.0 * ph["agreed"] / ph["total"],
                " ".join(s.strip()[0].upper() + s.strip()[1:] + "." for s in ph["summary"][1:])))
        add("")
    elif ph:
        add("### Phone numbers beside C++ libphonenumber: not run")
        add("")
        add("```\n%s\n```" % ph["error"])
        add("")

    add("### Targets (issue 13)")
    add("")
    add("| target | measured | |")
    add("|---|---|---|")
    h = rate_of(r["healthz"]) if r.get("healthz") else None
    for label, key in (("start", "start"), ("check, wrong code", "check_wrong"), ("check, right code", "check_right")):
        x = r.get(key)
        if h and x:
            rps = rate_of(x)
            share = rps / h
            add("| %s ≥ 25%% of `/healthz` req/s | %s of %s = %.1f%% | %s |" % (
                label, f(rps), f(h), 100 * share,
                verdict(share >= 0.25, "" if share >= 0.25 else "%.1f× short; %s req/s needed" % (0.25 / share, f(0.25 * h)))))
    # Against the same gateway's first starts (the target's "first 10k"), measured in the million phase just
    # before seeding; the suite's empty-store run, minutes earlier, is shown beside it.
    s0 = r.get("start_first") or r.get("start")
    baseline = "its first starts" if r.get("start_first") else "the empty store"
    for label, key, m in (("1M in the gateway's store", "start_1m_store", m_store),
                          ("1M in the store and 1M live in the emulator", "start_1m_emulator", m_emulator)):
        s1 = r.get(key)
        if m and m.get("seeded_rps"):
            # The interleaved medians decide; the single comparisons with the phase's first starts (minutes
            # earlier) and with the suite's empty-store run are shown beside them.
            fresh, seeded = statistics.median(m["fresh_rps"]), statistics.median(m["seeded_rps"])
            change = seeded / fresh - 1
            aside = []
            if s0 and s1:
                aside.append("%+.1f%% against %s" % (100 * (rate_of(s1) / rate_of(s0) - 1), baseline))
            if r.get("start_first") and r.get("start") and s1:
                aside.append("%+.1f%% against the empty-store run above" % (100 * (rate_of(s1) / rate_of(r["start"]) - 1)))
            add("| start with %s within 10%% of a new data directory's, interleaved | medians of %d rounds: %s vs %s req/s: %+.1f%%%s | %s |" % (
                label, len(m["seeded_rps"]), f(seeded), f(fresh), 100 * change,
                " (single first rounds: %s)" % "; ".join(aside) if aside else "",
                verdict(change >= -0.10, "" if change >= -0.10 else "%.0f points beyond" % (100 * (-change - 0.10)))))
            continue
        if s0 and s1:
            change = rate_of(s1) / rate_of(s0) - 1
            aside = ""
            if r.get("start_first") and r.get("start"):
                aside = " (%+.1f%% against the empty-store run above, %s req/s)" % (
                    100 * (rate_of(s1) / rate_of(r["start"]) - 1), f(rate_of(r["start"])))
            add("| start with %s within 10%% of %s | %s vs %s req/s: %+.1f%%%s | %s |" % (
                label, baseline, f(rate_of(s1)), f(rate_of(s0)), 100 * change, aside,
                verdict(change >= -0.10, "" if change >= -0.10 else "%.0f points beyond" % (100 * (-change - 0.10)))))
    if rg and rd:
        latency_rounds = added_latency_rounds(r)
        p50, p99 = added_latency_medians(latency_rounds)
        reached = all(x["achieved_per_s"] >= 0.95 * data["rate"] for pair in latency_rounds for x in pair)
        note = "" if reached else "; the rate was not sustained in every run: %s of %s/s completed at worst" % (
            f(min(x["achieved_per_s"] for pair in latency_rounds for x in pair)), f(data["rate"]))
        if len(latency_rounds) > 1:
            note = " (medians of %d interleaved rounds)%s" % (len(latency_rounds), note)
        add("| added latency p50 ≤ 0.3 ms at %s starts/s | %+.2f ms%s | %s |" % (f(data["rate"]), p50, note,
            verdict(p50 <= 0.3 and reached, "" if p50 <= 0.3 else "%.2f ms over" % (p50 - 0.3))))
        add("| added latency p99 ≤ 1 ms at %s starts/s | %+.2f ms%s | %s |" % (f(data["rate"]), p99, note,
            verdict(p99 <= 1.0 and reached, "" if p99 <= 1.0 else "%.2f ms over" % (p99 - 1.0))))
    if django_ratio is not None:
        ratio = django_ratio
        add("| ≥ 10× django-phone-verify's flows/s%s | %.1f× | %s |" % (
            ", interleaved, ratio of medians" if pairs else "", ratio,
            verdict(ratio >= 10, "" if ratio >= 10 else "%.1f× short" % (10 / ratio))))
    if ph and "error" not in ph:
        ratio = ph["gateway_per_s"] / ph["cpp_full_per_s"]
        add("| phone numbers at least as fast as C++ libphonenumber | %.1f× its speed | %s |" % (ratio, verdict(ratio >= 1, "")))
    if r.get("idle"):
        v = r["idle"]["rss_mb"]
        add("| RSS idle ≤ 64 MB | %.1f MB | %s |" % (v, verdict(v <= 64, "" if v <= 64 else "%.1f MB over" % (v - 64))))
    for label, x in (("1M in the gateway's store", m_store), ("1M in the store and 1M live in the emulator", m_emulator)):
        if x:
            v = max(x["rss_idle_mb"], x["rss_after_load_mb"])
            add("| RSS ≤ 256 MB with %s | %.1f MB (the larger of idle and after load) | %s |" % (
                label, v, verdict(v <= 256, "" if v <= 256 else "%.1f MB over" % (v - 256))))
    if rd_:
        v = rd_["fresh_median_s"] * 1000
        add("| ready ≤ 0.5 s | %s ms (median, new data directory) | %s |" % (ms(v), verdict(v <= 500, "" if v <= 500 else "%.0f ms over" % (v - 500))))
    for label, x in (("1M in the gateway's store", m_store), ("1M in the store and 1M live in the emulator", m_emulator)):
        if x:
            v = x["ready_s"] * 1000
            add("| ready ≤ 0.5 s with %s | %s ms (one launch) | %s |" % (
                label, ms(v), verdict(v <= 500, "" if v <= 500 else "%.0f ms over" % (v - 500))))
    add("")
    text = "\n".join(lines)
    count = data.get("seeded", 1_000_000)
    if count != 1_000_000:  # the labels say 1M; say what was seeded instead
        text = text.replace("1M ", "%s " % f(count))
    return text


def sample_count(profile):
    """A profile's sample count, or why its parts could not be read."""
    samples = (profile or {}).get("samples")
    return f(samples) if isinstance(samples, int) else "no parts (%s)" % samples if samples else "–"


def added_latency_rounds(r):
    """[(gateway, direct)] of the fixed-rate pairs at the target's rate, in the order they ran."""
    rounds, index = [], 0
    while True:
        suffix = "" if index == 0 else "_%d" % index
        g, d = r.get("rate_gateway" + suffix), r.get("rate_direct" + suffix)
        if not (g and d):
            return rounds
        rounds.append((g, d))
        index += 1


def added_latency_medians(rounds):
    """The medians over the rounds of the gateway's p50 and p99 minus the direct call's."""
    return (statistics.median(g["service"]["p50_ms"] - d["service"]["p50_ms"] for g, d in rounds),
            statistics.median(g["service"]["p99_ms"] - d["service"]["p99_ms"] for g, d in rounds))


def rate_of(wrk_result):
    """Requests per second over the time the load ran (a check run stops when its list runs out)."""
    return wrk_result.get("active_rps", wrk_result["rps"])


def failures(x):
    return ", ".join("%s %s" % (k, v) for k, v in sorted(x.get("failures", {}).items()))


def signed(a, b):
    return "%+.2f ms" % (a - b)


def write(path, section):
    text = open(path).read() if os.path.exists(path) else "# Benchmarks\n"
    block = BEGIN + "\n" + section.rstrip() + "\n" + END
    if BEGIN in text and END in text:
        text = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: block, text, flags=re.S)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    with open(path, "w") as handle:
        handle.write(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--write")
    parser.add_argument("--command", default="scripts/bench/run.sh")
    args = parser.parse_args()
    section = build(args.out, args.command)
    print(section)
    with open(os.path.join(args.out, "report.md"), "w") as handle:
        handle.write(section + "\n")
    if args.write:
        write(args.write, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
