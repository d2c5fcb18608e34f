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
    /// How its requests are signed, with the keys from the environment (never from the file).
    var signing: Signing
    /// The event types it receives; nil: all.
    var events: Set<WebhookEventType>?
    /// The body's shape.
    var format: Format = .json

    /// The signing scheme and its keys.
    enum Signing: Sendable, Equatable {
        /// Standard Webhooks: `webhook-id`, `webhook-timestamp` and `webhook-signature` with a `v1,<base64>`
        /// HMAC-SHA256 per secret (each a `whsec_` secret's bytes; several during a rotation) and, with an Ed25519
        /// key (its 32-byte seed), a `v1a,<base64>` signature.
        case standard(secrets: [Data], ed25519Seed: Data?)
        /// The gateway's own scheme: `X-Gateway-Signature: t=…,v1=<hex HMAC-SHA256 of "t.body">`.
        case legacy(secret: String)
    }

    /// The body: the gateway's JSON event, or a CloudEvents 1.0 structured event around the same `data`.
    enum Format: String, Sendable, Equatable, CaseIterable {
        case json
        case cloudevents
    }

    func accepts(_ type: WebhookEventType) -> Bool { events?.contains(type) ?? true }

    /// The Ed25519 public key receivers verify `v1a` signatures with, as Standard Webhooks writes it
    /// (`whpk_` and the key's 32 bytes in Base64); nil without a key.
    var publicKey: String? {
        guard case .standard(_, let seed?) = signing,
            let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: seed)
        else { return nil }
        return "whpk_" + key.publicKey.rawRepresentation.base64EncodedString()
    }
}

/// `webhooks:` in the configuration.
struct WebhookSettings: Sendable, Equatable {
    var endpoints: [WebhookEndpoint] = []
    var retry = WebhookRetryPolicy()
    /// How often the queue is looked at when it was empty.
    var pollInterval: Duration = .milliseconds(500)
    /// Deadline for one delivery attempt.
    var timeout: Duration = .seconds(10)
    /// CloudEvents' `source` (a URI reference) and the prefix of `type` (`com.example` makes
    /// `com.example.verification.approved`); nil: from `public_base_url` when it is set
    /// (`https://gateway.example.com` gives source `https://gateway.example.com` and prefix `com.example.gateway`),
    /// else `/verification-gateway` and `verification-gateway`.
    var cloudEventsSource: String?
    var cloudEventsTypePrefix: String?
}

/// Signs a webhook. The legacy scheme: `X-Gateway-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret,
/// "<t>.<body>")>`. Standard Webhooks: `webhook-signature: v1,<base64 HMAC-SHA256(key, "<id>.<t>.<body>")> …`,
/// one entry per active secret and a `v1a,<base64 Ed25519 signature>` of the same content with a signing key. A
/// receiver recomputes it over the raw body and refuses a timestamp older than it tolerates (five minutes is
/// usual), which stops replays of a captured request.
enum WebhookSignature {
    static let header = HTTPField.Name("X-Gateway-Signature")!
    static let eventID = HTTPField.Name("X-Gateway-Event-Id")!
    static let eventType = HTTPField.Name("X-Gateway-Event-Type")!
    static let attempt = HTTPField.Name("X-Gateway-Delivery-Attempt")!
    static let webhookID = HTTPField.Name("webhook-id")!
    static let webhookTimestamp = HTTPField.Name("webhook-timestamp")!
    static let webhookSignature = HTTPField.Name("webhook-signature")!

