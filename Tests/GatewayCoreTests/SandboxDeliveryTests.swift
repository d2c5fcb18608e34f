import Foundation
import GatewayCore
import Synchronization
import Testing

@Suite("Sandbox delivery rate")
struct SandboxDeliveryTests {
    static func send(_ outbox: SandboxOutbox, provider: String = "twilio", users: Int) -> [Bool] {
        (0..<users).map { n in
            outbox.record(
                SandboxOutbox.Message(
                    provider: provider, channel: "sms", to: "+4474\(String(format: "%08d", n))", code: "123456",
                    text: "", sentAt: Date(timeIntervalSince1970: 1_800_000_000)))
        }
    }

    @Test("rate 1 delivers everything, rate 0 nothing, and dropped messages are not listed")
    func extremes() {
        let outbox = SandboxOutbox(capacity: 100_000)
        #expect(Self.send(outbox, users: 100).allSatisfy { $0 })
        outbox.setDelivery(SandboxOutbox.Delivery(rate: 0), for: "twilio")
        #expect(Self.send(outbox, users: 100).allSatisfy { !$0 })
        #expect(outbox.all.count == 100)
    }

    @Test("a rate of 0.3 delivers about 30% of 10,000 messages, and only that provider's")
    func share() {
        let outbox = SandboxOutbox(capacity: 100_000)
        outbox.setDelivery(SandboxOutbox.Delivery(rate: 0.3, seed: 7), for: "twilio")
        let delivered = Self.send(outbox, users: 10_000).filter { $0 }.count
        #expect((2_800...3_200).contains(delivered), "\(delivered)")
        #expect(outbox.all.count == delivered)
        #expect(Self.send(outbox, provider: "firebase", users: 100).allSatisfy { $0 })
    }

    @Test("the same seed drops the same messages; another seed drops others")
    func reproducible() {
        func run(seed: Int) -> [Bool] {
            let outbox = SandboxOutbox(capacity: 100_000)
            outbox.setDelivery(SandboxOutbox.Delivery(rate: 0.5, seed: seed), for: "twilio")
            return Self.send(outbox, users: 1_000)
        }
        #expect(run(seed: 1) == run(seed: 1))
        // Setting the seed again on the same outbox replays the same decisions.
        let outbox = SandboxOutbox(capacity: 100_000)
        outbox.setDelivery(SandboxOutbox.Delivery(rate: 0.5, seed: 3), for: "twilio")
        let first = Self.send(outbox, users: 500)
        outbox.setDelivery(SandboxOutbox.Delivery(rate: 0.5, seed: 3), for: "twilio")
        #expect(Self.send(outbox, users: 500) == first)
        #expect(run(seed: 1) != run(seed: 2))
    }

    @Test("a dropped message is reported to the drop hook, not the send hook")
    func hooks() {
        let sent = Mutex(0)
        let dropped = Mutex(0)
        let outbox = SandboxOutbox(
            onSend: { _ in sent.withLock { $0 += 1 } }, onDrop: { _ in dropped.withLock { $0 += 1 } })
        outbox.setDelivery(SandboxOutbox.Delivery(rate: 0), for: "twilio")
        _ = Self.send(outbox, users: 3)
        #expect(sent.withLock { $0 } == 0)
        #expect(dropped.withLock { $0 } == 3)
    }

    @Test("the stable hash does not change between versions or processes")
    func stableHash() {
        // Pinned values: experiment arms and simulations depend on them never changing.
        #expect(StableHash.hash([]) == StableHash.hash([]))
        #expect(StableHash.hash(["a", "bc"]) != StableHash.hash(["ab", "c"]))
        #expect(StableHash.hash(["sandbox-ab", "2026-11", "+447400123456"]) == Self.pinned)
        let unit = StableHash.unit(["x"])
        #expect(unit > 0 && unit < 1)
    }

    // Computed independently with a Python transcription of FNV-1a + SplitMix64 finalizer.
    static let pinned: UInt64 = 6_318_028_549_325_770_143
}
