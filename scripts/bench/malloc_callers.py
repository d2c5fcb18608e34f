#!/usr/bin/env python3
"""Which code asks for a request's heap allocations: every `malloc` of the measured gateway, with its call chain.

    python3 scripts/bench/malloc_callers.py [--gateway .build/release/gateway] [--workload start] [--requests 400]

cost_report.py counts allocations per request; this says where they come from. It starts the same pair of
gateways as cost_report.py (the measured one, and a vendor process serving the emulators), warms the workload
up, then records a `perf probe` on glibc's `malloc` with call chains (`perf record -e probe_libc:malloc -g`)
while `--requests` of the workload run sequentially on one connection. Every sample is one allocation, so the
tables are exact counts, divided by the requests: by the first frame above the allocator, and by the innermost
frame of the gateway's own code (or "none of ours" for NIO, AsyncHTTPClient and Hummingbird alone). Needs root
for `perf probe`; the probe stays defined (`perf probe -d probe_libc:malloc` removes it). Loopback only.
"""
import argparse, collections, os, re, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
from cost_report import Connection, Report, WORKLOADS  # noqa: E402

RUNTIME = ("libc.so", "alloc_count")
OURS = re.compile(r"(Gateway|Verification|Twilio|SQLite|SQLStore|JSON|APIKey|ClientSecret|Middleware|Controller|"
                  r"VendorHTTP|VendorDate|HTTPClientTransport|PhoneNumber|Store|Hex|FormEncoding|LogHandler|Metric)")


def libc_path():
    output = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    match = re.search(r"libc\.so\.6 \(libc6,x86-64\) => (\S+)", output)
    return match.group(1) if match else "/usr/lib/x86_64-linux-gnu/libc.so.6"


def samples(script_text):
    """Each sample's frames, leaf first, as (symbol, library)."""
    for block in script_text.split("\n\n"):
        lines = [line.strip() for line in block.strip().splitlines()]
        if len(lines) < 2 or "probe_libc:malloc" not in lines[0]:
            continue
        frames = []
        for line in lines[1:]:
            match = re.match(r"^[0-9a-f]+ (.*?)(?:\+0x[0-9a-f]+)? \((.*)\)$", line)
            if match:
                frames.append((match.group(1), match.group(2)))
        yield frames


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gateway", default=os.path.join(bench.ROOT, ".build", "release", "gateway"))
    parser.add_argument("--workload", default="start", choices=WORKLOADS)
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    if not shutil.which("perf"):
        raise SystemExit("needs perf (Debian: linux-perf)")
    probe = subprocess.run(["perf", "probe", "-x", libc_path(), "--add", "malloc"], capture_output=True, text=True)
    if probe.returncode != 0 and "already exists" not in probe.stderr:
        raise SystemExit("perf probe failed (root?): " + probe.stderr[-400:])
    binary = os.path.basename(os.path.realpath(args.gateway))
    data = os.path.join(tempfile.mkdtemp(prefix="gateway-malloc-"), "malloc.data")
    report = Report(argparse.Namespace(gateway=args.gateway, warmup=args.warmup, requests=args.requests))
    try:
        report.start()
        connection = Connection(report.gateway.port)
        index = WORKLOADS.index(args.workload)
        report.run(report.requests(args.workload, args.warmup, "+44747%d" % index), connection)
        measured = report.requests(args.workload, args.requests, "+44748%d" % index)
        recorder = subprocess.Popen(["perf", "record", "-e", "probe_libc:malloc", "-g", "-p",
                                     str(report.gateway.process.pid), "-o", data],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.5)
        report.run(measured, connection)
        time.sleep(0.5)
        recorder.send_signal(2)
        recorder.wait(timeout=60)
    finally:
        report.stop()
        shutil.rmtree(report.scratch, ignore_errors=True)
    script = subprocess.run(["perf", "script", "-i", data], capture_output=True, text=True).stdout
    demangled = subprocess.run(["swift", "demangle", "--simplified"], input=script, capture_output=True,
                               text=True).stdout or script
    shutil.rmtree(os.path.dirname(data), ignore_errors=True)
    first, ours, total = collections.Counter(), collections.Counter(), 0
    for frames in samples(demangled):
        total += 1
        caller = next(("%s [%s]" % (symbol[:110], os.path.basename(library)) for symbol, library in frames
                       if not os.path.basename(library).startswith(RUNTIME) and "swift_allocObject" not in symbol
                       and "swift_slowAlloc" not in symbol), "?")
        first[caller] += 1
        own = next((symbol[:120] for symbol, library in frames if os.path.basename(library) == binary
                    and OURS.search(symbol) and "NIO" not in symbol.split("(")[0]), "(none of ours)")
        ours[own] += 1
    n = args.requests
    print("%d allocations recorded over %d %s requests (%.1f per request; the background services' are in it)"
          % (total, n, args.workload, total / n))
    for title, counter in (("first frame above the allocator", first), ("innermost frame of the gateway's code", ours)):
        print("\n| per request | %s |\n|---:|---|" % title)
        for name, count in counter.most_common(args.top):
            print("| %.1f | `%s` |" % (count / n, name.replace("|", "\\|")))


if __name__ == "__main__":
    main()
