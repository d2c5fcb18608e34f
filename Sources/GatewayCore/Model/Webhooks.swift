import Foundation

/// Status webhooks to the customer's application (`docs/operations.md`): what changed, as a delivery per
/// configured endpoint, queued durably in the store and sent at least once.
///
/// The queue is fed from the verification event log, which every state change writes in the same
/// transaction as the change itself. A cursor over the log (its sequence numbers) is moved forward in the
/// same transaction that inserts the deliveries, so an event is turned into deliveries exactly once, even
/// across a crash or restart, and nothing the engine writes needs to know about webhooks.
public enum WebhookEventType: String, Sendable, Codable, CaseIterable {
    case approved = "verification.approved"
    case denied = "verification.denied"
    case expired = "verification.expired"
    /// Delivery failed, too many wrong codes, or a fraud/geo block: `data.status` says which.
    case failed = "verification.failed"
    case canceled = "verification.canceled"
    /// The vendor (or a resend) moved the verification to another channel.
    case channelChanged = "verification.channel_changed"
    /// A messaging vendor's delivery receipt for one of the gateway's own messages: `data.delivery` says what.
    case delivery = "verification.delivery"

    /// The webhook an event of the log stands for, if any.
    public static func of(_ event: VerificationEvent) -> WebhookEventType? {
        if event.kind == .delivery { return .delivery }
        if event.detail["previous_channel"] != nil { return .channelChanged }
        guard event.kind == .statusChanged, let raw = event.detail["status"],
            let status = VerificationStatus(rawValue: raw)
        else { return nil }
        switch status {
        case .pending: return nil
        case .approved: return .approved
        case .denied: return .denied
        case .expired: return .expired
        case .canceled: return .canceled
        case .failed, .maxAttemptsReached, .blocked: return .failed
        }
    }
}

/// One event for one endpoint, as queued.
public struct WebhookDelivery: Sendable, Equatable {
    /// Where a delivery stands.
    public enum State: String, Sendable, Codable, CaseIterable {
        /// Waiting for its next attempt.
        case pending
        case delivered
        /// Failed every attempt; kept for the admin API, which can replay it.
        case parked
    }

    /// `whd_` and hex digits; unique per delivery.
    public var id: String
    /// `evt_` and the event's sequence number: the same for every endpoint and every attempt, so a receiver
    /// can drop a repeat.
    public var eventID: String
    /// The name of the configured endpoint it goes to.
    public var endpoint: String
    /// The webhook's type, also sent in the event-type header.
    public var type: WebhookEventType
    /// The verification the event is about.
    public var verificationID: String
    /// The JSON body, exactly as it is signed and sent.
    public var payload: Data
    /// Whether the delivery is waiting, delivered or parked.
    public var state: State
    /// Attempts made so far.
    public var attempts: Int
    /// When the delivery is next due; a claimed delivery's claim runs out then.
    public var nextAttemptAt: Date
    /// Why the last attempt failed (`HTTP 500`, a transport error), at most 200 characters; `nil` after a success.
    public var lastError: String?
    /// When the delivery was queued.
    public var createdAt: Date
    /// When the endpoint accepted it.
    public var deliveredAt: Date?

    /// A delivery as the feeder queues it: pending, no attempts yet.
    public init(
        id: String, eventID: String, endpoint: String, type: WebhookEventType, verificationID: String, payload: Data,
        state: State = .pending, attempts: Int = 0, nextAttemptAt: Date, lastError: String? = nil, createdAt: Date,
        deliveredAt: Date? = nil
    ) {
        self.id = id
        self.eventID = eventID
        self.endpoint = endpoint
        self.type = type
        self.verificationID = verificationID
        self.payload = payload
        self.state = state
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.lastError = lastError
        self.createdAt = createdAt
        self.deliveredAt = deliveredAt
    }
}

/// An event of the log with its sequence number (increasing in commit order).
public struct SequencedEvent: Sendable, Equatable {
    /// The event's position in the log; later commits have higher numbers.
    public var sequence: Int64
    /// The logged event.
    public var event: VerificationEvent

