import Foundation
import GatewayCore
import HTTPTypes
import Logging
import ServiceLifecycle
import Synchronization
import Tracing

/// Sends finished spans to an OpenTelemetry collector over OTLP/HTTP with protobuf bodies
/// (`POST {endpoint}/v1/traces`, `Content-Type: application/x-protobuf`): in batches of at most 512, at least
/// once a second, from a buffer of at most 4,096 spans (beyond that spans are dropped and counted in the log,
/// never blocking a request). Written here rather than taken from swift-otel, whose first build costs minutes;
/// the message is the few fields of `ExportTraceServiceRequest` a span needs.
final class OTLPExporter: SpanExporter, Service {
    let endpoint: URL
    let headers: [(HTTPField.Name, String)]
    let serviceName: String
    let transport: any HTTPTransport
    let logger: Logger
    let interval: Duration = .seconds(1)
    static let batch = 512
    static let capacity = 4096

    private struct Buffer {
        var spans: [FinishedSpan] = []
        var dropped = 0
    }
    private let buffer = Mutex(Buffer())

    init(
        endpoint: URL, headers: [(HTTPField.Name, String)], serviceName: String, transport: any HTTPTransport,
        logger: Logger
    ) {
        self.endpoint = endpoint
        self.headers = headers
        self.serviceName = serviceName
        self.transport = transport
        self.logger = logger
    }

    func export(_ span: FinishedSpan) {
        buffer.withLock { buffer in
            if buffer.spans.count < Self.capacity { buffer.spans.append(span) } else { buffer.dropped += 1 }
        }
    }

    func flushSoon() {}

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: self.interval) }
            await flush()
        }
        await flush()
    }

    /// Sends what the buffer holds, in batches. A batch the collector refuses or does not answer is dropped (and
    /// logged): traces are best effort, and a collector that is down must not grow the gateway's memory.
    func flush() async {
        while true {
            let (spans, dropped) = buffer.withLock { buffer -> ([FinishedSpan], Int) in
                let taken = Array(buffer.spans.prefix(Self.batch))
                buffer.spans.removeFirst(taken.count)
                defer { buffer.dropped = 0 }
                return (taken, buffer.dropped)
            }
            if dropped > 0 {
                logger.warning("spans dropped: the export buffer was full", metadata: ["spans": "\(dropped)"])
            }
            guard !spans.isEmpty else { return }
            var fields = HTTPFields()
            fields[.contentType] = "application/x-protobuf"
            for (name, value) in headers { fields[name] = value }
            let request = TransportRequest(
                method: .post, url: endpoint, headerFields: fields,
                body: OTLPProtobuf.request(spans, serviceName: serviceName))
            do {
                let response = try await transport.send(request, timeout: .seconds(10))
                if !(200..<300).contains(response.status.code) {
                    logger.warning(
                        "spans not exported",
                        metadata: ["http.status": "\(response.status.code)", "spans": "\(spans.count)"])
                }
            } catch {
                logger.warning("spans not exported", metadata: ["error": "\(error)", "spans": "\(spans.count)"])
            }
            if spans.count < Self.batch { return }
        }
    }
}

/// The protobuf wire format of an OTLP `ExportTraceServiceRequest`
/// (opentelemetry/proto/collector/trace/v1/trace_service.proto and trace/v1/trace.proto), for the fields the
/// gateway's spans have.
enum OTLPProtobuf {
    static func request(_ spans: [FinishedSpan], serviceName: String) -> Data {
        var resource = Writer()
        resource.message(1, keyValue("service.name", .string(serviceName)))
        resource.message(1, keyValue("telemetry.sdk.name", .string("verification-gateway")))
        var scope = Writer()
        scope.string(1, "verification-gateway")
        var scopeSpans = Writer()
        scopeSpans.message(1, scope)
        for span in spans { scopeSpans.message(2, encode(span)) }
        var resourceSpans = Writer()
        resourceSpans.message(1, resource)
        resourceSpans.message(2, scopeSpans)
        var request = Writer()
        request.message(1, resourceSpans)
        return Data(request.bytes)
    }

    static func encode(_ span: FinishedSpan) -> Writer {
        var w = Writer()
        w.bytesField(1, span.trace.traceID)
        w.bytesField(2, span.trace.spanID)
        if let state = span.trace.traceState { w.string(3, state) }
        if let parent = span.parentSpanID { w.bytesField(4, parent) }
        w.string(5, span.name)
        let kind: UInt64 =
            switch span.kind {
            case .server: 2
            case .client: 3
            case .producer: 4
            case .consumer: 5
            default: 1
            }
        w.varintField(6, kind)
        w.fixed64(7, span.start)
        w.fixed64(8, span.end)
        for (key, value) in span.attributes { w.message(9, keyValue(key, value)) }
        for event in span.events {
            var e = Writer()
            e.fixed64(1, event.at)
            e.string(2, event.name)
            for (key, value) in event.attributes { e.message(3, keyValue(key, value)) }
            w.message(11, e)
        }
        if let status = span.status {
            var s = Writer()
            if let message = status.message { s.string(2, message) }
            s.varintField(3, status.code == .error ? 2 : 1)
            w.message(15, s)
        }
        w.fixed32(16, span.trace.sampled ? 1 : 0)
        return w
    }

    static func keyValue(_ key: String, _ value: SpanAttribute) -> Writer {
        var kv = Writer()
        kv.string(1, key)
        kv.message(2, anyValue(value))
        return kv
    }

    static func anyValue(_ value: SpanAttribute) -> Writer {
        var v = Writer()
        switch value {
        case .string(let text): v.string(1, text)
        case .bool(let flag): v.varintField(2, flag ? 1 : 0)
        case .int32(let n): v.varintField(3, UInt64(bitPattern: Int64(n)))
        case .int64(let n): v.varintField(3, UInt64(bitPattern: n))
        case .double(let d): v.fixed64(4, d.bitPattern)
        case .stringArray(let list):
            var array = Writer()
            for item in list {
                var element = Writer()
                element.string(1, item)
                array.message(1, element)
            }
            v.message(5, array)
        case .int64Array(let list):
            var array = Writer()
            for item in list {
                var element = Writer()
                element.varintField(3, UInt64(bitPattern: item))
                array.message(1, element)
            }
            v.message(5, array)
        default: v.string(1, "\(value)")
        }
        return v
    }

    /// A protobuf message being written: fields appended in order.
    struct Writer {
        var bytes: [UInt8] = []

        mutating func varint(_ value: UInt64) {
            var value = value
            while value >= 0x80 {
                bytes.append(UInt8(value & 0x7F) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }

        mutating func tag(_ field: Int, _ wireType: UInt64) { varint(UInt64(field) << 3 | wireType) }

        mutating func varintField(_ field: Int, _ value: UInt64) {
            tag(field, 0)
            varint(value)
        }

        mutating func fixed64(_ field: Int, _ value: UInt64) {
            tag(field, 1)
            for shift in stride(from: 0, to: 64, by: 8) {
                bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            }
        }

        mutating func fixed32(_ field: Int, _ value: UInt32) {
            tag(field, 5)
            for shift in stride(from: 0, to: 32, by: 8) {
                bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift)))
            }
        }

        mutating func bytesField(_ field: Int, _ value: [UInt8]) {
            tag(field, 2)
            varint(UInt64(value.count))
            bytes += value
        }

        mutating func string(_ field: Int, _ value: String) { bytesField(field, Array(value.utf8)) }

        mutating func message(_ field: Int, _ value: Writer) { bytesField(field, value.bytes) }
    }
}
