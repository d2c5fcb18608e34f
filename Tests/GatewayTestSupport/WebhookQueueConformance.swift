import Foundation
import GatewayCore
import Testing

/// The behaviour every ``WebhookQueueStore`` must show (SQLite, PostgreSQL), written once like
/// ``StoreConformance``: the cursor starts at the newest event and moves by compare-and-set, events come
/// back in sequence order, a delivery exists once per endpoint and event, and claims never hand the same
/// due delivery to two senders until the lease runs out.
public struct WebhookQueueConformance: Sendable {
    /// A store with the webhook queue: what the checks need to write events and read deliveries.
    public typealias Queue = VerificationStore & WebhookQueueStore
    private let makeStore: @Sendable () async throws -> any Queue

    /// A suite over the stores `makeStore` makes; each check makes its own, new and empty.
    public init(makeStore: @escaping @Sendable () async throws -> any Queue) {
        self.makeStore = makeStore
    }

    /// Every check, so a store's test suite runs them all as one parameterized test (as ``StoreConformance``).
    public enum Check: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case cursorStartsAtTheNewestEventAndMovesByCompareAndSet
        case deliveriesAreUniquePerEndpointAndEvent
        case claimsAreExclusiveUntilTheLeaseRunsOut
        case endpointsAreDisabledOnceAndEnabledAgain

