import Foundation

/// Spans around the engine's own steps (docs/operations.md, "Traces"), for a gateway whose traces are on: the
/// routing decision, each vendor call, a check, a delivery receipt. The engine names no tracing library; the gateway
/// implements this over its tracer, and without one (``VerificationService/tracer`` nil) nothing of it runs.
///
/// Attributes are the `verification.*` and `routing.*` names of docs/operations.md, never a phone number or a code.
public protocol EngineTracer: Sendable {
    /// Runs `body` inside an internal span named `name`, a child of the current one; `body` adds attributes and the
    /// outcome through the span it is given.
    func span<T, E: Error>(_ name: String, _ body: (any EngineSpan) async throws(E) -> T) async throws(E) -> T
}

/// The span of one engine step.
public protocol EngineSpan: Sendable {
    /// Sets an attribute.
    func set(_ key: String, _ value: String)
    /// Marks the step failed with the gateway's error code (`error.type`).
    func fail(_ code: GatewayError.Code)
}

extension VerificationService {
    /// Runs `body` in a span named `name` when traces are on, else runs it as it is (the span nil).
    @inline(__always)
    func traced<T, E: Error>(_ name: String, _ body: ((any EngineSpan)?) async throws(E) -> T) async throws(E) -> T {
        guard let tracer else { return try await body(nil) }
        return try await tracer.span(name) { span throws(E) in try await body(span) }
    }
}

extension VerificationService {
    /// The routing span's attributes: the channel, country, route, experiment arm, the candidates in order and the
    /// providers passed over with why.
    static func describe(_ decision: RoutingTable.Decision, _ request: StartVerification, on span: any EngineSpan) {
        span.set("verification.channel", request.channel.rawValue)
        if let country = decision.country { span.set("verification.country", country) }
        span.set("routing.route", decision.route)
        if let experiment = decision.experiment { span.set("routing.experiment", experiment) }
        if let arm = decision.arm { span.set("routing.arm", arm) }
        if let adaptive = decision.adaptive { span.set("routing.adaptive.context", adaptive.context) }
        span.set("routing.candidates", decision.candidates.map(\.id).joined(separator: ","))
        if !decision.skipped.isEmpty {
            span.set("routing.skipped", decision.skipped.map { "\($0.providerID):\($0.reason)" }.joined(separator: ","))
        }
    }
}
