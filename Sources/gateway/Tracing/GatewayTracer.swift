import Foundation
import GatewayCore
import Instrumentation
import Synchronization
import Tracing

/// The gateway's tracer (docs/operations.md, "Traces"): W3C Trace Context in and out, a parent-based sampler with a
/// ratio for new traces, and every finished sampled span handed to an exporter. It is an instance the gateway
/// passes to what makes spans (the server middleware, the outbound transport), not a process-wide bootstrap, so
/// that several gateways in one process (the tests) each keep their own.
final class GatewayTracer: Tracer, Sendable {
    typealias Span = GatewaySpan

    /// The share of new traces kept, 0 to 1; a caller's sampled flag is followed as it is.
    let ratio: Double
    let exporter: any SpanExporter

    init(ratio: Double, exporter: any SpanExporter) {
        self.ratio = ratio
        self.exporter = exporter
    }

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> GatewaySpan {
        var context = context()
        let parent = context.traceContext
        var generator = SystemRandomNumberGenerator()
        let traceID = parent?.traceID ?? (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let sampled = parent?.sampled ?? Self.keeps(traceID, ratio: ratio)
        let own = TraceContext(
            traceID: traceID, spanID: (0..<8).map { _ in UInt8.random(in: 0...255, using: &generator) },
            sampled: sampled, traceState: parent?.traceState)
        context.traceContext = own
        return GatewaySpan(
            operationName: operationName, kind: kind, context: context, trace: own, parentSpanID: parent?.spanID,
            start: instant().nanosecondsSinceEpoch, exporter: sampled ? exporter : nil)
    }

    /// The trace-id-ratio sampler of OpenTelemetry: the trace id's last 8 bytes, read as a number, under
    /// `ratio × 2^64`; so every service with the same ratio keeps the same traces.
    static func keeps(_ traceID: [UInt8], ratio: Double) -> Bool {
        guard ratio < 1 else { return true }
        guard ratio > 0 else { return false }
        let value = traceID.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Double(value) < ratio * 18_446_744_073_709_551_616.0
    }

    func forceFlush() { exporter.flushSoon() }

    // MARK: W3C Trace Context

    func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract
    ) where Extract.Carrier == Carrier {
        guard let header = extractor.extract(key: "traceparent", from: carrier) else { return }
        context.traceContext = TraceContext(
            traceparent: header, traceState: extractor.extract(key: "tracestate", from: carrier))
    }

    func inject<Carrier, Inject: Injector>(
        _ context: ServiceContext, into carrier: inout Carrier, using injector: Inject
    )
    where Inject.Carrier == Carrier {
        guard let trace = context.traceContext else { return }
        injector.inject(trace.traceparent, forKey: "traceparent", into: &carrier)
        if let state = trace.traceState { injector.inject(state, forKey: "tracestate", into: &carrier) }
    }
}

/// A finished span as the exporter sends it.
struct FinishedSpan: Sendable {
    var name: String
    var kind: SpanKind
    var trace: TraceContext
    var parentSpanID: [UInt8]?
    var start: UInt64
    var end: UInt64
    var attributes: [(String, SpanAttribute)]
    var status: SpanStatus?
    var events: [(name: String, at: UInt64, attributes: [(String, SpanAttribute)])]
}

/// Receives finished spans; sends them on in the background.
protocol SpanExporter: Sendable {
    func export(_ span: FinishedSpan)
    func flushSoon()
}

/// Drops every span (never used when an exporter exists; keeps the tracer total).
struct NoSpanExporter: SpanExporter {
    func export(_ span: FinishedSpan) {}
    func flushSoon() {}
}

/// One span of the gateway's tracer. Not sampled, it still carries its context (so the trace id reaches the logs
/// and `traceparent` the vendors) and records nothing.
final class GatewaySpan: Tracing.Span, Sendable {
    let context: ServiceContext
    let trace: TraceContext
    private let kind: SpanKind
    private let parentSpanID: [UInt8]?
    private let start: UInt64
    private let exporter: (any SpanExporter)?
    private struct State {
        var name: String
        var attributes = SpanAttributes()
        var status: SpanStatus?
        var events: [SpanEvent] = []
        var ended = false
    }
    private let state: Mutex<State>

