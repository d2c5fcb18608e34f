import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

/// A route with `delivery: {deliver_within: 20s, failover: true}`: a message reported undelivered, or not
/// reported delivered in time, is sent again, with the same code, through the next messaging provider of the
/// route that has not sent it; never after a `delivered` receipt, never twice for one send.
@Suite("Delivery failover")
struct DeliveryFailoverTests {
    struct Rig {
        let h: ServiceHarness
        let senders: [String: ReceiptSender]

        func messages(_ id: String) -> Int { senders[id]?.recording.messages.count ?? 0 }

        /// A signed receipt of `provider`'s `message` for `verification`.
        func receipt(
            _ provider: String, _ message: String, _ status: DeliveryStatus, of verification: String,
            code: String? = nil
        ) async throws {
            var fields = ["message_id": message, "status": status.rawValue, "verification_id": verification]
            fields["error_code"] = code
            _ = try await h.service.handleCallback(providerID: provider, ReceiptSender.callback(fields))
        }

        func resent(_ id: String) async throws -> [[String: String]] {
            try await h.events(id, .resent).map(\.detail)
        }
    }

    static func rig(
        _ ids: [String] = ["a", "b", "c"], within: TimeInterval = 20, failover: Bool = true, maxSends: Int = 10,
        store: any VerificationStore = InMemoryVerificationStore()
    ) throws -> Rig {
        let (providers, senders) = try DeliveryReceiptTests.providers(ids)
        let route = Route(
            name: "sms", channels: [.sms], target: .providers(ids),
            delivery: DeliveryPolicy(deliverWithin: within, failover: failover))
        let h = try ServiceHarness(
            providers, table: RoutingTable(defaultOrder: [], rules: [route]),
            policy: VerificationPolicy(maxSends: maxSends), store: store)
        return Rig(h: h, senders: senders)
    }

    @Test("an undelivered receipt sends the same code once through the next provider, which approves")
    func undelivered() async throws {
        let rig = try Self.rig()
        let record = try await rig.h.service.start(try .sms())
        #expect(record.providerID == "a" && record.route == "sms")
        // Not due yet: nothing happens.
        #expect(await rig.h.service.runDueDeliveryDeadlines() == 0)
        try await rig.receipt("a", "msg-1", .undelivered, of: record.id, code: "30003")
        #expect(await rig.h.service.runDueDeliveryDeadlines() == 1)
        let moved = try await rig.h.stored(record.id)
        #expect(moved.providerID == "b" && moved.sends == 2)
        let code = try #require(rig.senders["a"]).recording.code()
        #expect(try #require(rig.senders["b"]).recording.code() == code)
        #expect(try await rig.resent(record.id).last?["delivery_failover"] == "a undelivered 30003")
        // Acted on once: the next round finds nothing, and the first message's code approves.
        #expect(await rig.h.service.runDueDeliveryDeadlines() == 0)
        #expect(rig.messages("b") == 1 && rig.messages("c") == 0)
        #expect(try await rig.h.check(record.id, code).record.status == .approved)
    }

    @Test("no receipt within deliver_within fails over at the deadline, and not before")
    func silent() async throws {
        let rig = try Self.rig()
        let record = try await rig.h.service.start(try .sms())
        rig.h.clock.advance(by: 19)
        #expect(await rig.h.service.runDueDeliveryDeadlines() == 0)
        rig.h.clock.advance(by: 2)
        #expect(await rig.h.service.runDueDeliveryDeadlines() == 1)
        #expect(try await rig.h.stored(record.id).providerID == "b")
        #expect(try await rig.resent(record.id).last?["delivery_failover"] == "a not delivered within 20s")
    }

    @Test("a delivered message is never sent again, whatever comes later")
    func delivered() async throws {
        let rig = try Self.rig()
        let record = try await rig.h.service.start(try .sms())
        try await rig.receipt("a", "msg-1", .delivered, of: record.id)
        // A failure reported after the delivery changes nothing either.
        try await rig.receipt("a", "msg-1", .failed, of: record.id, code: "30008")
        rig.h.clock.advance(by: 60)
        _ = await rig.h.service.runDueDeliveryDeadlines()
        #expect(try await rig.h.stored(record.id).sends == 1)
        #expect(rig.messages("b") == 0 && rig.messages("c") == 0)
    }

