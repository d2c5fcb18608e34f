import Foundation
import Logging

/// The request a task serves, for log lines written outside the request's own logger (the engine's,
/// the store's, a plugin's): the logging bootstrap's metadata provider adds it to every line.
enum RequestScope {
    @TaskLocal static var requestID: String?

    static let metadataProvider = Logger.MetadataProvider {
        guard let id = requestID else { return [:] }
        return ["request.id": .string(id)]
    }
}

/// `--log-format json`: one JSON object per line on standard error, with the metadata as fields:
/// `{"ts":"2026-11-23T12:00:00.123Z","level":"info","logger":"gateway","message":"request",
/// "request.id":"req_…","http.status":"200",…}`. Numbers stay masked as in the text format: the handler
/// writes what the callers log, and callers log only masked numbers.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    let write: @Sendable (Data) -> Void

    init(
        label: String, metadataProvider: Logger.MetadataProvider?,
        write: @escaping @Sendable (Data) -> Void = JSONLogHandler.standardError
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
        var fields: [String: Any] = [:]
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        for (key, value) in merged { fields[key] = Self.json(value) }
        // The fixed fields win over metadata of the same name.
        fields["ts"] = Self.timestamp(Date())
        fields["level"] = event.level.rawValue
        fields["logger"] = label
        fields["message"] = event.message.description
        guard
            var line = try? JSONSerialization.data(
                withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return }
        line.append(0x0A)
        write(line)
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
        date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }

    /// One `write` per line, so lines from several threads never interleave.
    @Sendable static func standardError(_ data: Data) {
        FileHandle.standardError.write(data)
    }
}
