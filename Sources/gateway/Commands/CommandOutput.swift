import Synchronization

/// Where the commands write what they tell the operator: standard output, unless the task collects it
/// (``collecting(_:)``, as the tests do, so that a passing test run prints nothing of its own and a test can
/// read what a command said).
enum CommandOutput {
    @TaskLocal private static var collector: Collector?

    /// Writes one line (or several, joined by newlines) as `print` does.
    static func write(_ text: String) {
        if let collector { collector.lines.withLock { $0.append(text) } } else { print(text) }
    }

    /// Runs `body` with every ``write(_:)`` in it collected instead of printed; returns what was written, each
    /// write's text as one element, whether `body` returned or threw (the error is rethrown with the lines).
    static func collecting(_ body: () async throws -> Void) async -> (lines: [String], error: (any Error)?) {
        let collector = Collector()
        do {
            try await $collector.withValue(collector) { try await body() }
            return (collector.lines.withLock { $0 }, nil)
        } catch {
            return (collector.lines.withLock { $0 }, error)
        }
    }

    private final class Collector: Sendable {
        let lines = Mutex<[String]>([])
    }
}
