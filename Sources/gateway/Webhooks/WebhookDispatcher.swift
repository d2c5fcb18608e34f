import Crypto
import Foundation
import GatewayCore
import HTTPTypes
import Logging
import ServiceLifecycle

/// A configured receiver of status webhooks (`webhooks.endpoints` in the configuration).
struct WebhookEndpoint: Sendable, Equatable {
    /// Names the endpoint in deliveries and the admin API; unique.
    var name: String
    var url: URL
    /// The HMAC key, from the environment (`secret_env`), never from the file.
    var secret: String
    /// The event types it receives; nil: all.
    var events: Set<WebhookEventType>?

    func accepts(_ type: WebhookEventType) -> Bool { events?.contains(type) ?? true }
}

/// `webhooks:` in the configuration.
struct WebhookSettings: Sendable, Equatable {
    var endpoints: [WebhookEndpoint] = []
    var retry = WebhookRetryPolicy()
    /// How often the queue is looked at when it was empty.
    var pollInterval: Duration = .milliseconds(500)
    /// Deadline for one delivery attempt.
    var timeout: Duration = .seconds(10)
}

/// Signs a webhook body: `X-Gateway-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`.
/// A receiver recomputes it over the raw body and refuses a timestamp older than it tolerates (five minutes
/// is usual), which stops replays of a captured request.
enum WebhookSignature {
    static let header = HTTPField.Name("X-Gateway-Signature")!
    static let eventID = HTTPField.Name("X-Gateway-Event-Id")!
    static let eventType = HTTPField.Name("X-Gateway-Event-Type")!
    static let attempt = HTTPField.Name("X-Gateway-Delivery-Attempt")!

    static func sign(_ body: Data, secret: String, timestamp: Int) -> String {
        var message = Data("\(timestamp).".utf8)
        message.append(body)
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Data(secret.utf8)))
        return "t=\(timestamp),v1=" + Hex.lowercase(mac)
    }
}

/// Feeds the webhook queue from the event log and sends what is due, until graceful shutdown.
///
/// Several gateway instances on one store may each run one: the feeder's cursor moves by compare-and-set
/// and a delivery is claimed with a lease, so an event becomes one delivery per endpoint and an attempt is
/// made by one instance at a time. A delivery whose sender died mid-attempt is tried again when its lease
/// runs out: delivery is at least once, and receivers drop repeats by the event id.
struct WebhookDispatcher: Service {
    let store: any VerificationStore & WebhookQueueStore
    let settings: WebhookSettings
    let transport: any HTTPTransport
    let clock: any WallClock
    let logger: Logger

