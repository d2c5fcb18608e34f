import Foundation

/// A directory of its own under the system's temporary directory, removed when the value is released: for a
/// test suite whose tests each open files (a SQLite store, the sandbox's state) that must not outlive it.
public final class TemporaryDirectory: Sendable {
    public let url: URL

    /// `prefix` names the directory, so leftovers of a crashed run say which suite made them.
    public init(_ prefix: String) {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// The path of `name` inside the directory.
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}
