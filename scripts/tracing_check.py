#!/usr/bin/env python3
"""Traces, received as a collector would: a small OTLP/HTTP receiver parses what the gateway exports with the
OpenTelemetry project's own protobuf classes (`opentelemetry-proto`).

    .venv/bin/pip install opentelemetry-proto
    .venv/bin/python scripts/tracing_check.py                   # builds and starts its own sandbox gateway
    .venv/bin/python scripts/tracing_check.py --gateway .build/debug/gateway

It starts the receiver on a free loopback port and a sandbox gateway pointed at it by the standard variables
(`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_SERVICE_NAME`), then, each request carrying a caller's `traceparent`:
a start, the check of its code, and a start while Twilio answers 503 to everything (it fails over to Sinch).
It checks that
  1. each request's server span continues the caller's trace (its trace id, the caller's span as parent), is
     named by the route's pattern and carries the method, route and status (and `verification.id` for a check);
  2. under it, the engine's steps: a `routing` span (route, country, candidates) for a start, and a
     `provider.start` or `provider.check` span per vendor tried, whose child is the vendor's HTTP call as a
     client span; and the store's calls as `store <operation>` client spans (`db.system.name` sqlite); each
     inside its parent's time, with a duration;
  3. the failover start tried two providers, the first an error (twilio, provider_unavailable; its HTTP call
     answered 503), the second not;
  4. no attribute of any span or event contains the phone number or the code;
  5. the spans name the service as OTEL_SERVICE_NAME says.
Exit status 0 when everything holds.
"""
import argparse, os, sys, tempfile, threading, uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sandbox_gateway as gw  # noqa: E402

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest  # noqa: E402
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status  # noqa: E402

KEY = "sk_tracing_check_0001"
check = gw.Checks()


class Collector(BaseHTTPRequestHandler):
    spans = []  # (service name, span)
    lock = threading.Lock()
    content_types = set()

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        Collector.content_types.add((self.path, self.headers.get("Content-Type")))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        with Collector.lock:
            for resource_spans in request.resource_spans:
                service = next((a.value.string_value for a in resource_spans.resource.attributes
                                if a.key == "service.name"), None)
                for scope_spans in resource_spans.scope_spans:
                    Collector.spans.extend((service, span) for span in scope_spans.spans)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args):
        pass


def traceparent():
    trace, span = uuid.uuid4().hex, uuid.uuid4().hex[:16]
    return trace, span, f"00-{trace}-{span}-01"


