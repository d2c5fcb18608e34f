#!/usr/bin/env python3
"""Where a sandbox start's latency goes, from the gateway's own trace spans.

    .venv-bench/bin/pip install 'opentelemetry-proto>=1.20,<2'
    .venv-bench/bin/python scripts/bench/latency_parts.py --gateway .build/release/gateway [--requests 800]
        [--config FILE]

Starts a sandbox gateway (SQLite under synchronous=FULL, the Twilio Verify emulator in process, reached over
HTTP on the gateway's own port) that exports its spans over OTLP/HTTP to a receiver in this script (the one of
scripts/tracing_check.py), then sends sequential starts on one keep-alive connection, one at a time, so that no
request waits for another. For each start it lines up the spans of its trace against the server span's start:
the routing step, the vendor call (`provider.start`), its HTTP client span, the emulator's own server span
inside it, and the store's insert. The medians give the path's parts:

  before the vendor call      request read, middleware, key check, JSON, phone number, routing
  to the emulator             the outbound client, loopback, the inbound server, up to the emulator's handler
  the emulator                the vendor's own work (what "the emulator alone" measures)
  back from the emulator      the answer's way back to the waiting task
  to the store                the plugin reading the answer, the record built
  store insert                the queue, the transaction, the commit and its fdatasync
  after the store             the answer written

It also times fdatasync of a 44 KiB write (a start's WAL frames) on the data directory's file system, 300 times,
so the store's part can be read against the device's. Tracing itself costs CPU (BENCHMARKS.md, issue 49): the
parts are for proportions; the client's p50 is printed beside them. Loopback only; the gateway stops at the end.
"""
import argparse, collections, http.client, json, os, shutil, statistics, sys, tempfile, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import bench  # noqa: E402
from fsync_probe import fdatasync_times  # noqa: E402
import tracing_check  # noqa: E402  (its OTLP receiver)
from http.server import ThreadingHTTPServer  # noqa: E402

Span = tracing_check.Span


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gateway", default=os.path.join(bench.ROOT, ".build", "release", "gateway"))
    parser.add_argument("--requests", type=int, default=800)
    parser.add_argument("--warmup", type=int, default=300)
    parser.add_argument("--config", help="a configuration file for the gateway (with `sandbox: true`), e.g. to "
                        "compare `sqlite_sync: normal`")
    args = parser.parse_args()
    if not 1 <= args.requests <= 50000 or not 0 <= args.warmup <= 50000:
        raise SystemExit("--requests takes 1 to 50,000 and --warmup 0 to 50,000")
    collector = ThreadingHTTPServer(("127.0.0.1", 0), tracing_check.Collector)
    threading.Thread(target=collector.serve_forever, daemon=True).start()
    scratch = tempfile.mkdtemp(prefix="latency-parts-")
    os.environ.update(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:%d" % collector.server_address[1],
                      OTEL_SERVICE_NAME="latency-parts")
    gateway = bench.Gateway(args.gateway, os.path.join(scratch, "data"), os.path.join(scratch, "gateway.log"), extra=["--config", args.config] if args.config else [])
    latencies, traces = [], []
    try:
        gateway.start()
        connection = http.client.HTTPConnection("127.0.0.1", gateway.port, timeout=30)
        headers = {"Authorization": "Bearer " + bench.KEY, "Content-Type": "application/json"}
        for index in range(args.warmup + args.requests):
            trace = os.urandom(16).hex()
            headers["traceparent"] = "00-%s-%s-01" % (trace, os.urandom(8).hex())
            began = time.perf_counter()
            connection.request("POST", "/v1/verifications", json.dumps({"to": "+4474%08d" % (index + 1)}), headers)
            response = connection.getresponse()
            response.read()
            if response.status != 201:
                raise SystemExit("start %d answered %d" % (index, response.status))
            if index >= args.warmup:
                latencies.append((time.perf_counter() - began) * 1000)
                traces.append(trace)
        connection.close()
        # The exporter sends in batches; wait until every measured trace's server span is in.
        wanted = set(traces)
        deadline = time.time() + 60
        while time.time() < deadline:
            with tracing_check.Collector.lock:
                have = {span.trace_id.hex() for _, span in tracing_check.Collector.spans
                        if span.kind == Span.SPAN_KIND_SERVER and span.name == "POST /v1/verifications"}
            if wanted <= have:
                break
            time.sleep(0.5)
        # A start's WAL frames: about 11 pages of 4 KiB (strace of a start's commit).
        syncs = fdatasync_times(gateway.data_dir, count=300, size=45056)
        sync_p50, sync_p90 = syncs[len(syncs) // 2] * 1e6, syncs[int(0.9 * len(syncs))] * 1e6
    finally:
        gateway.stop()
        collector.shutdown()
        shutil.rmtree(scratch, ignore_errors=True)

    by_trace = collections.defaultdict(list)
    with tracing_check.Collector.lock:
        for _, span in tracing_check.Collector.spans:
            by_trace[span.trace_id.hex()].append(span)
    parts = collections.defaultdict(list)
    for trace in traces:
        spans = by_trace.get(trace, [])
        server = next((s for s in spans if s.kind == Span.SPAN_KIND_SERVER and s.name == "POST /v1/verifications"),
                      None)
        vendor = next((s for s in spans if s.name == "provider.start"), None)
        client = next((s for s in spans if s.kind == Span.SPAN_KIND_CLIENT and not s.name.startswith("store ")),
                      None)
        emulator = next((s for s in spans if s.kind == Span.SPAN_KIND_SERVER and s is not server), None)
        store = next((s for s in spans if s.name == "store insert"), None)
        if not all((server, vendor, client, emulator, store)):
            continue
        micros = lambda nanos: nanos / 1000.0  # noqa: E731
        parts["before the vendor call"].append(micros(client.start_time_unix_nano - server.start_time_unix_nano))
        parts["to the emulator"].append(micros(emulator.start_time_unix_nano - client.start_time_unix_nano))
        parts["the emulator"].append(micros(emulator.end_time_unix_nano - emulator.start_time_unix_nano))
        parts["back from the emulator"].append(micros(client.end_time_unix_nano - emulator.end_time_unix_nano))
        parts["to the store"].append(micros(store.start_time_unix_nano - client.end_time_unix_nano))
        parts["store insert"].append(micros(store.end_time_unix_nano - store.start_time_unix_nano))
        parts["after the store"].append(micros(server.end_time_unix_nano - store.end_time_unix_nano))
        parts["server span"].append(micros(server.end_time_unix_nano - server.start_time_unix_nano))
    if not parts:
        raise SystemExit("no complete trace among %d starts" % len(traces))
    count = len(parts["server span"])
    print("%d sequential sandbox starts with their spans (of %d measured, after %d of warm-up); client p50 %.2f ms, "
          "p90 %.2f ms" % (count, len(traces), args.warmup, statistics.median(latencies),
                           sorted(latencies)[int(0.9 * len(latencies))]))
    print("\n| part | p50 µs | p90 µs |")
    print("|---|---:|---:|")
    for name, values in parts.items():
        values.sort()
        print("| %s | %.0f | %.0f |" % (name, statistics.median(values), values[int(0.9 * len(values))]))
    print("\nfdatasync of 44 KiB on the data directory's file system: p50 %.0f µs, p90 %.0f µs" % (sync_p50, sync_p90))


if __name__ == "__main__":
    main()