    private static let feedBatch = 200
    private static let sendBatch = 32

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let busy = await pump()
            if busy { continue }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: settings.pollInterval) }
        }
    }

    /// One round: turn new events into deliveries, then attempt those due. `true` when there was work, so
    /// the caller goes on without waiting.
    @discardableResult
    func pump() async -> Bool {
        do {
            let fed = try await feed()
            let sent = try await sendDue()
            return fed || sent
        } catch {
            logger.error("webhook queue failed", metadata: ["error.code": "\(error.code.rawValue)"])
            return false
        }
    }

    /// Turns the events after the cursor into deliveries. `true` when it moved the cursor.
    func feed() async throws(GatewayError) -> Bool {
        let cursor = try await store.webhookCursor()
        let events = try await store.events(after: cursor, limit: Self.feedBatch)
        guard let last = events.last else { return false }
        var deliveries: [WebhookDelivery] = []
        var records: [String: VerificationRecord] = [:]
        for sequenced in events {
            guard let type = WebhookEventType.of(sequenced.event) else { continue }
            let endpoints = settings.endpoints.filter { $0.accepts(type) }
            if endpoints.isEmpty { continue }
            let id = sequenced.event.verificationID
            if records[id] == nil { records[id] = try await store.record(id: id) }
            let payload = Self.payload(sequenced, type: type, record: records[id])
            for endpoint in endpoints {
                deliveries.append(
                    WebhookDelivery(
                        id: Self.newDeliveryID(), eventID: Self.eventID(sequenced.sequence), endpoint: endpoint.name,
                        type: type, verificationID: id, payload: payload, nextAttemptAt: clock.now,
                        createdAt: clock.now))
            }
        }
        _ = try await store.enqueue(deliveries, cursorFrom: cursor, to: last.sequence)
        return true
    }

    /// Attempts the deliveries that are due. `true` when there were some.
    func sendDue() async throws(GatewayError) -> Bool {
        let lease = Self.seconds(settings.timeout) + 30
        let due = try await store.claimDueWebhooks(at: clock.now, limit: Self.sendBatch, lease: lease)
        if due.isEmpty { return false }
        await withTaskGroup(of: Void.self) { group in
            for delivery in due {
                group.addTask { await attempt(delivery) }
            }
        }
        return true
    }

    func attempt(_ delivery: WebhookDelivery) async {
        var delivery = delivery
        guard let endpoint = settings.endpoints.first(where: { $0.name == delivery.endpoint }) else {
            // The endpoint left the configuration: keep the delivery, visible and replayable.
            delivery.state = .parked
            delivery.lastError = "endpoint `\(delivery.endpoint)` is no longer configured"
            try? await store.saveWebhook(delivery)
            return
        }
        delivery.attempts += 1
        let timestamp = Int(clock.now.timeIntervalSince1970)
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.userAgent] = "verification-gateway-webhooks"
        headers[WebhookSignature.header] = WebhookSignature.sign(
            delivery.payload, secret: endpoint.secret, timestamp: timestamp)
        headers[WebhookSignature.eventID] = delivery.eventID
        headers[WebhookSignature.eventType] = delivery.type.rawValue
        headers[WebhookSignature.attempt] = String(delivery.attempts)
        let request = TransportRequest(method: .post, url: endpoint.url, headerFields: headers, body: delivery.payload)
        var failure: String?
        do {
            let response = try await transport.send(request, timeout: settings.timeout)
            if !(200..<300).contains(response.status.code) { failure = "HTTP \(response.status.code)" }
        } catch {
            failure = "\(error)"
        }
        if let failure {
            delivery.lastError = String(failure.prefix(200))
            if delivery.attempts >= settings.retry.maxAttempts {
                delivery.state = .parked
                logger.warning(
                    "webhook parked after its last attempt",
                    metadata: [
                        "webhook.endpoint": "\(endpoint.name)", "webhook.event_id": "\(delivery.eventID)",
                        "attempts": "\(delivery.attempts)", "error": "\(delivery.lastError ?? "")",
                    ])
            } else {
                let wait = settings.retry.backoff(afterAttempts: delivery.attempts)
                delivery.nextAttemptAt = clock.now.addingTimeInterval(wait + Double.random(in: 0...(wait / 10)))
                logger.info(
                    "webhook attempt failed; will retry",
                    metadata: [
                        "webhook.endpoint": "\(endpoint.name)", "webhook.event_id": "\(delivery.eventID)",
                        "attempts": "\(delivery.attempts)", "error": "\(delivery.lastError ?? "")",
                    ])
            }
        } else {
            delivery.state = .delivered
            delivery.deliveredAt = clock.now
            delivery.lastError = nil
        }
        do {
            try await store.saveWebhook(delivery)
        } catch {
            // The claim runs out and the delivery is tried again: at least once.
            logger.error("webhook result not saved", metadata: ["webhook.event_id": "\(delivery.eventID)"])
        }
    }

    /// The JSON body of a webhook: what changed, with no phone number or code.
    static func payload(_ sequenced: SequencedEvent, type: WebhookEventType, record: VerificationRecord?) -> Data {
        let event = sequenced.event
        // A delivery event's own status is the message's, not the verification's: it goes under `delivery`.
        let isDelivery = event.kind == .delivery
        var data: [String: JSONValue] = [
            "verification_id": .string(event.verificationID),
            "status": .string((isDelivery ? nil : event.detail["status"]) ?? record?.status.rawValue ?? "pending"),
        ]
        if let channel = event.detail["channel"] ?? record?.channel.rawValue { data["channel"] = .string(channel) }
        if let previous = event.detail["previous_channel"] { data["previous_channel"] = .string(previous) }
        if isDelivery {
            let keys = ["provider", "message_id", "status", "vendor_status", "error_code", "error"]
            data["delivery"] = .object(
                Dictionary(
                    uniqueKeysWithValues: keys.compactMap { key in event.detail[key].map { (key, .string($0)) } }))
        } else if let reason = event.detail["reason"] ?? event.detail["error"] {
            data["reason"] = .string(reason)
        }
        if let record {
            if record.providerID != "-" { data["provider"] = .string(record.providerID) }
            if let region = record.destination.phoneNumber?.region { data["country"] = .string(region) }
            if let reference = record.clientReference { data["client_reference"] = .string(reference) }
        }
        let body: JSONValue = .object([
            "id": .string(eventID(sequenced.sequence)),
            "type": .string(type.rawValue),
            "created_at": .string(VerificationsController.timestamp(event.at)),
            "data": .object(data),
        ])
        return JSONResponse.encode(body)
    }

    static func eventID(_ sequence: Int64) -> String { "evt_\(sequence)" }

    static func newDeliveryID() -> String {
        var generator = SystemRandomNumberGenerator()
        return "whd_" + String(generator.next() as UInt64, radix: 16) + String(generator.next() as UInt64, radix: 16)
    }

    static func seconds(_ duration: Duration) -> TimeInterval {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
