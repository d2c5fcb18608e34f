import Logging
import Synchronization

/// A log handler that keeps every entry (level, then message and metadata as text), for tests that assert on
/// what was logged, with no global bootstrap.
public final class CapturedLogs: Sendable {
    private let entries = Mutex<[(level: Logger.Level, text: String)]>([])

    /// An empty log.
    public init() {}

    /// Every entry's message and metadata (`key=value`, sorted), oldest first.
    public var messages: [String] { entries.withLock { $0.map(\.text) } }

    /// The entries at `level` or above.
    public func lines(atLeast level: Logger.Level) -> [String] {
        entries.withLock { $0.filter { $0.level >= level }.map(\.text) }
    }

    /// A logger whose every entry this keeps.
    public func logger(label: String = "test") -> Logger {
        Logger(label: label) { _ in Handler(logs: self) }
    }

    private struct Handler: LogHandler {
        let logs: CapturedLogs
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { _, new in new }
            let text = all.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " ")
            logs.entries.withLock { $0.append((event.level, "\(event.message) \(text)")) }
        }
    }
}