    init(
        operationName: String, kind: SpanKind, context: ServiceContext, trace: TraceContext, parentSpanID: [UInt8]?,
        start: UInt64, exporter: (any SpanExporter)?
    ) {
        self.context = context
        self.trace = trace
        self.kind = kind
        self.parentSpanID = parentSpanID
        self.start = start
        self.exporter = exporter
        state = Mutex(State(name: operationName))
    }

    var isRecording: Bool { exporter != nil && !state.withLock { $0.ended } }

    var operationName: String {
        get { state.withLock { $0.name } }
        set { state.withLock { $0.name = newValue } }
    }

    var attributes: SpanAttributes {
        get { state.withLock { $0.attributes } }
        set {
            guard exporter != nil else { return }
            state.withLock { $0.attributes = newValue }
        }
    }

    func setStatus(_ status: SpanStatus) {
        guard exporter != nil else { return }
        state.withLock { $0.status = status }
    }

    func addEvent(_ event: SpanEvent) {
        guard exporter != nil else { return }
        state.withLock { $0.events.append(event) }
    }

    /// Records the error's kind only (`exception.type`), never its description, which may carry what a vendor said
    /// about a number.
    func recordError<Instant: TracerInstant>(
        _ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant
    ) {
        guard exporter != nil else { return }
        var recorded = attributes
        recorded["exception.type"] = String(describing: type(of: error))
        if let gateway = error as? GatewayError { recorded["error.type"] = gateway.code.rawValue }
        addEvent(SpanEvent(name: "exception", at: instant(), attributes: recorded))
    }

    func addLink(_ link: SpanLink) {}

    func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        guard let exporter else { return }
        let end = instant().nanosecondsSinceEpoch
        let finished: FinishedSpan? = state.withLock { state in
            guard !state.ended else { return nil }
            state.ended = true
            return FinishedSpan(
                name: state.name, kind: kind, trace: trace, parentSpanID: parentSpanID, start: start, end: end,
                attributes: Self.pairs(state.attributes).sorted { $0.0 < $1.0 }, status: state.status,
                events: state.events.map { ($0.name, $0.nanosecondsSinceEpoch, Self.pairs($0.attributes)) })
        }
        if let finished { exporter.export(finished) }
    }

    /// The attributes as key and value pairs (`SpanAttributes` is no sequence).
    static func pairs(_ attributes: SpanAttributes) -> [(String, SpanAttribute)] {
        var pairs: [(String, SpanAttribute)] = []
        func keep(_ key: String, _ value: SpanAttribute) { pairs.append((key, value)) }
        attributes.forEach(keep)
        return pairs
    }
}

/// The engine's spans (``EngineTracer``) on the gateway's tracer: internal spans, children of the current one.
struct GatewayEngineTracer: EngineTracer {
    let tracer: GatewayTracer

    func span<T, E: Error>(_ name: String, _ body: (any EngineSpan) async throws(E) -> T) async throws(E) -> T {
        let span = tracer.startSpan(name, context: ServiceContext.current ?? .topLevel, ofKind: .internal)
        defer { span.end() }
        let result: Result<T, E> = await ServiceContext.withValue(span.context) {
            do throws(E) {
                return .success(try await body(EngineSpanHandle(span: span)))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

/// An engine step's span: attributes and a failure, recorded only when the span is.
struct EngineSpanHandle: EngineSpan {
    let span: GatewaySpan

    func set(_ key: String, _ value: String) {
        guard span.isRecording else { return }
        span.attributes[key] = value
    }

    func fail(_ code: GatewayError.Code) {
        guard span.isRecording else { return }
        span.attributes["error.type"] = code.rawValue
        span.setStatus(SpanStatus(code: .error, message: code.rawValue))
    }
}
