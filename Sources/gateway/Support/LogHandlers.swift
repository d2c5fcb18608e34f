import Foundation
import Instrumentation
import Logging

/// The request a task serves, for log lines written outside the request's own logger (the engine's,
/// the store's, a plugin's): the logging bootstrap's metadata provider adds it to every line.
enum RequestScope {
    @TaskLocal static var requestID: String?

    static let metadataProvider = Logger.MetadataProvider {
        var metadata: Logger.Metadata = [:]
        if let id = requestID { metadata["request.id"] = .string(id) }
        // The trace of the span the line is written in, when traces are on (docs/operations.md, "Traces").
        if let trace = ServiceContext.current?.traceContext { metadata["trace_id"] = .string(trace.traceIDHex) }
        return metadata
    }
}

/// How one log line is written: ``TextLines`` or ``JSONLines``.
protocol LogLineFormat: Sendable {
    /// The whole line, newline included, for an event whose metadata is already merged.
    static func line(label: String, event: LogEvent, metadata: Logger.Metadata) -> Data
}

/// The gateway's log handler, for both `--log-format`s: metadata is kept as set and formatted only when a
/// line is written (swift-log's `StreamLogHandler` formats it again on every set, and every request sets
/// two or three values whatever the level; the cost is in BENCHMARKS.md). The line carries
/// the logger's metadata, the metadata provider's (the request id), the call's own, and an error's
/// `error.message` and `error.type`, later ones winning.
struct LineLogHandler<Format: LogLineFormat>: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    let write: @Sendable (Data) -> Void

    init(
        label: String, metadataProvider: Logger.MetadataProvider?,
        write: @escaping @Sendable (Data) -> Void = writeToStandardError
    ) {
        self.label = label
        self.metadataProvider = metadataProvider
        self.write = write
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get(), !provided.isEmpty { merged.merge(provided) { _, new in new } }
        if let explicit = event.metadata, !explicit.isEmpty { merged.merge(explicit) { _, new in new } }
        if let error = event.error {
            merged["error.message"] = "\(error)"
            merged["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        write(Format.line(label: label, event: event, metadata: merged))
    }
}

/// One `write` per line, so lines from several threads never interleave.
@Sendable func writeToStandardError(_ data: Data) {
    FileHandle.standardError.write(data)
}

typealias JSONLogHandler = LineLogHandler<JSONLines>

/// `--log-format json`: one JSON object per line on standard error, with the metadata as fields:
/// `{"ts":"2026-11-23T12:00:00.123Z","level":"info","logger":"gateway","message":"request",
/// "request.id":"req_…","http.status":"200",…}`. Numbers stay masked as in the text format: the handler
/// writes what the callers log, and callers log only masked numbers.
enum JSONLines: LogLineFormat {
    static func line(label: String, event: LogEvent, metadata: Logger.Metadata) -> Data {
        var fields: [String: Any] = [:]
        for (key, value) in metadata { fields[key] = json(value) }
        // The fixed fields win over metadata of the same name.
        fields["ts"] = timestamp(Date())
        fields["level"] = event.level.rawValue
        fields["logger"] = label
        fields["message"] = event.message.description
        guard
            var line = try? JSONSerialization.data(
                withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return Data() }
        line.append(0x0A)
        return line
    }

    static func json(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let text): return text
        case .stringConvertible(let convertible): return convertible.description
        case .array(let values): return values.map(json)
        case .dictionary(let entries): return entries.mapValues(json)
        }
    }

    static func timestamp(_ date: Date) -> String {
        date.formatted(
            .iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }
}

typealias TextLogHandler = LineLogHandler<TextLines>

/// `--log-format text`, the default: swift-log's `StreamLogHandler` line, `2026-11-24T05:00:00+0000 notice
/// gateway: request.id=req_… to=+44…89 [GatewayCore] message`, the metadata sorted by key.
enum TextLines: LogLineFormat {
    static func line(label: String, event: LogEvent, metadata: Logger.Metadata) -> Data {
        var line = timestamp() + " \(event.level)"
        if !label.isEmpty { line += " " + label }
        line += ":"
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) { line += " \(key)=\(value)" }
        line += " [\(event.source)] \(event.message)\n"
        return Data(line.utf8)
    }

    /// Local time to the second with its offset, as `StreamLogHandler` writes it.
    static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        guard localtime_r(&now, &parts) != nil else { return "<unknown>" }
        var buffer = [CChar](repeating: 0, count: 64)
        let length = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
