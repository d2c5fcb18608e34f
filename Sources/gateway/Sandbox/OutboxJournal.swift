import Foundation
import GatewayCore
import Logging
import Synchronization

/// Keeps the sandbox outbox across restarts, like the emulators' state: one JSON line per message appended
/// to `outbox.jsonl` (so a send costs one short write, whatever the outbox holds), rewritten from the
/// outbox's own bounded list once as many lines again as it keeps have been appended.
final class OutboxJournal: Sendable {
    private struct State {
        var handle: FileHandle?
        var appendedSinceCompaction = 0
    }

    let file: URL
    let capacity: Int
    let logger: Logger
    private let state = Mutex(State())

    init(file: URL, capacity: Int, logger: Logger) {
        self.file = file
        self.capacity = capacity
        self.logger = logger
    }

    /// The messages kept by an earlier run, oldest first (at most ``capacity``). Unreadable lines are skipped.
    func load() -> [SandboxOutbox.Message] {
        guard let data = try? Data(contentsOf: file) else { return [] }
        let decoder = JSONDecoder()
        let messages = data.split(separator: UInt8(ascii: "\n")).compactMap {
            try? decoder.decode(SandboxOutbox.Message.self, from: Data($0))
        }
        return Array(messages.suffix(capacity))
    }

    /// Appends one message.
    func append(_ message: SandboxOutbox.Message, current: @autoclosure () -> [SandboxOutbox.Message]) {
        guard var line = try? JSONEncoder().encode(message) else { return }
        line.append(UInt8(ascii: "\n"))
        state.withLock { state in
            do {
                if state.handle == nil { state.handle = try Self.open(file) }
                try state.handle?.write(contentsOf: line)
                state.appendedSinceCompaction += 1
                if state.appendedSinceCompaction >= capacity {
                    try rewrite(current(), state: &state)
                }
            } catch {
                logger.warning("sandbox outbox not saved", metadata: ["file": "\(file.lastPathComponent)"])
                state.handle = nil
            }
        }
    }

    /// Replaces the file with `messages` (at startup, after a restore, and after `DELETE /sandbox/outbox`).
    func replace(with messages: [SandboxOutbox.Message]) {
        state.withLock { state in
            do {
                try rewrite(messages, state: &state)
            } catch {
                logger.warning("sandbox outbox not saved", metadata: ["file": "\(file.lastPathComponent)"])
            }
        }
    }

    private func rewrite(_ messages: [SandboxOutbox.Message], state: inout State) throws {
        try state.handle?.close()
        state.handle = nil
        let encoder = JSONEncoder()
        var data = Data()
        for message in messages.suffix(capacity) {
            data.append(try encoder.encode(message))
            data.append(UInt8(ascii: "\n"))
        }
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: file, options: .atomic)
        state.appendedSinceCompaction = 0
    }

    private static func open(_ file: URL) throws -> FileHandle {
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        if !FileManager.default.fileExists(atPath: file.path) {
            _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        }
        let handle = try FileHandle(forWritingTo: file)
        try handle.seekToEnd()
        return handle
    }
}
