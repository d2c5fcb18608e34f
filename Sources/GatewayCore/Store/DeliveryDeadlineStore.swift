import Foundation

/// One message of the gateway's own code waiting to be reported delivered (docs/routing.md, "Delivery
/// failover"): when ``dueAt`` passes first, the gateway sends the code through another provider.
public struct DeliveryDeadline: Sendable, Equatable {
    /// The verification that sent it.
    public var verificationID: String
    /// Which of the verification's sends it is, from 1 (``VerificationRecord/sends`` once it was sent): a later
    /// send makes this deadline moot.
    public var send: Int
    /// The provider that sent it.
    public var providerID: String
    /// The vendor's message id, which its receipts name.
    public var messageID: String
    /// When the gateway acts if no `delivered` receipt came.
    public var dueAt: Date

    /// A deadline from its parts.
    public init(verificationID: String, send: Int, providerID: String, messageID: String, dueAt: Date) {
        self.verificationID = verificationID
        self.send = send
        self.providerID = providerID
        self.messageID = messageID
        self.dueAt = dueAt
    }
}

/// The pending delivery deadlines, kept in the store so that they outlive a restart and so that, with several
/// instances, one acts on each. A store that keeps them (SQLite, PostgreSQL, the in-memory one) passes the
/// delivery-deadline conformance suite.
public protocol DeliveryDeadlineStore: Sendable {
    /// Keeps `deadline`, replacing the one of the same verification and send; for the same provider and message
    /// the earlier due time stays (a failed receipt may have written the deadline, due now, before the send did).
    func scheduleDeliveryDeadline(_ deadline: DeliveryDeadline) async throws(GatewayError)

    /// Deadlines due at `at`, earliest first, at most `limit`; each is claimed by moving its due time to
    /// `at + lease`, so that no other instance takes it meanwhile and one whose claimer died is taken again.
    func claimDueDeliveryDeadlines(at: Date, limit: Int, lease: TimeInterval) async throws(GatewayError)
        -> [DeliveryDeadline]

    /// Brings the deadline of `providerID`'s message `messageID` of `verificationID` forward to `at` (a receipt
    /// said it failed), when one is kept and due later; `false` when none was.
    func expediteDeliveryDeadline(verificationID: String, providerID: String, messageID: String, to at: Date)
        async throws(GatewayError) -> Bool

    /// Forgets the deadline of `verificationID`'s send `send`.
    func removeDeliveryDeadline(verificationID: String, send: Int) async throws(GatewayError)
}