def call(base, method, path, body=None, header=None):
    import json, urllib.error, urllib.request
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method)
    request.add_header("Authorization", f"Bearer {KEY}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if header:
        request.add_header("traceparent", header)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def spans_of(trace_hex):
    with Collector.lock:
        return [(s, span) for s, span in Collector.spans if span.trace_id.hex() == trace_hex]


def attributes(span):
    out = {}
    for a in span.attributes:
        v = a.value
        out[a.key] = (v.string_value if v.HasField("string_value") else v.int_value if v.HasField("int_value")
                      else v.bool_value if v.HasField("bool_value") else v.double_value)
    return out


def server_and_clients(trace, caller_span, label, route, status):
    """Checks one request's server span and its vendor client spans; returns (server span, clients)."""
    found = spans_of(trace)
    servers = [span for _, span in found if span.kind == Span.SPAN_KIND_SERVER]
    server = next((s for s in servers if s.parent_span_id.hex() == caller_span), None)
    check(server is not None, f"{label}: a server span continues the caller's trace {trace[:8]}… and span {caller_span}")
    if server is None:
        return None, []
    attrs = attributes(server)
    check(server.name == f"{route[0]} {route[1]}" and attrs.get("http.route") == route[1]
          and attrs.get("http.request.method") == route[0] and attrs.get("http.response.status_code") == status,
          f"{label}: named {server.name!r}, route {attrs.get('http.route')}, status {attrs.get('http.response.status_code')}")
    # The engine's steps under the server span; the vendor's HTTP call under its provider step.
    steps = {span.span_id: span for _, span in found if span.parent_span_id == server.span_id
             and span.kind == Span.SPAN_KIND_INTERNAL}
    calls = sorted((s for s in steps.values() if s.name in ("provider.start", "provider.check")),
                   key=lambda s: s.start_time_unix_nano)
    clients = sorted((span for _, span in found if span.kind == Span.SPAN_KIND_CLIENT
                      and span.parent_span_id in steps and not span.name.startswith("store ")),
                     key=lambda s: s.start_time_unix_nano)
    stores = [span for _, span in found if span.kind == Span.SPAN_KIND_CLIENT and span.name.startswith("store ")
              and span.parent_span_id == server.span_id]

    def within(child, parent):
        return (parent.start_time_unix_nano <= child.start_time_unix_nano <= child.end_time_unix_nano
                <= parent.end_time_unix_nano and child.end_time_unix_nano > child.start_time_unix_nano)

    inside = all(within(c, steps[c.parent_span_id]) and within(steps[c.parent_span_id], server) for c in clients)
    check(calls and len(clients) == len(calls) and inside,
          f"{label}: {len(calls)} {'/'.join(sorted({c.name for c in calls}))} span(s) under it, each with the vendor's "
          f"HTTP call as a client span inside its time ("
          f"{', '.join(f'{c.name} {(c.end_time_unix_nano - c.start_time_unix_nano) / 1e6:.1f} ms' for c in clients)})")
    check(stores and all(within(t, server) and attributes(t).get("db.system.name") == "sqlite" for t in stores),
          f"{label}: {len(stores)} store call span(s) under it ({', '.join(sorted({t.name for t in stores}))})")
    if route[1] == "/v1/verifications":
        routing = [s for s in steps.values() if s.name == "routing"]
        attrs = attributes(routing[0]) if routing else {}
        check(len(routing) == 1 and attrs.get("routing.route") and attrs.get("verification.country") == "US"
              and attrs.get("routing.candidates") and within(routing[0], server),
              f"{label}: a routing span under it: route {attrs.get('routing.route')}, country "
              f"{attrs.get('verification.country')}, candidates {attrs.get('routing.candidates')}")
    return server, calls


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gateway", help="a built gateway binary (default: swift build)")
    args = parser.parse_args()
    collector = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=collector.serve_forever, daemon=True).start()
    work = tempfile.mkdtemp(prefix="tracing-check-")
    os.environ.update(OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{collector.server_address[1]}",
                      OTEL_SERVICE_NAME="gateway-under-check")
    gw.KEY = KEY
    binary = args.gateway or gw.build()
    process, base = gw.start(binary, os.path.join(work, "data"), log_path=os.path.join(work, "gateway.log"))
    number = "+14155550188"
    try:
        trace, first, header = traceparent()
        status, started = call(base, "POST", "/v1/verifications", {"to": number}, header)
        check(status == 201, f"a start with a caller's traceparent: {status}")
        code = gw.code_for(base, number)
        second = uuid.uuid4().hex[:16]
        status, checked = call(base, "POST", f"/v1/verifications/{started['id']}/check", {"code": code},
                               f"00-{trace}-{second}-01")
        check(status == 200 and checked.get("status") == "approved", f"its check: {status} {checked.get('status')}")
        call(base, "PUT", "/sandbox/faults/twilio", {"server_error_status": 503})
        failover_trace, failover_span, failover_header = traceparent()
        status, moved = call(base, "POST", "/v1/verifications", {"to": "+14155550189"}, failover_header)
        check(status == 201 and moved.get("provider") == "sinch", f"a start while twilio answers 503: {status}, "
              f"served by {moved.get('provider')}")

        gw.wait_for(lambda: len(spans_of(trace)) >= 4 and len(spans_of(failover_trace)) >= 3)
        server, _ = server_and_clients(trace, first, "start", ("POST", "/v1/verifications"), 201)
        check_server, _ = server_and_clients(trace, second, "check", ("POST", "/v1/verifications/{id}/check"), 200)
        if check_server is not None:
            check(attributes(check_server).get("verification.id") == started["id"],
                  f"check: verification.id {attributes(check_server).get('verification.id')}")
        _, calls = server_and_clients(failover_trace, failover_span, "failover", ("POST", "/v1/verifications"), 201)
        tried = [(attributes(c).get("verification.provider"), attributes(c).get("error.type")) for c in calls]
        errors = [c.status.code == Status.STATUS_CODE_ERROR for c in calls]
        check(len(calls) == 2 and tried[0] == ("twilio", "provider_unavailable") and tried[1] == ("sinch", None)
              and errors == [True, False], f"failover: providers tried {tried}, errors {errors}")
        failover_clients = [span for _, span in spans_of(failover_trace)
                            if span.kind == Span.SPAN_KIND_CLIENT and not span.name.startswith("store ")]
        codes = sorted(attributes(c).get("http.response.status_code") for c in failover_clients)
        check(codes == [200, 503] or codes == [201, 503], f"failover: the vendors' HTTP answers {codes}")

        with Collector.lock:
            everything = list(Collector.spans)
        leaks = []
        for _, span in everything:
            values = [str(v) for v in attributes(span).values()]
            for event in span.events:
                values += [str(a.value) for a in event.attributes]
            values.append(span.name)
            for value in values:
                if "4155550188" in value or "4155550189" in value or (code and code in value):
                    leaks.append((span.name, value))
        check(not leaks, f"no phone number or code in any of {len(everything)} spans' names or attributes {leaks[:3]}")
        services = {s for s, _ in everything}
        check(services == {"gateway-under-check"}, f"service.name {services}")
        check(Collector.content_types == {("/v1/traces", "application/x-protobuf")},
              f"exported to /v1/traces as protobuf: {Collector.content_types}")
    finally:
        gw.stop(process)
        collector.shutdown()
    return gw.finish("tracing check", check.failures, work)


if __name__ == "__main__":
    sys.exit(main())
