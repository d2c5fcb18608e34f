import Foundation
import GatewayCore
import GatewayTestSupport
import Logging
import Testing

@testable import gateway

/// The outbox journal writes its lines without `JSONEncoder`: `JSONDecoder` must read each back as it was.
@Suite("Sandbox outbox journal")
struct OutboxJournalTests {
    @Test(
        "a journal line reads back as the same message",
        arguments: [0, 785_123_456.789_012, 8e8 + 1.0 / 3, -2.25, 1e16])
    func line(_ seconds: Double) throws {
        let at = Date(timeIntervalSinceReferenceDate: seconds)
        let messages = [
            SandboxOutbox.Message(
                provider: "twilio", channel: "sms", to: "+447400000001", code: "012345",
                text: "Your code is 012345", language: "en", sentAt: at),
            SandboxOutbox.Message(
                provider: "x/y", kind: .push, channel: "push", to: "a/b@example.com", code: nil,
                text: "qu\"ote\\back\ttab\n\u{1}é日本🙂", sentAt: at),
            SandboxOutbox.Message(
                provider: "sinch", kind: .flashCall, channel: "flashcall", to: "", code: "+4470", text: "",
                language: nil, sentAt: at),
        ]
        for message in messages {
            let line = try #require(OutboxJournal.line(message))
            #expect(try JSONDecoder().decode(SandboxOutbox.Message.self, from: line) == message)
            #expect(!line.contains(UInt8(ascii: "\n")))
        }
    }

    /// A journal of capacity 10 over `file`, as the tests reopen it.
    private static func journal(_ file: URL) -> OutboxJournal {
        OutboxJournal(file: file, capacity: 10, logger: .quiet)
    }

    private static func temporaryFile() -> URL {
        FileManager.default.temporaryDirectory
            .appendingPathComponent("outbox-journal-\(UUID().uuidString)", isDirectory: true)
            .appendingPathComponent("outbox.jsonl")
    }

    private static func messages(_ range: Range<Int>) -> [SandboxOutbox.Message] {
        range.map {
            SandboxOutbox.Message(
                provider: "twilio", channel: "sms", to: "+4474000\(String(format: "%05d", $0))", code: "000000",
                text: "code \($0)", sentAt: Date(timeIntervalSinceReferenceDate: 785_000_000.5 + Double($0)))
        }
    }

    private static func lines(_ url: URL) -> Int {
        ((try? Data(contentsOf: url)) ?? Data()).reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
    }

    @Test("appended lines survive a new journal over the same file")
    func reload() throws {
        let file = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let journal = Self.journal(file)
        let messages = Self.messages(0..<3)
        for message in messages { journal.append(message) }
        #expect(Self.journal(file).load() == messages)
    }

    @Test(
        "a full file is renamed, not rewritten: the two files keep the newest messages and at most twice the capacity")
    func rotation() throws {
        let file = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let journal = Self.journal(file)
        let messages = Self.messages(0..<37)
        for (index, message) in messages.enumerated() {
            journal.append(message)
            #expect(Self.lines(file) + Self.lines(journal.previous) <= 20)
            // What a restart would read: the newest ten so far.
            if index % 6 == 5 {
                #expect(journal.load() == Array(messages[...index].suffix(10)))
            }
        }
        // 37 lines: three full files went by; the newest seven are in the current file, the ten before in the previous.
        #expect(Self.lines(file) == 7)
        #expect(Self.lines(journal.previous) == 10)
        #expect(Self.journal(file).load() == Array(messages.suffix(10)))
    }

    @Test("a journal opened over a full file starts a new one; replacing empties both")
    func reopenFullAndReplace() throws {
        let file = Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let messages = Self.messages(0..<12)
        let first = Self.journal(file)
        for message in messages.prefix(10) { first.append(message) }
        #expect(Self.lines(file) == 10)
        let second = Self.journal(file)
        for message in messages.suffix(2) { second.append(message) }
        #expect(Self.lines(file) == 2)
        #expect(Self.lines(second.previous) == 10)
        #expect(second.load() == Array(messages.suffix(10)))
        second.replace(with: [])
        #expect(second.load().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: second.previous.path))
        second.append(messages[0])
        #expect(second.load() == [messages[0]])
    }
}