    @Test("a failed receipt that beats the send's deadline into the store still fails over at once")
    func receiptBeforeDeadline() async throws {
        let store = InMemoryVerificationStore()
        let rig = try Self.rig(store: store)
        let record = try await rig.h.service.start(try .sms())
        // As if the receipt arrived between the start's commit and its deadline's write: no deadline yet.
        try await store.removeDeliveryDeadline(verificationID: record.id, send: 1)
        try await rig.receipt("a", "msg-1", .undelivered, of: record.id, code: "30003")
        // Then the start's own write, due 20 s on: the earlier time stays.
        try await store.scheduleDeliveryDeadline(
            DeliveryDeadline(
                verificationID: record.id, send: 1, providerID: "a", messageID: "msg-1",
                dueAt: rig.h.clock.now.addingTimeInterval(20)))
        #expect(await rig.h.service.runDueDeliveryDeadlines() == 1)
        #expect(try await rig.resent(record.id).last?["delivery_failover"] == "a undelivered 30003")
        // A failed receipt for a message that is not the latest writes nothing.
        try await rig.receipt("a", "msg-1", .failed, of: record.id, code: "30008")
        rig.h.clock.advance(by: 1)
        #expect(await rig.h.service.runDueDeliveryDeadlines() == 0)
        #expect(rig.messages("b") == 1 && rig.messages("c") == 0)
    }

    @Test("a late receipt for the first send, after the failover, is recorded and changes nothing")
    func lateReceipt() async throws {
        let rig = try Self.rig()
        let record = try await rig.h.service.start(try .sms())
        rig.h.clock.advance(by: 21)
        #expect(await rig.h.service.runDueDeliveryDeadlines() == 1)
        try await rig.receipt("a", "msg-1", .undelivered, of: record.id, code: "30003")
        try await rig.receipt("a", "msg-1", .delivered, of: record.id)
        #expect(await rig.h.service.runDueDeliveryDeadlines() == 0)
        #expect(try await rig.h.events(record.id, .delivery).count == 2)
        let stored = try await rig.h.stored(record.id)
        #expect(stored.providerID == "b" && stored.sends == 2)
        #expect(rig.messages("b") == 1 && rig.messages("c") == 0)
    }

    @Test("each failed send fails over once, to a provider that has not sent; with none left it stops")
    func chain() async throws {
        let rig = try Self.rig()
        let record = try await rig.h.service.start(try .sms())
        for _ in 0..<4 {
            rig.h.clock.advance(by: 21)
            _ = await rig.h.service.runDueDeliveryDeadlines()
        }
        let stored = try await rig.h.stored(record.id)
        #expect(stored.sends == 3 && stored.providerID == "c")
        #expect(try await rig.resent(record.id).map { $0["provider"] ?? "-" } == ["b", "c"])
        #expect(rig.messages("a") == 1 && rig.messages("b") == 1 && rig.messages("c") == 1)
    }

    @Test("failover sends count against max_sends")
    func maxSends() async throws {
        let rig = try Self.rig(maxSends: 2)
        let record = try await rig.h.service.start(try .sms())
        for _ in 0..<3 {
            rig.h.clock.advance(by: 21)
            _ = await rig.h.service.runDueDeliveryDeadlines()
        }
        #expect(try await rig.h.stored(record.id).sends == 2)
        #expect(rig.messages("c") == 0)
    }

