import Foundation
import GatewayCore
import Instrumentation

/// A span's place in a trace as W3C Trace Context carries it (`traceparent: 00-<trace id>-<span id>-<flags>`): the
/// trace's 16 bytes, the span's 8, whether the trace is sampled, and the caller's `tracestate`, passed on as it came.
struct TraceContext: Sendable, Equatable {
    var traceID: [UInt8]
    var spanID: [UInt8]
    var sampled: Bool
    var traceState: String?

    /// The `traceparent` header value of this span.
    var traceparent: String {
        "00-" + Hex.lowercase(traceID) + "-" + Hex.lowercase(spanID) + (sampled ? "-01" : "-00")
    }

    /// The trace id as logs and OTLP JSON write it: 32 lowercase hex digits.
    var traceIDHex: String { Hex.lowercase(traceID) }

    /// Parses a `traceparent` header: version `00` (or a later one, read as `00` as the spec asks), a trace id and a
    /// span id that are not all zeros, and the flags. Anything else is no context: a new trace starts.
    init?(traceparent: String, traceState: String? = nil) {
        let parts = traceparent.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 4, parts[0].count == 2, parts[0] != "ff", parts[1].count == 32, parts[2].count == 16,
            parts[3].count == 2, parts[0] != "00" || parts.count == 4,
            let trace = Self.bytes(parts[1]), let span = Self.bytes(parts[2]), let flags = Self.bytes(parts[3]),
            let version = Self.bytes(parts[0]), version.count == 1,
            trace.contains(where: { $0 != 0 }), span.contains(where: { $0 != 0 })
        else { return nil }
        self.init(
            traceID: trace, spanID: span, sampled: flags[0] & 1 == 1,
            traceState: traceState.flatMap { $0.count <= 512 ? $0 : nil })
    }

    init(traceID: [UInt8], spanID: [UInt8], sampled: Bool, traceState: String? = nil) {
        self.traceID = traceID
        self.spanID = spanID
        self.sampled = sampled
        self.traceState = traceState
    }

    /// Lowercase hex digits as bytes; nil for anything else.
    static func bytes(_ text: Substring) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count / 2)
        var high: UInt8?
        for character in text.utf8 {
            let value: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = character - UInt8(ascii: "a") + 10
            default: return nil
            }
            if let first = high {
                bytes.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return bytes
    }
}

/// Where the current span's ``TraceContext`` travels in a `ServiceContext` (task-local, so child tasks see it).
enum TraceContextKey: ServiceContextKey {
    typealias Value = TraceContext
    static let nameOverride: String? = "trace-context"
}

extension ServiceContext {
    /// The trace context of the span this code runs in, if any.
    var traceContext: TraceContext? {
        get { self[TraceContextKey.self] }
        set { self[TraceContextKey.self] = newValue }
    }
}
