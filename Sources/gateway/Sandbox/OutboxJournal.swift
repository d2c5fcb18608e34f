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
        guard var line = Self.line(message) else { return }
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
        var data = Data()
        for message in messages.suffix(capacity) {
            guard let line = Self.line(message) else { continue }
            data.append(line)
            data.append(UInt8(ascii: "\n"))
        }
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: file, options: .atomic)
        state.appendedSinceCompaction = 0
    }

    /// One message as JSON that `JSONDecoder` reads back as it (its `Codable` keys, `nil` fields left out,
    /// `sent_at` in seconds since the reference date, as `JSONEncoder()` writes it), written directly rather
    /// than through a `JSONEncoder` per send; `JSONEncoder` when the date is not finite.
    static func line(_ message: SandboxOutbox.Message) -> Data? {
        var out = "{\"provider\":"
        JSONTextWriter.writeString(message.provider, into: &out)
        out += ",\"kind\":"
        JSONTextWriter.writeString(message.kind.rawValue, into: &out)
        out += ",\"channel\":"
        JSONTextWriter.writeString(message.channel, into: &out)
        out += ",\"to\":"
        JSONTextWriter.writeString(message.to, into: &out)
        if let code = message.code {
            out += ",\"code\":"
            JSONTextWriter.writeString(code, into: &out)
        }
        out += ",\"text\":"
        JSONTextWriter.writeString(message.text, into: &out)
        if let language = message.language {
            out += ",\"language\":"
            JSONTextWriter.writeString(language, into: &out)
        }
        out += ",\"sent_at\":"
        guard JSONTextWriter.write(number: message.sentAt.timeIntervalSinceReferenceDate, into: &out) else {
            return try? JSONEncoder().encode(message)
        }
        return Data((out + "}").utf8)
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
