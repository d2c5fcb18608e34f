import Foundation
import GatewayCore
import Logging
import Synchronization

/// Keeps the sandbox outbox across restarts, like the emulators' state: one JSON line per message appended
/// to `outbox.jsonl`, so a send costs one short write whatever the outbox holds. Once the file has as many
/// lines as the outbox keeps, it is renamed to `outbox.previous.jsonl` (replacing the one before) and a new
/// file begins: the two files hold the newest `capacity` messages and at most twice that many lines, and no
/// send ever rewrites them (BENCHMARKS.md, "Figures formerly in code comments", has what the earlier
/// rewrite-every-`capacity`-sends design cost).
final class OutboxJournal: Sendable {
    private struct State {
        var handle: FileHandle?
        /// Lines in `file`; `nil` until the file is first opened, which counts them.
        var lines: Int?
    }

    let file: URL
    /// Where `file` goes when it is full.
    let previous: URL
    let capacity: Int
    let logger: Logger
    private let state = Mutex(State())

    init(file: URL, capacity: Int, logger: Logger) {
        self.file = file
        previous = file.deletingPathExtension().appendingPathExtension("previous.jsonl")
        self.capacity = max(capacity, 1)
        self.logger = logger
    }

    /// The messages kept by an earlier run, oldest first (at most ``capacity``). Unreadable lines are skipped.
    func load() -> [SandboxOutbox.Message] {
        let decoder = JSONDecoder()
        let messages = [previous, file].flatMap { url -> [SandboxOutbox.Message] in
            guard let data = try? Data(contentsOf: url) else { return [] }
            return data.split(separator: UInt8(ascii: "\n")).compactMap {
                try? decoder.decode(SandboxOutbox.Message.self, from: Data($0))
            }
        }
        return Array(messages.suffix(capacity))
    }

    /// Appends one message.
    func append(_ message: SandboxOutbox.Message) {
        guard var line = Self.line(message) else { return }
        line.append(UInt8(ascii: "\n"))
        state.withLock { state in
            do {
                if state.lines.map({ $0 >= capacity }) ?? false {
                    try rotate(state: &state)
                }
                if state.handle == nil {
                    let (handle, lines) = try Self.open(file)
                    state.handle = handle
                    state.lines = lines
                    if lines >= capacity {
                        // A file left full by an earlier run (or by another capacity).
                        try rotate(state: &state)
                        (state.handle, state.lines) = try Self.open(file)
                    }
                }
                try state.handle?.write(contentsOf: line)
                state.lines = (state.lines ?? 0) + 1
            } catch {
                logger.warning("sandbox outbox not saved", metadata: ["file": "\(file.lastPathComponent)"])
                try? state.handle?.close()
                state.handle = nil
                state.lines = nil
            }
        }
    }

    /// Replaces both files with `messages` (at startup, after a restore, and after `DELETE /sandbox/outbox`).
    func replace(with messages: [SandboxOutbox.Message]) {
        state.withLock { state in
            do {
                try state.handle?.close()
                state.handle = nil
                state.lines = nil
                var data = Data()
                for message in messages.suffix(capacity) {
                    guard let line = Self.line(message) else { continue }
                    data.append(line)
                    data.append(UInt8(ascii: "\n"))
                }
                try FileManager.default.createDirectory(
                    at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                try data.write(to: file, options: .atomic)
                if FileManager.default.fileExists(atPath: previous.path) {
                    try FileManager.default.removeItem(at: previous)
                }
            } catch {
                logger.warning("sandbox outbox not saved", metadata: ["file": "\(file.lastPathComponent)"])
            }
        }
    }

    /// `file` becomes `previous` (one `rename`), and the next line starts a new `file`.
    private func rotate(state: inout State) throws {
        try state.handle?.close()
        state.handle = nil
        state.lines = 0
        if rename(file.path, previous.path) != 0 && errno != ENOENT {
            throw CocoaError(.fileWriteUnknown)
        }
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

    /// Opens `file` for appending (creating it and its directory if needed) and counts its lines.
    private static func open(_ file: URL) throws -> (FileHandle, Int) {
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        if !FileManager.default.fileExists(atPath: file.path) {
            _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        }
        let lines =
            (try? Data(contentsOf: file)).map { data in data.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) } }
            ?? 0
        let handle = try FileHandle(forWritingTo: file)
        try handle.seekToEnd()
        return (handle, lines)
    }
}
