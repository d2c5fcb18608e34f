import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Synchronization
import Testing
import Tracing

@testable import gateway

/// Keeps every finished span.
final class CollectedSpans: SpanExporter {
    private let spans = Mutex<[FinishedSpan]>([])
    var all: [FinishedSpan] { spans.withLock { $0 } }
    func export(_ span: FinishedSpan) { spans.withLock { $0.append(span) } }
    func flushSoon() {}
}

@Suite("Traces")
struct TracingTests {
    @Test("traceparent: parsed when well formed, refused otherwise, and written back the same")
    func traceparent() throws {
        let header = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        let context = try #require(TraceContext(traceparent: header, traceState: "vendor=1"))
        #expect(context.traceparent == header && context.sampled && context.traceState == "vendor=1")
        #expect(TraceContext(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")?.sampled == false)
        for bad in [
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  // zero trace id
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  // zero span id
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  // forbidden version
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",  // upper case
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",  // short
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",  // version 00 with more
            "garbage",
        ] {
            #expect(TraceContext(traceparent: bad) == nil, "\(bad)")
        }
        // A later version is read as 00, its extra fields ignored.
        #expect(TraceContext(traceparent: "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x") != nil)
    }

    @Test("the ratio sampler keeps about its share of new traces, and the same traces every time")
    func sampler() {
        var generator = SystemRandomNumberGenerator()
        let ids = (0..<4000).map { _ in (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        let kept = ids.filter { GatewayTracer.keeps($0, ratio: 0.25) }
        #expect((800...1200).contains(kept.count), "\(kept.count) of 4000")
        #expect(ids.filter { GatewayTracer.keeps($0, ratio: 0.25) } == kept)
        #expect(ids.allSatisfy { GatewayTracer.keeps($0, ratio: 1) })
        #expect(!ids.contains { GatewayTracer.keeps($0, ratio: 0) })
    }

    @Test("protobuf: varints, fixed-width little-endian fields, nested messages")
    func protobuf() {
        var writer = OTLPProtobuf.Writer()
        writer.varintField(6, 300)
        #expect(writer.bytes == [0x30, 0xAC, 0x02])
        var fixed = OTLPProtobuf.Writer()
        fixed.fixed64(7, 0x0102_0304_0506_0708)
        #expect(fixed.bytes == [0x39, 8, 7, 6, 5, 4, 3, 2, 1])
        var outer = OTLPProtobuf.Writer()
        var inner = OTLPProtobuf.Writer()
        inner.string(1, "ab")
        outer.message(2, inner)
        #expect(outer.bytes == [0x12, 4, 0x0A, 2, 0x61, 0x62])
    }

    static func gateway(_ harness: GatewayHarness, spans: CollectedSpans, ratio: String = "1")
        async throws -> (some ApplicationProtocol, GatewayRuntime)
    {
        var options = harness.options(environment: [
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
            "OTEL_TRACES_SAMPLER_ARG": ratio,
        ])
        options.spanExporter = spans
        return try await buildApplication(options)
    }

    @Test("a request's server span continues the caller's trace; its vendor calls are client spans under it")
    func serverAndClientSpans() async throws {
        let harness = GatewayHarness()
        let spans = CollectedSpans()
        let (app, runtime) = try await Self.gateway(harness, spans: spans)
        try await app.test(.router) { client in
            let caller = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
            let start = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+14155550177"}"#,
                headers: [HTTPField.Name("traceparent")!: caller])
            #expect(start.status == .created)
            let id = try #require(start.body["id"] as? String)
            let server = try #require(spans.all.first { $0.kind == .server })
            #expect(server.trace.traceIDHex == "4bf92f3577b34da6a3ce929d0e0e4736")
            #expect(server.parentSpanID.map(Hex.lowercase) == "00f067aa0ba902b7")
            #expect(server.name == "POST /v1/verifications")
            let attributes = Dictionary(server.attributes, uniquingKeysWith: { a, _ in a })
            #expect(attributes["http.route"] == .string("/v1/verifications"))
            #expect(attributes["http.response.status_code"] == .int64(201))
            let vendor = try #require(
                spans.all.first { $0.kind == .client && $0.trace.traceID == server.trace.traceID })
            // Server → routing, and server → provider.start → the vendor's HTTP call.
            let routing = try #require(spans.all.first { $0.name == "routing" })
            #expect(routing.parentSpanID == server.trace.spanID && routing.kind == .internal)
            let routingAttributes = Dictionary(routing.attributes, uniquingKeysWith: { a, _ in a })
            #expect(routingAttributes["verification.country"] == .string("US"))
            #expect(routingAttributes["routing.candidates"] != nil && routingAttributes["routing.route"] != nil)
            let call = try #require(spans.all.first { $0.name == "provider.start" })
            #expect(call.parentSpanID == server.trace.spanID)
            #expect(vendor.parentSpanID == call.trace.spanID)
            #expect(vendor.start >= call.start && vendor.end <= call.end && call.end <= server.end)
            // The start's write is a store span under the server span.
            let store = try #require(spans.all.first { $0.name.hasPrefix("store ") })
            #expect(store.kind == .client && store.parentSpanID == server.trace.spanID)
            #expect(
                Dictionary(store.attributes, uniquingKeysWith: { a, _ in a })["db.system.name"] == .string("sqlite"))
            // No number in any span; the request's logs carry the trace id.
            for span in spans.all {
                #expect(!"\(span.name) \(span.attributes)".contains("4155550177"))
            }
            #expect(harness.logs.messages.contains { $0.contains("trace_id=4bf92f3577b34da6a3ce929d0e0e4736") })
            let code = try sandboxCode(runtime, to: "+14155550177")
            let check = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
            #expect(check.status == .ok)
            let checked = try #require(spans.all.last { $0.kind == .server })
            #expect(checked.name == "POST /v1/verifications/{id}/check")
            #expect(Dictionary(checked.attributes, uniquingKeysWith: { a, _ in a })["verification.id"] == .string(id))
        }
    }

    @Test("a caller's unsampled trace, or a ratio of 0, records nothing but still carries the context")
    func unsampled() async throws {
        let harness = GatewayHarness()
        let spans = CollectedSpans()
        let (app, _) = try await Self.gateway(harness, spans: spans, ratio: "0")
        try await app.test(.router) { client in
            let start = try await client.call(.post, "/v1/verifications", json: #"{"to": "+14155550178"}"#)
            #expect(start.status == .created)
            let caller = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"
            _ = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+14155550179"}"#,
                headers: [HTTPField.Name("traceparent")!: caller])
            #expect(spans.all.isEmpty)
            #expect(harness.logs.messages.contains { $0.contains("trace_id=4bf92f3577b34da6a3ce929d0e0e4736") })
        }
    }

    @Test("the vendor call carries the span's traceparent")
    func propagated() async throws {
        final class Recording: HTTPTransport {
            let headers = Mutex<[HTTPFields]>([])
            func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse
            {
                headers.withLock { $0.append(request.headerFields) }
                return TransportResponse(status: .ok)
            }
        }
        let spans = CollectedSpans()
        let tracer = GatewayTracer(ratio: 1, exporter: spans)
        let recording = Recording()
        let transport = TracingTransport(base: recording, tracer: tracer)
        _ = try await transport.send(
            TransportRequest(method: .post, url: URL(string: "https://api.example.com/v2/x?to=+1415")!),
            timeout: .seconds(1))
        let span = try #require(spans.all.first)
        #expect(span.name == "POST api.example.com" && span.kind == .client)
        #expect(recording.headers.withLock { $0.first?[HTTPField.Name("traceparent")!] } == span.trace.traceparent)
        #expect(!"\(span.attributes)".contains("1415"))
    }

    @Test("tracing settings: the file, the standard variables, and what is refused")
    func settings() {
        var problems: [String] = []
        let endpoint = GatewayConfiguration.tracing(
            nil,
            environment: [
                "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SERVICE_NAME": "gw",
                "OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=abc%20d",
            ]
        ) { problems.append($0) }
        #expect(endpoint?.endpoint.absoluteString == "http://collector:4318/v1/traces")
        #expect(endpoint?.serviceName == "gw" && endpoint?.headers == ["x-api-key": "abc d"] && problems.isEmpty)
        #expect(GatewayConfiguration.tracing(nil, environment: [:]) { problems.append($0) } == nil)
        #expect(
            GatewayConfiguration.tracing(
                nil, environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"]
            ) { problems.append($0) } == nil)
        for bad in [
            ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"],
            ["OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://c"],
            [
                "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_SAMPLER": "traceidratio",
                "OTEL_TRACES_SAMPLER_ARG": "2",
            ],
        ] {
            var found: [String] = []
            _ = GatewayConfiguration.tracing(nil, environment: bad) { found.append($0) }
            #expect(found.count == 1, "\(bad)")
        }
    }

    @Test("off by default: no server span, and webhooks (like vendor calls) go out without a traceparent; on, with one")
    func offByDefault() async throws {
        for on in [false, true] {
            let harness = GatewayHarness()
            let receiver = WebhookReceiver()
            let secret = StandardWebhookTests.secrets[0]
            var environment = ["APP_WEBHOOK_SECRET": secret]
            if on { environment["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://127.0.0.1:4318" }
            var options = try harness.options(
                config: """
                    sandbox: true
                    webhooks:
                      endpoints: [{name: app, url: "http://127.0.0.1:9/hooks", secret_env: APP_WEBHOOK_SECRET}]
                      poll_interval_ms: 60000
                    """, environment: environment)
            let spans = CollectedSpans()
            options.webhookTransport = receiver
            options.spanExporter = spans
            let (app, runtime) = try await buildApplication(options)
            let dispatcher = try #require(runtime.webhooks)
            try await app.test(.router) { client in
                let start = try await client.call(.post, "/v1/verifications", json: #"{"to": "+14155550176"}"#)
                let id = try #require(start.body["id"] as? String)
                _ = try await client.call(.post, "/v1/verifications/\(id)/cancel", json: "{}")
                await dispatcher.pump()
                let request = try #require(receiver.requests.first)
                #expect((request.headerFields[HTTPField.Name("traceparent")!] != nil) == on)
                #expect(spans.all.contains { $0.kind == .server } == on)
                #expect(harness.logs.messages.contains { $0.contains("trace_id=") } == on)
            }
        }
    }
}
