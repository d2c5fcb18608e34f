import Foundation
import GatewayCore
import Synchronization
import Testing

@Suite("SandboxOutbox")
struct SandboxOutboxTests {
    static func message(_ n: Int, to: String = "+16505553434") -> SandboxOutbox.Message {
        SandboxOutbox.Message(
            provider: "twilio", channel: "sms", to: to, code: String(format: "%06d", n), text: "Your code is \(n)",
            sentAt: Date(timeIntervalSince1970: 1_800_000_000 + Double(n)))
    }

    @Test("messages are kept oldest first")
    func keepsOrder() {
        let outbox = SandboxOutbox()
        for n in 1...5 { outbox.record(Self.message(n)) }
        #expect(outbox.all.map(\.code) == ["000001", "000002", "000003", "000004", "000005"])
    }

    @Test("past capacity the oldest messages go first")
    func capacity() {
        let outbox = SandboxOutbox(capacity: 3)
        for n in 1...7 { outbox.record(Self.message(n)) }
        #expect(outbox.capacity == 3)
        #expect(outbox.all.map(\.code) == ["000005", "000006", "000007"])
    }

    @Test("last(to:) is the newest message to that destination")
    func lastTo() {
        let outbox = SandboxOutbox()
        outbox.record(Self.message(1, to: "+111111111"))
        outbox.record(Self.message(2, to: "+222222222"))
        outbox.record(Self.message(3, to: "+111111111"))
        outbox.record(Self.message(4, to: "+222222222"))
        #expect(outbox.last(to: "+111111111")?.code == "000003")
        #expect(outbox.last(to: "+333333333") == nil)
    }

    @Test("removeAll empties the outbox")
    func removeAll() {
        let outbox = SandboxOutbox()
        outbox.record(Self.message(1))
        outbox.removeAll()
        #expect(outbox.all.isEmpty)
        #expect(outbox.last(to: "+16505553434") == nil)
    }

    @Test("onSend sees every message, even those later pushed out by capacity")
    func onSend() {
        let seen = Mutex<[String]>([])
        let outbox = SandboxOutbox(capacity: 1) { message in seen.withLock { $0.append(message.code ?? "-") } }
        for n in 1...3 { outbox.record(Self.message(n)) }
        #expect(seen.withLock { $0 } == ["000001", "000002", "000003"])
        #expect(outbox.all.map(\.code) == ["000003" as String?])
    }

    @Test("a message encodes with a snake_case sent_at")
    func encoding() throws {
        let data = try JSONEncoder().encode(Self.message(1))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(object.keys) == ["provider", "kind", "channel", "to", "code", "text", "sent_at"])
        #expect(try JSONDecoder().decode(SandboxOutbox.Message.self, from: data) == Self.message(1))
    }

    @Test("the per-recipient index follows evictions and restores")
    func recipientIndex() {
        let outbox = SandboxOutbox(capacity: 3)
        for n in 1...4 {
            outbox.record(
                SandboxOutbox.Message(
                    provider: "p", channel: "sms", to: n % 2 == 0 ? "+1even" : "+1odd", code: String(n), text: "",
                    sentAt: Date(timeIntervalSince1970: Double(n))))
        }
        #expect(outbox.messages(to: "+1odd").map(\.code) == ["3"], "message 1 was evicted")
        #expect(outbox.messages(to: "+1even").map(\.code) == ["2", "4"])
        #expect(outbox.last(to: "+1even")?.code == "4")
        let restored = SandboxOutbox(capacity: 2)
        restored.restore(outbox.all)
        #expect(restored.all.map(\.code) == ["3", "4"])
        #expect(restored.messages(to: "+1even").map(\.code) == ["4"])
        #expect(restored.messages(to: "nobody").isEmpty)
    }

    @Test("over many sends, with evictions and a removeAll, the outbox and its index match a plain list of the newest")
    func againstModel() {
        let capacity = 7
        let outbox = SandboxOutbox(capacity: capacity)
        var model: [SandboxOutbox.Message] = []
        var generator = SystemRandomNumberGenerator()
        for n in 0..<2_000 {
            let message = Self.message(n, to: "+1650555340\(Int.random(in: 0...4, using: &generator))")
            outbox.record(message)
            model = Array((model + [message]).suffix(capacity))
            #expect(outbox.all == model)
            for to in Set(model.map(\.to)) {
                #expect(outbox.messages(to: to) == model.filter { $0.to == to })
                #expect(outbox.last(to: to) == model.last { $0.to == to })
            }
            if n == 999 {
                outbox.removeAll()
                model = []
            }
        }
    }
}
