import Foundation
import GatewayCore
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

    @Test("appended lines survive a new journal over the same file")
    func reload() throws {
        let file = FileManager.default.temporaryDirectory
            .appendingPathComponent("outbox-journal-\(UUID().uuidString)", isDirectory: true)
            .appendingPathComponent("outbox.jsonl")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let journal = OutboxJournal(file: file, capacity: 10, logger: Logger(label: "test"))
        let messages = (0..<3).map {
            SandboxOutbox.Message(
                provider: "twilio", channel: "sms", to: "+44740000000\($0)", code: "00000\($0)", text: "code \($0)",
                sentAt: Date(timeIntervalSinceReferenceDate: 785_000_000.5 + Double($0)))
        }
        for message in messages { journal.append(message, current: messages) }
        #expect(OutboxJournal(file: file, capacity: 10, logger: Logger(label: "test")).load() == messages)
    }
}
