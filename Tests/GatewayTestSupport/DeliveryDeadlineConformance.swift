import Foundation
import GatewayCore
import Testing

/// The behaviour every ``DeliveryDeadlineStore`` must show (in memory, SQLite, PostgreSQL), written once like
/// ``WebhookQueueConformance``: a deadline is kept per verification and send (scheduling again replaces it, but
/// for the same message keeps the earlier due time),
/// comes due in order, is claimed by one claimer at a time until its lease runs out, is brought forward only
/// by its own message's id, and is gone once removed.
public struct DeliveryDeadlineConformance: Sendable {
    private let makeStore: @Sendable () async throws -> any DeliveryDeadlineStore

    /// A suite over the stores `makeStore` makes; each check makes its own, new and empty.
    public init(makeStore: @escaping @Sendable () async throws -> any DeliveryDeadlineStore) {
        self.makeStore = makeStore
    }

    /// Every check, so a store's test suite runs them all as one parameterized test.
    public enum Check: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case dueInOrderAndReplacedPerSend
        case claimsAreExclusiveUntilTheLeaseRunsOut
        case expeditedOnlyByItsOwnMessage
        case removedForGood

        /// The check's name as the test report shows it.
        public var testDescription: String {
            switch self {
            case .dueInOrderAndReplacedPerSend: "Delivery deadlines come due in order, one per verification and send"
            case .claimsAreExclusiveUntilTheLeaseRunsOut: "Delivery deadline claims are exclusive until the lease ends"
            case .expeditedOnlyByItsOwnMessage: "A delivery deadline is brought forward only by its own message"
            case .removedForGood: "A removed delivery deadline never comes due"
            }
        }
    }

    /// Runs one check.
    public func run(_ check: Check) async throws {
        switch check {
        case .dueInOrderAndReplacedPerSend: try await dueInOrderAndReplacedPerSend()
        case .claimsAreExclusiveUntilTheLeaseRunsOut: try await claimsAreExclusiveUntilTheLeaseRunsOut()
        case .expeditedOnlyByItsOwnMessage: try await expeditedOnlyByItsOwnMessage()
        case .removedForGood: try await removedForGood()
        }
    }

    static let epoch = StoreConformance.epoch

    static func deadline(_ id: String, send: Int = 1, message: String? = nil, due: TimeInterval) -> DeliveryDeadline {
        DeliveryDeadline(
            verificationID: id, send: send, providerID: "sms-\(send)", messageID: message ?? "\(id)-m\(send)",
            dueAt: epoch.addingTimeInterval(due))
    }

    /// Deadlines come back earliest first, only once due; a second schedule of the same send replaces the first.
    public func dueInOrderAndReplacedPerSend() async throws {
        let store = try await makeStore()
        try await store.scheduleDeliveryDeadline(Self.deadline("vf_b", due: 20))
        try await store.scheduleDeliveryDeadline(Self.deadline("vf_a", due: 10))
        try await store.scheduleDeliveryDeadline(Self.deadline("vf_c", due: 30))
        try await store.scheduleDeliveryDeadline(Self.deadline("vf_a", send: 2, due: 15))
        // Replaced: the same send of vf_c, due later, from another provider.
        var moved = Self.deadline("vf_c", due: 100)
        moved.providerID = "other"
        try await store.scheduleDeliveryDeadline(moved)
        #expect(
            try await store.claimDueDeliveryDeadlines(at: Self.epoch.addingTimeInterval(5), limit: 10, lease: 60)
                .isEmpty)
        let due = try await store.claimDueDeliveryDeadlines(
            at: Self.epoch.addingTimeInterval(40), limit: 10, lease: 1000)
        #expect(
            due == [
                Self.deadline("vf_a", due: 10), Self.deadline("vf_a", send: 2, due: 15),
                Self.deadline(
                    "vf_b", due: 20),
            ])
        let later = try await store.claimDueDeliveryDeadlines(
            at: Self.epoch.addingTimeInterval(100), limit: 1, lease: 600)
        #expect(later == [moved])
        // The same message scheduled again, due later (the send's write after a failed receipt's): the earlier
        // time stays.
        try await store.scheduleDeliveryDeadline(Self.deadline("vf_d", due: 50))
        try await store.scheduleDeliveryDeadline(Self.deadline("vf_d", due: 500))
        let kept = try await store.claimDueDeliveryDeadlines(
            at: Self.epoch.addingTimeInterval(60), limit: 5, lease: 600)
        #expect(kept == [Self.deadline("vf_d", due: 50)])
    }

    /// A claimed deadline is not handed out again until its lease runs out; then it is, to the next claimer.
    public func claimsAreExclusiveUntilTheLeaseRunsOut() async throws {
        let store = try await makeStore()
        for index in 0..<6 { try await store.scheduleDeliveryDeadline(Self.deadline("vf_\(index)", due: 0)) }
        let now = Self.epoch.addingTimeInterval(1)
        async let first = store.claimDueDeliveryDeadlines(at: now, limit: 6, lease: 30)
        async let second = store.claimDueDeliveryDeadlines(at: now, limit: 6, lease: 30)
        let claimed = try await first + second
        #expect(claimed.count == 6)
        #expect(Set(claimed.map(\.verificationID)).count == 6, "a deadline was claimed twice")
        #expect(try await store.claimDueDeliveryDeadlines(at: now.addingTimeInterval(29), limit: 6, lease: 30).isEmpty)
        let again = try await store.claimDueDeliveryDeadlines(at: now.addingTimeInterval(31), limit: 6, lease: 30)
        #expect(again.count == 6)
        #expect(again.allSatisfy { $0.dueAt == now.addingTimeInterval(30) })
    }

    /// Brought forward by its own provider's message id, never pushed back, and not at all by another message's
    /// (nor by the same id from another provider).
    public func expeditedOnlyByItsOwnMessage() async throws {
        let store = try await makeStore()
        try await store.scheduleDeliveryDeadline(Self.deadline("vf_x", message: "SM1", due: 20))
        let now = Self.epoch.addingTimeInterval(2)
        #expect(
            try await !store.expediteDeliveryDeadline(
                verificationID: "vf_x", providerID: "sms-1", messageID: "SM0", to: now))
        #expect(
            try await !store.expediteDeliveryDeadline(
                verificationID: "vf_y", providerID: "sms-1", messageID: "SM1", to: now))
        #expect(
            try await !store.expediteDeliveryDeadline(
                verificationID: "vf_x", providerID: "sms-2", messageID: "SM1", to: now))
        #expect(try await store.claimDueDeliveryDeadlines(at: now, limit: 5, lease: 60).isEmpty)
        #expect(
            try await store.expediteDeliveryDeadline(
                verificationID: "vf_x", providerID: "sms-1", messageID: "SM1", to: now))
        #expect(
            try await !store.expediteDeliveryDeadline(
                verificationID: "vf_x", providerID: "sms-1", messageID: "SM1", to: now.addingTimeInterval(5)))
        let due = try await store.claimDueDeliveryDeadlines(at: now, limit: 5, lease: 60)
        #expect(due.map(\.messageID) == ["SM1"])
        #expect(due.first?.dueAt == now)
    }

    /// Removed, a deadline never comes due, and removing it twice is harmless.
    public func removedForGood() async throws {
        let store = try await makeStore()
        try await store.scheduleDeliveryDeadline(Self.deadline("vf_r", due: 0))
        try await store.scheduleDeliveryDeadline(Self.deadline("vf_r", send: 2, due: 0))
        try await store.removeDeliveryDeadline(verificationID: "vf_r", send: 1)
        try await store.removeDeliveryDeadline(verificationID: "vf_r", send: 1)
        let due = try await store.claimDueDeliveryDeadlines(at: Self.epoch.addingTimeInterval(1), limit: 5, lease: 60)
        #expect(due.map(\.send) == [2])
    }
}
