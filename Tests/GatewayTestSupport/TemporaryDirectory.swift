import Foundation
import Synchronization

/// A directory of its own under the system's temporary directory, removed when the value is released: for a
/// test suite whose tests each open files (a SQLite store, the sandbox's state) that must not outlive it.
public final class TemporaryDirectory: Sendable {
    /// The directory; this type does not create it, only removes it on release.
    public let url: URL

    /// `prefix` names the directory, so leftovers of a crashed run say which suite made them.
    public init(_ prefix: String) {
        url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "\(prefix)-\(UUID().uuidString)", isDirectory: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// The path of `name` inside the directory.
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}

/// Directories under the system's temporary directory that are removed when the test process exits, for a
/// helper that cannot tell when its callers are done with one (a harness that tests copy and restart).
/// Only a crash leaves them behind.
public enum ScratchDirectories {
    private static let made = Mutex<[URL]>([])
    private static let removalAtExit: Void = {
        atexit { ScratchDirectories.removeAll() }
    }()

    /// A new path named `prefix-<UUID>`, not created yet; removed at exit if anything made it.
    public static func make(_ prefix: String) -> URL {
        _ = removalAtExit
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "\(prefix)-\(UUID().uuidString)", isDirectory: true)
        made.withLock { $0.append(url) }
        return url
    }

    static func removeAll() {
        for url in made.withLock({ $0 }) {
            try? FileManager.default.removeItem(at: url)
        }
    }
}