    @Test("an approved, canceled or resent verification makes its deadline moot")
    func moot() async throws {
        let rig = try Self.rig()
        let approved = try await rig.h.service.start(try .sms("+16505553401"))
        _ = try await rig.h.check(approved.id, try #require(rig.senders["a"]).recording.code())
        let canceled = try await rig.h.service.start(try .sms("+16505553402"))
        _ = try await rig.h.service.cancel(id: canceled.id)
        let resent = try await rig.h.service.start(try .sms("+16505553403"))
        _ = try await rig.h.service.resend(id: resent.id, request: ResendRequest(provider: "a"))
        rig.h.clock.advance(by: 21)
        _ = await rig.h.service.runDueDeliveryDeadlines()
        #expect(try await rig.h.stored(approved.id).sends == 1)
        #expect(try await rig.h.stored(canceled.id).sends == 1)
        // The resend's own deadline came due too: its send fails over once, the start's is moot.
        #expect(try await rig.h.stored(resent.id).sends == 3)
        #expect(rig.messages("b") == 1)
    }

    @Test("two rounds at once, and a deadline handed out again after its claim lapsed, fail over once")
    func once() async throws {
        let rig = try Self.rig()
        let record = try await rig.h.service.start(try .sms())
        rig.h.clock.advance(by: 21)
        async let first = rig.h.service.runDueDeliveryDeadlines()
        async let second = rig.h.service.runDueDeliveryDeadlines()
        #expect(await first + second == 1)
        // As if another instance's claim of the same deadline had lapsed mid-way: it is due again, and moot.
        let deadlines = try #require(rig.h.store as? any DeliveryDeadlineStore)
        try await deadlines.scheduleDeliveryDeadline(
            DeliveryDeadline(
                verificationID: record.id, send: 1, providerID: "a", messageID: "msg-1", dueAt: rig.h.clock.now))
        #expect(await rig.h.service.runDueDeliveryDeadlines() == 1)
        #expect(try await rig.h.stored(record.id).sends == 2)
        #expect(rig.messages("b") == 1 && rig.messages("c") == 0)
    }

    @Test("deadlines live in the store: a service started anew on it acts on those left by the one before")
    func restart() async throws {
        let store = InMemoryVerificationStore()
        let before = try Self.rig(store: store)
        let record = try await before.h.service.start(try .sms())
        // A new process on the same store: its own providers and clock, nothing in memory of the start.
        let after = try Self.rig(store: store)
        after.h.clock.advance(by: before.h.clock.now.timeIntervalSince(after.h.clock.now) + 21)
        #expect(await after.h.service.runDueDeliveryDeadlines() == 1)
        #expect(try await after.h.stored(record.id).providerID == "b")
        #expect(after.messages("b") == 1)
        #expect(await after.h.service.runDueDeliveryDeadlines() == 0)
    }

    @Test("without failover, or a route of one messaging provider, receipts are only recorded")
    func off() async throws {
        let rig = try Self.rig(failover: false)
        let record = try await rig.h.service.start(try .sms())
        try await rig.receipt("a", "msg-1", .undelivered, of: record.id)
        rig.h.clock.advance(by: 60)
        #expect(await rig.h.service.runDueDeliveryDeadlines() == 0)
        #expect(try await rig.h.stored(record.id).sends == 1)
        let single = try Self.rig(["a"])
        let alone = try await single.h.service.start(try .sms())
        single.h.clock.advance(by: 60)
        _ = await single.h.service.runDueDeliveryDeadlines()
        #expect(try await single.h.stored(alone.id).sends == 1)
    }

    @Test("check-config: failover needs two messaging providers and a route that names them")
    func problems() throws {
        let verify = ScriptedProvider(id: "verify")
        let own = try DeliveryReceiptTests.provider("a", sender: ReceiptSender())
        let registry = try makeRegistry([verify, own])
        let policy = DeliveryPolicy()
        let table = RoutingTable(
            defaultOrder: [],
            rules: [
                Route(name: "mixed", target: .providers(["verify", "a"]), delivery: policy),
                Route(name: "trial", target: .experiment("t"), delivery: policy),
                Route(name: "quiet", target: .providers(["verify"]), delivery: DeliveryPolicy(failover: false)),
            ])
        let problems = table.providerProblems(against: registry)
        #expect(
            problems.contains(
                "routing: route `mixed`: `delivery.failover` needs at least two providers that send the gateway's own codes"
            ))
        #expect(
            problems.contains(
                "routing: route `trial`: `delivery.failover` needs `providers` or `adaptive`, not an experiment"))
        #expect(!problems.contains { $0.contains("`quiet`") })
    }
}

@Suite("Delivery failover and the circuit breakers")
struct DeliveryBreakerTests {
    @Test("a vendor that answers and delivers nothing opens its breaker: later starts go straight to the next")
    func silentVendorOpensItsBreaker() async throws {
        let rig = try DeliveryFailoverTests.rig()
        var ids: [String] = []
        for index in 0..<5 { ids.append(try await rig.h.service.start(try .sms("+1650555340\(index)")).id) }
        #expect(rig.messages("a") == 5)
        rig.h.clock.advance(by: 21)
        #expect(await rig.h.service.runDueDeliveryDeadlines() == 5)
        #expect(rig.h.service.breakers.state("a", country: "US") == .open)
        let next = try await rig.h.service.start(try .sms("+16505553499"))
        #expect(next.providerID == "b" && rig.messages("a") == 5)
        let started = try #require(try await rig.h.events(next.id, .started).first)
        #expect(started.detail["skipped"] == "a:breaker_open")
    }

    @Test("delivered messages keep the breaker closed, and a half-open probe is resolved by its delivery")
    func deliveredKeepsItClosed() async throws {
        let rig = try DeliveryFailoverTests.rig()
        for index in 0..<12 {
            let record = try await rig.h.service.start(try .sms("+165055534\(10 + index)"))
            try await rig.receipt("a", "msg-\(index + 1)", .delivered, of: record.id)
        }
        rig.h.clock.advance(by: 21)
        _ = await rig.h.service.runDueDeliveryDeadlines()
        #expect(rig.h.service.breakers.state("a", country: "US") == .closed)
        #expect(rig.messages("b") == 0)
    }

    @Test("a half-open probe whose outcome never comes is given back after the window")
    func stuckProbe() {
        let clock = ManualClock()
        let breakers = CircuitBreakers(settings: .init(consecutiveFailures: 1, window: 60, cooldown: 30), clock: clock)
        breakers.record("a", country: "US", failure: true)
        #expect(!breakers.allow("a", country: "US"))
        clock.advance(by: 31)
        #expect(breakers.allow("a", country: "US"))
        #expect(!breakers.allow("a", country: "US"))
        clock.advance(by: 61)
        #expect(breakers.allow("a", country: "US"))
    }
}