        /// The check's name as the test report shows it.
        public var testDescription: String {
            switch self {
            case .cursorStartsAtTheNewestEventAndMovesByCompareAndSet:
                "Webhook cursor starts at the newest event and moves by compare-and-set"
            case .deliveriesAreUniquePerEndpointAndEvent: "Webhook deliveries are unique per endpoint and event"
            case .claimsAreExclusiveUntilTheLeaseRunsOut: "Webhook claims are exclusive until the lease runs out"
            case .endpointsAreDisabledOnceAndEnabledAgain:
                "A webhook endpoint is disabled once, keeps its first reason, and is enabled again"
            }
        }
    }

    /// Runs one check.
    public func run(_ check: Check) async throws {
        switch check {
        case .cursorStartsAtTheNewestEventAndMovesByCompareAndSet:
            try await cursorStartsAtTheNewestEventAndMovesByCompareAndSet()
        case .deliveriesAreUniquePerEndpointAndEvent: try await deliveriesAreUniquePerEndpointAndEvent()
        case .claimsAreExclusiveUntilTheLeaseRunsOut: try await claimsAreExclusiveUntilTheLeaseRunsOut()
        case .endpointsAreDisabledOnceAndEnabledAgain: try await endpointsAreDisabledOnceAndEnabledAgain()
        }
    }

    static func delivery(_ n: Int, endpoint: String = "https://hooks.example/a", due: Date) -> WebhookDelivery {
        WebhookDelivery(
            id: "wh_\(n)_\(endpoint.suffix(1))", eventID: "ev_\(n)", endpoint: endpoint, type: .approved,
            verificationID: "VE\(n)", payload: Data("{\"n\":\(n)}".utf8), nextAttemptAt: due,
            createdAt: due.addingTimeInterval(Double(n)))
    }

    /// The cursor starts at the newest event (history is not replayed), later events follow in order,
    /// and only the writer holding the current cursor moves it.
    public func cursorStartsAtTheNewestEventAndMovesByCompareAndSet() async throws {
        let store = try await makeStore()
        let epoch = StoreConformance.epoch
        try await store.append(VerificationEvent(verificationID: "VEold", kind: .started, at: epoch))
        let start = try await store.webhookCursor()
        #expect(try await store.events(after: start, limit: 10).isEmpty)
        #expect(try await store.webhookCursor() == start)
        let kinds: [VerificationEvent.Kind] = [.started, .checked, .canceled]
        for (index, kind) in kinds.enumerated() {
            try await store.append(VerificationEvent(verificationID: "VE\(index)", kind: kind, at: epoch))
        }
        let events = try await store.events(after: start, limit: 10)
        #expect(events.map(\.event.kind) == kinds)
        #expect(events.map(\.sequence) == events.map(\.sequence).sorted())
        #expect(Set(events.map(\.sequence)).count == 3)
        #expect(try await store.events(after: start, limit: 2).count == 2)
        let newest = events.last?.sequence ?? start
        #expect(try await store.enqueue([], cursorFrom: start, to: newest))
        #expect(try await store.enqueue([], cursorFrom: start, to: newest) == false)
        #expect(try await store.webhookCursor() == newest)
    }

    /// Enqueueing twice for the same endpoint and event keeps one delivery; a lost cursor race writes nothing.
    public func deliveriesAreUniquePerEndpointAndEvent() async throws {
        let store = try await makeStore()
        let due = StoreConformance.epoch
        let cursor = try await store.webhookCursor()
        let first = Self.delivery(1, due: due)
        var again = first
        again.id = "wh_other"
        #expect(
            try await store.enqueue(
                [first, again, Self.delivery(1, endpoint: "https://hooks.example/b", due: due)], cursorFrom: cursor,
                to: cursor + 1))
        #expect(try await store.enqueue([Self.delivery(2, due: due)], cursorFrom: cursor, to: cursor + 2) == false)
        let all = try await store.webhookDeliveries(state: nil, limit: 10)
        #expect(all.count == 2)
        #expect(try await store.webhookDelivery(id: first.id) == first)
        #expect(try await store.webhookDelivery(id: "wh_other") == nil)
        #expect(try await store.webhookDelivery(id: "wh_2_a") == nil)
    }

    /// Concurrent claims never hand one delivery out twice; a claimed delivery is due again when its lease
    /// runs out, and a saved result reads back.
    public func claimsAreExclusiveUntilTheLeaseRunsOut() async throws {
        let store = try await makeStore()
        let due = StoreConformance.epoch
        let cursor = try await store.webhookCursor()
        let deliveries = (0..<20).map { Self.delivery($0, due: due) }
        #expect(try await store.enqueue(deliveries, cursorFrom: cursor, to: cursor + 1))
        let claimed = try await withThrowingTaskGroup(of: [WebhookDelivery].self) { group in
            for _ in 0..<6 { group.addTask { try await store.claimDueWebhooks(at: due, limit: 5, lease: 30) } }
            return try await group.reduce(into: [WebhookDelivery]()) { $0 += $1 }
        }
        #expect(claimed.count == 20)
        #expect(Set(claimed.map(\.id)).count == 20)
        #expect(try await store.claimDueWebhooks(at: due.addingTimeInterval(29), limit: 50, lease: 30).isEmpty)
        let again = try await store.claimDueWebhooks(at: due.addingTimeInterval(30), limit: 50, lease: 30)
        #expect(again.count == 20)
        var done = deliveries[0]
        done.state = .delivered
        done.attempts = 1
        done.deliveredAt = due.addingTimeInterval(31)
        done.nextAttemptAt = due.addingTimeInterval(31)
        try await store.saveWebhook(done)
        #expect(try await store.webhookDelivery(id: done.id) == done)
        #expect(try await store.webhookDeliveries(state: .delivered, limit: 10) == [done])
        #expect(try await store.claimDueWebhooks(at: due.addingTimeInterval(3600), limit: 50, lease: 30).count == 19)
    }

    /// Runs every check in turn.
    public func runAll() async throws {
        try await cursorStartsAtTheNewestEventAndMovesByCompareAndSet()
        try await deliveriesAreUniquePerEndpointAndEvent()
        try await claimsAreExclusiveUntilTheLeaseRunsOut()
    }

    /// Disabling twice (two instances seeing the same `410`) keeps the first time and reason; enabling removes
    /// it, once; the other endpoints are untouched.
    public func endpointsAreDisabledOnceAndEnabledAgain() async throws {
        let store = try await makeStore()
        let epoch = StoreConformance.epoch
        #expect(try await store.disabledWebhookEndpoints().isEmpty)
        async let first: Void = store.disableWebhookEndpoint("app", at: epoch, reason: "HTTP 410")
        async let second: Void = store.disableWebhookEndpoint("app", at: epoch, reason: "HTTP 410")
        _ = try await (first, second)
        try await store.disableWebhookEndpoint("app", at: epoch.addingTimeInterval(60), reason: "later")
        try await store.disableWebhookEndpoint("audit", at: epoch.addingTimeInterval(5), reason: "gone")
        let disabled = try await store.disabledWebhookEndpoints()
        #expect(disabled["app"] == DisabledWebhookEndpoint(at: epoch, reason: "HTTP 410"))
        #expect(disabled["audit"] == DisabledWebhookEndpoint(at: epoch.addingTimeInterval(5), reason: "gone"))
        #expect(try await store.enableWebhookEndpoint("app"))
        #expect(try await !store.enableWebhookEndpoint("app"))
        #expect(try await store.disabledWebhookEndpoints().keys.sorted() == ["audit"])
    }
}