    static func sign(_ body: Data, secret: String, timestamp: Int) -> String {
        var message = Data("\(timestamp).".utf8)
        message.append(body)
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Data(secret.utf8)))
        return "t=\(timestamp),v1=" + Hex.lowercase(mac)
    }

    /// The `webhook-signature` value of Standard Webhooks: `v1,…` per secret, then `v1a,…` with a key.
    static func standard(_ body: Data, id: String, timestamp: Int, secrets: [Data], ed25519Seed: Data?) -> String {
        var content = Data("\(id).\(timestamp).".utf8)
        content.append(body)
        var signatures = secrets.map { secret in
            "v1,"
                + Data(HMAC<SHA256>.authenticationCode(for: content, using: SymmetricKey(data: secret)))
                .base64EncodedString()
        }
        if let seed = ed25519Seed, let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: seed),
            let signature = try? key.signature(for: content)
        {
            signatures.append("v1a," + signature.base64EncodedString())
        }
        return signatures.joined(separator: " ")
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
        // A disabled endpoint (its receiver answered 410) gets nothing queued until it is enabled again.
        let disabled = try await store.disabledWebhookEndpoints()
        var deliveries: [WebhookDelivery] = []
        var records: [String: VerificationRecord] = [:]
        for sequenced in events {
            guard let type = WebhookEventType.of(sequenced.event) else { continue }
            let endpoints = settings.endpoints.filter { $0.accepts(type) && disabled[$0.name] == nil }
            if endpoints.isEmpty { continue }
            let id = sequenced.event.verificationID
            if records[id] == nil { records[id] = try await store.record(id: id) }
            var payloads: [WebhookEndpoint.Format: Data] = [:]
            for endpoint in endpoints {
                let payload =
                    payloads[endpoint.format]
                    ?? Self.payload(
                        sequenced, type: type, record: records[id], format: endpoint.format, settings: settings)
                payloads[endpoint.format] = payload
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
        let disabled = try await store.disabledWebhookEndpoints()
        await withTaskGroup(of: Void.self) { group in
            for delivery in due {
                group.addTask { await attempt(delivery, disabled: disabled[delivery.endpoint]) }
            }
        }
        return true
    }

    /// The request of one attempt at `delivery` to `endpoint`, signed now.
    func request(_ delivery: WebhookDelivery, to endpoint: WebhookEndpoint) -> TransportRequest {
        let timestamp = Int(clock.now.timeIntervalSince1970)
        var headers = HTTPFields()
        headers[.contentType] =
            endpoint.format == .cloudevents ? "application/cloudevents+json; charset=utf-8" : "application/json"
        headers[.userAgent] = "verification-gateway-webhooks"
        switch endpoint.signing {
        case .legacy(let secret):
            headers[WebhookSignature.header] = WebhookSignature.sign(
                delivery.payload, secret: secret, timestamp: timestamp)
            headers[WebhookSignature.eventID] = delivery.eventID
        case .standard(let secrets, let seed):
            // The event id: the same on every attempt and replay, so a receiver drops repeats by it.
            headers[WebhookSignature.webhookID] = delivery.eventID
            headers[WebhookSignature.webhookTimestamp] = String(timestamp)
            headers[WebhookSignature.webhookSignature] = WebhookSignature.standard(
                delivery.payload, id: delivery.eventID, timestamp: timestamp, secrets: secrets, ed25519Seed: seed)
        }
        headers[WebhookSignature.eventType] = delivery.type.rawValue
        headers[WebhookSignature.attempt] = String(delivery.attempts)
        return TransportRequest(method: .post, url: endpoint.url, headerFields: headers, body: delivery.payload)
    }

    func attempt(_ delivery: WebhookDelivery, disabled: DisabledWebhookEndpoint? = nil) async {
        var delivery = delivery
        guard let endpoint = settings.endpoints.first(where: { $0.name == delivery.endpoint }) else {
            // The endpoint left the configuration: keep the delivery, visible and replayable.
            delivery.state = .parked
            delivery.lastError = "endpoint `\(delivery.endpoint)` is no longer configured"
            try? await store.saveWebhook(delivery)
            return
        }
        if let disabled {
            // Queued before the endpoint was disabled: parked, to be replayed once it is enabled again.
            delivery.state = .parked
            delivery.lastError = String("endpoint disabled: \(disabled.reason)".prefix(200))
            try? await store.saveWebhook(delivery)
            return
        }
        delivery.attempts += 1
        let request = request(delivery, to: endpoint)
        var failure: String?
        var gone = false
        do {
            let response = try await transport.send(request, timeout: settings.timeout)
            if !(200..<300).contains(response.status.code) { failure = "HTTP \(response.status.code)" }
            gone = response.status.code == 410
        } catch {
            failure = "\(error)"
        }
        if gone {
            // Standard Webhooks: 410 Gone means the receiver wants nothing more. The endpoint is disabled for
            // every instance (recorded in the store), this delivery parked; an operator enables it again.
            let reason = "HTTP 410 Gone from the receiver"
            do {
                try await store.disableWebhookEndpoint(endpoint.name, at: clock.now, reason: reason)
            } catch {
                logger.error("webhook endpoint not disabled", metadata: ["webhook.endpoint": "\(endpoint.name)"])
            }
            logger.warning(
                "webhook endpoint disabled: its receiver answered 410 Gone",
                metadata: ["webhook.endpoint": "\(endpoint.name)", "webhook.event_id": "\(delivery.eventID)"])
            delivery.state = .parked
            delivery.lastError = "HTTP 410; endpoint disabled"
            try? await store.saveWebhook(delivery)
            return
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

    /// The body of a webhook in `format`: the gateway's JSON event, or a CloudEvents 1.0 structured event whose
    /// `data` is the same.
    static func payload(
        _ sequenced: SequencedEvent, type: WebhookEventType, record: VerificationRecord?,
        format: WebhookEndpoint.Format, settings: WebhookSettings
    ) -> Data {
        guard format == .cloudevents else { return payload(sequenced, type: type, record: record) }
        let source = settings.cloudEventsSource ?? "/verification-gateway"
        let prefix = settings.cloudEventsTypePrefix ?? "verification-gateway"
        let body: JSONValue = .object([
            "specversion": .string("1.0"),
            "id": .string(eventID(sequenced.sequence)),
            "source": .string(source),
            "type": .string(prefix + "." + type.rawValue),
            "time": .string(VerificationsController.timestamp(sequenced.event.at)),
            "subject": .string(sequenced.event.verificationID),
            "datacontenttype": .string("application/json"),
            "data": .object(data(sequenced, record: record)),
        ])
        return JSONResponse.encode(body)
    }

    /// The JSON body of a webhook: what changed, with no phone number or code.
    static func payload(_ sequenced: SequencedEvent, type: WebhookEventType, record: VerificationRecord?) -> Data {
        let body: JSONValue = .object([
            "id": .string(eventID(sequenced.sequence)),
            "type": .string(type.rawValue),
            "created_at": .string(VerificationsController.timestamp(sequenced.event.at)),
            "data": .object(data(sequenced, record: record)),
        ])
        return JSONResponse.encode(body)
    }

    /// A webhook's `data`: the verification's id, status, channel, provider, country and reference, and what the
    /// event says (a reason, a delivery receipt).
    static func data(_ sequenced: SequencedEvent, record: VerificationRecord?) -> [String: JSONValue] {
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
            if !record.risk.isEmpty { data["risk"] = .object(record.risk.mapValues(JSONValue.string)) }
        }
        return data
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