    /// An event at position `sequence`.
    public init(sequence: Int64, event: VerificationEvent) {
        self.sequence = sequence
        self.event = event
    }
}

/// The durable webhook queue. Stores that support webhooks (SQLite, in-memory) implement it; every
/// method throws only ``GatewayError``.
public protocol WebhookQueueStore: Sendable {
    /// Where the feeder stopped: the sequence number of the last event turned into deliveries. The first
    /// call starts it at the newest event, so turning webhooks on does not replay history.
    func webhookCursor() async throws(GatewayError) -> Int64

    /// Events after `sequence`, oldest first, at most `limit`.
    func events(after sequence: Int64, limit: Int) async throws(GatewayError) -> [SequencedEvent]

    /// Inserts `deliveries` and moves the cursor from `from` to `to`, in one transaction. `false` (and
    /// nothing written) when the cursor was no longer at `from`: another feeder got there first.
    func enqueue(_ deliveries: [WebhookDelivery], cursorFrom from: Int64, to: Int64) async throws(GatewayError) -> Bool

    /// Pending deliveries due at `at`, oldest first, at most `limit`; each is claimed by moving its next
    /// attempt to `at + lease`, so a crashed sender's claim runs out and the delivery is tried again.
    func claimDueWebhooks(at: Date, limit: Int, lease: TimeInterval) async throws(GatewayError) -> [WebhookDelivery]

    /// Writes an attempt's result (state, attempts, next attempt, last error, delivered time).
    func saveWebhook(_ delivery: WebhookDelivery) async throws(GatewayError)

    /// Deliveries in `state` (every state when nil), newest first, at most `limit`.
    func webhookDeliveries(state: WebhookDelivery.State?, limit: Int) async throws(GatewayError) -> [WebhookDelivery]

    /// The delivery with `id`, or `nil` when there is none.
    func webhookDelivery(id: String) async throws(GatewayError) -> WebhookDelivery?

    /// Marks the endpoint named `endpoint` disabled (its receiver answered `410 Gone`): no delivery is queued for
    /// it or sent to it until it is enabled again. A second disabling keeps the first's time and reason.
    func disableWebhookEndpoint(_ endpoint: String, at: Date, reason: String) async throws(GatewayError)

    /// Enables a disabled endpoint again; `false` when it was not disabled.
    func enableWebhookEndpoint(_ endpoint: String) async throws(GatewayError) -> Bool

    /// The disabled endpoints by name.
    func disabledWebhookEndpoints() async throws(GatewayError) -> [String: DisabledWebhookEndpoint]
}

/// Why and since when an endpoint receives nothing (``WebhookQueueStore/disableWebhookEndpoint(_:at:reason:)``).
public struct DisabledWebhookEndpoint: Sendable, Equatable {
    /// When it was disabled.
    public var at: Date
    /// Why, as the dispatcher recorded it (`HTTP 410 Gone from the receiver`).
    public var reason: String

    /// A disabling from its parts.
    public init(at: Date, reason: String) {
        self.at = at
        self.reason = reason
    }
}

/// Retries: the wait after the n-th failed attempt is `initial × 2^(n-1)`, at most `maximum`, plus up to
/// 10% jitter; after `maxAttempts` failures the delivery is parked.
public struct WebhookRetryPolicy: Sendable, Equatable {
    /// Attempts before a delivery is parked.
    public var maxAttempts: Int
    /// The wait after the first failed attempt, in seconds.
    public var initialBackoff: TimeInterval
    /// The longest wait between attempts, in seconds.
    public var maxBackoff: TimeInterval

    /// A policy of 10 attempts, waiting 2 seconds at first and at most 10 minutes.
    public init(maxAttempts: Int = 10, initialBackoff: TimeInterval = 2, maxBackoff: TimeInterval = 600) {
        self.maxAttempts = maxAttempts
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
    }

    /// Seconds to wait after `attempts` failed attempts (without jitter).
    public func backoff(afterAttempts attempts: Int) -> TimeInterval {
        let exponent = Double(max(0, min(attempts - 1, 30)))
        return min(maxBackoff, initialBackoff * pow(2, exponent))
    }
}
