import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

/// What final receipts teach: a tally per sending provider, country, outcome and send-to-delivered time, and on
/// an adaptive route with `objective: deliveries` the result of each start, counted once.
@Suite("Delivery figures and adaptive deliveries")
struct DeliveryFiguresTests {
    static func receipt(
        _ h: ServiceHarness, _ provider: String, _ message: String, _ status: DeliveryStatus, of id: String
    ) async throws {
        _ = try await h.service.handleCallback(
            providerID: provider,
            ReceiptSender.callback(["message_id": message, "status": status.rawValue, "verification_id": id]))
    }

    static func tallies(_ store: any VerificationStore) async throws -> [DeliveryTally] {
        try await #require(store as? any DeliveryStatsStore).deliveryTallies(since: 0)
    }

    @Test("a final receipt is tallied for its sender and country with the time since its send; others are not")
    func tallied() async throws {
        let store = InMemoryVerificationStore()
        let h = try ServiceHarness([try DeliveryReceiptTests.provider(sender: ReceiptSender())], store: store)
        let record = try await h.service.start(try .sms("+447400123456"))
        h.clock.advance(by: 3.2)
        // Not final, and a message the verification does not list (another part of a long message): nothing.
        try await Self.receipt(h, "own_sms", "msg-1", .sent, of: record.id)
        try await Self.receipt(h, "own_sms", "msg-7", .delivered, of: record.id)
        #expect(try await Self.tallies(store).isEmpty)
        // Delivered after 3.2 s: the 4 s bucket. Twice (a vendor's retry): one tally.
        try await Self.receipt(h, "own_sms", "msg-1", .delivered, of: record.id)
        try await Self.receipt(h, "own_sms", "msg-1", .delivered, of: record.id)
        let minute = DeliveryTally.minute(of: h.clock.now)
        #expect(
            try await Self.tallies(store) == [
                DeliveryTally(
                    providerID: "own_sms", country: "GB", minute: minute, outcome: .delivered, latencyMS: 4_000)
            ])
        // A second verification's message reported undelivered: tallied without a time.
        let second = try await h.service.start(try .sms("+447400123457"))
        try await Self.receipt(h, "own_sms", "msg-2", .undelivered, of: second.id)
        #expect(
            try await Self.tallies(store).contains(
                DeliveryTally(providerID: "own_sms", country: "GB", minute: minute, outcome: .undelivered)))
    }

    @Test("percentiles are read from the buckets, and the rate is delivered over sent")
    func figures() {
        var figures = DeliveryLatency.Figures(sends: 20)
        for (latency, count) in [(1_000, 9), (2_000, 8), (10_000, 2)] {
            figures.add(
                DeliveryTally(
                    providerID: "a", country: "GB", minute: 0, outcome: .delivered, latencyMS: latency, count: count))
        }
        figures.add(DeliveryTally(providerID: "a", country: "GB", minute: 0, outcome: .undelivered, count: 1))
        #expect(figures.delivered == 19 && figures.undelivered == 1)
        #expect(figures.rate == 0.95)
        #expect(figures.percentile(0.5) == 2_000 && figures.percentile(0.95) == 10_000)
        #expect(DeliveryLatency.Figures().percentile(0.5) == nil)
        #expect(DeliveryLatency.Figures(sends: nil).rate == nil)
        #expect(DeliveryLatency.bucket(0) == 500 && DeliveryLatency.bucket(0.5) == 500)
        #expect(DeliveryLatency.bucket(0.501) == 1_000 && DeliveryLatency.bucket(-3) == 500)
        #expect(DeliveryLatency.bucket(86_400) == 3_600_000)
    }

    // MARK: - objective: deliveries

    struct Adaptive {
        let h: ServiceHarness
        let store: InMemoryVerificationStore
        let senders: [String: ReceiptSender]

        /// Starts verifications to new numbers until the bandit sends one through `provider`; that one, with
        /// its message's id and code.
        func start(at provider: String) async throws -> (record: VerificationRecord, message: String, code: String) {
            for _ in 0..<200 {
                let number = "+4474002\(String(format: "%05d", Int.random(in: 0..<100_000)))"
                let record = try await h.service.start(try .sms(number))
                guard record.providerID == provider else { continue }
                let sender = try #require(senders[provider])
                return (record, "msg-\(sender.recording.messages.count)", try sender.recording.code())
            }
            throw GatewayError(.internal, "the bandit never chose \(provider)")
        }

        func evidence() async throws -> [String: (successes: Int, failures: Int)] {
            var found: [String: (successes: Int, failures: Int)] = [:]
            for cell in try await store.adaptiveEvidence(route: "otp", context: nil, since: 0) {
                let now = found[cell.providerID] ?? (0, 0)
                found[cell.providerID] = (now.successes + cell.approvals, now.failures + cell.failures)
            }
            return found
        }
    }

    static func adaptive(_ ids: [String] = ["a", "b"], settle: TimeInterval = 60) throws -> Adaptive {
        let (providers, senders) = try DeliveryReceiptTests.providers(ids)
        let policy = AdaptivePolicy(
            providers: ids, objective: .deliveries, minShare: 0.05, window: 3600, settleAfter: settle)
        let store = InMemoryVerificationStore()
        let h = try ServiceHarness(
            providers,
            table: RoutingTable(
                defaultOrder: [], rules: [Route(name: "otp", channels: [.sms], target: .adaptive(policy))]),
            store: store)
        return Adaptive(h: h, store: store, senders: senders)
    }

    @Test("the first message's receipt is the start's result, once; an approval counts only without a receipt")
    func countsDeliveries() async throws {
        let rig = try Self.adaptive()
        let first = try await rig.start(at: "a")
        let second = try await rig.start(at: "b")
        #expect(first.record.adaptiveContext == "GB/sms" && second.record.adaptiveContext == "GB/sms")
        try await Self.receipt(rig.h, "a", first.message, .delivered, of: first.record.id)
        try await Self.receipt(rig.h, "b", second.message, .undelivered, of: second.record.id)
        var evidence = try await rig.evidence()
        #expect(evidence["a"]?.successes == 1 && evidence["a"]?.failures == 0)
        #expect(evidence["b"]?.successes == 0 && evidence["b"]?.failures == 1)
        // The approval after the delivered receipt counts nothing more; nor does a late second receipt.
        #expect(try await rig.h.check(first.record.id, first.code).record.status == .approved)
        try await Self.receipt(rig.h, "a", first.message, .failed, of: first.record.id)
        // A third start approved with no receipt at all: its approval stands for the delivery.
        let third = try await rig.start(at: "a")
        #expect(try await rig.h.check(third.record.id, third.code).record.status == .approved)
        evidence = try await rig.evidence()
        #expect(evidence["a"]?.successes == 2 && evidence["a"]?.failures == 0)
    }

    @Test("a delivered receipt and an approval arriving together count the start once")
    func raceCountsOnce() async throws {
        let rig = try Self.adaptive()
        for _ in 0..<20 {
            let started = try await rig.start(at: "a")
            async let receipt: Void = Self.receipt(rig.h, "a", started.message, .delivered, of: started.record.id)
            async let check = rig.h.check(started.record.id, started.code)
            _ = try await (receipt, check)
        }
        let evidence = try await rig.evidence()
        #expect(evidence["a"]?.successes == 20 && evidence["a"]?.failures == 0)
    }

    @Test("starts move to the provider whose messages are delivered")
    func learns() async throws {
        let rig = try Self.adaptive()
        var late: [String: Int] = [:]
        for index in 0..<300 {
            let record = try await rig.h.service.start(try .sms("+4474001\(String(format: "%05d", index))"))
            let sender = try #require(rig.senders[record.providerID])
            // `a` delivers everything, `b` one message in five.
            let delivered = record.providerID == "a" || index % 5 == 0
            try await Self.receipt(
                rig.h, record.providerID, "msg-\(sender.recording.messages.count)",
                delivered ? .delivered : .undelivered,
                of: record.id)
            if index >= 200 { late[record.providerID, default: 0] += 1 }
        }
        #expect(late["a", default: 0] >= 80, "a's share of the last 100 starts: \(late)")
    }

    @Test("a route that learns from deliveries names only messaging providers")
    func onlyMessagingProviders() throws {
        let policy = AdaptivePolicy(providers: ["own_sms", "verify"], objective: .deliveriesPerCost)
        let table = RoutingTable(
            defaultOrder: [], rules: [Route(name: "otp", channels: [.sms], target: .adaptive(policy))])
        let registry = try makeRegistry([
            try DeliveryReceiptTests.provider(sender: ReceiptSender()), ScriptedProvider(id: "verify"),
        ])
        let problems = table.providerProblems(against: registry)
        #expect(problems.count == 1)
        #expect(problems.first?.contains("provider `verify` does not send") == true)
    }
}
