import Foundation
import GatewayCore
import Hummingbird

/// `/v1/admin/webhooks/…`: the status-webhook queue, for operators. A parked delivery (every attempt
/// failed) stays here until it is replayed.
struct WebhooksAdminController: Sendable {
    let queue: any WebhookQueueStore
    let clock: any WallClock
    /// The configured endpoints.
    var endpoints: [WebhookEndpoint] = []

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.get("webhooks/deliveries", use: list)
        group.post("webhooks/deliveries/{id}/replay", use: replay)
        group.get("webhooks/endpoints", use: listEndpoints)
        group.post("webhooks/endpoints/{name}/enable", use: enable)
    }

    /// `GET /v1/admin/webhooks/endpoints`: each configured endpoint, how it signs, its Ed25519 public key, and
    /// whether a `410 Gone` disabled it.
    @Sendable func listEndpoints(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let disabled = try await queue.disabledWebhookEndpoints()
        return JSONResponse.response(["endpoints": .array(endpoints.map { Self.json($0, disabled: disabled[$0.name]) })]
        )
    }

    /// `POST /v1/admin/webhooks/endpoints/{name}/enable`: an endpoint its receiver disabled (`410`) receives events
    /// again from now on; the deliveries parked meanwhile can be replayed one by one.
    @Sendable func enable(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let name = try context.parameters.require("name")
        guard let endpoint = endpoints.first(where: { $0.name == name }) else {
            throw GatewayError(.notFound, "No webhook endpoint is configured with this name.")
        }
        guard try await queue.enableWebhookEndpoint(name) else {
            throw GatewayError(.invalidState, "This webhook endpoint is not disabled.")
        }
        return JSONResponse.response(Self.json(endpoint, disabled: nil))
    }

    static func json(_ endpoint: WebhookEndpoint, disabled: DisabledWebhookEndpoint?) -> JSONValue {
        let signing: String
        let secrets: Int
        switch endpoint.signing {
        case .legacy:
            signing = "legacy"
            secrets = 1
        case .standard(let list, _):
            signing = "standard"
            secrets = list.count
        }
        return .object([
            "name": .string(endpoint.name),
            "url": .string(endpoint.url.absoluteString),
            "events": endpoint.events.map { .array($0.map(\.rawValue).sorted().map(JSONValue.string)) } ?? .null,
            "signing": .string(signing),
            "secrets": .number(Double(secrets)),
            "public_key": endpoint.publicKey.map(JSONValue.string) ?? .null,
            "format": .string(endpoint.format.rawValue),
            "state": .string(disabled == nil ? "active" : "disabled"),
            "disabled_at": disabled.map { .string(VerificationsController.timestamp($0.at)) } ?? .null,
            "disabled_reason": disabled.map { .string($0.reason) } ?? .null,
        ])
    }

    /// `GET /v1/admin/webhooks/deliveries?state=parked&limit=50`: newest first.
    @Sendable func list(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        var state: WebhookDelivery.State?
        if let raw = request.uri.queryParameters.get("state") {
            guard let parsed = WebhookDelivery.State(rawValue: raw) else {
                throw GatewayError.invalidRequest("`state` must be pending, delivered or parked.")
            }
            state = parsed
        }
        var limit = 50
        if let raw = request.uri.queryParameters.get("limit") {
            guard let n = Int(raw), (1...500).contains(n) else {
                throw GatewayError.invalidRequest("`limit` must be a whole number from 1 to 500.")
            }
            limit = n
        }
        let deliveries = try await queue.webhookDeliveries(state: state, limit: limit)
        return JSONResponse.response(["deliveries": .array(deliveries.map(Self.json))])
    }

    /// `POST /v1/admin/webhooks/deliveries/{id}/replay`: sends a parked (or delivered) delivery again, with
    /// a fresh attempt count; its event id is unchanged, so a receiver that has it can drop it.
    @Sendable func replay(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let id = try context.parameters.require("id")
        guard var delivery = try await queue.webhookDelivery(id: id) else {
            throw GatewayError(.notFound, "No webhook delivery has this id.")
        }
        guard delivery.state != .pending else {
            throw GatewayError(.invalidState, "This delivery is still queued; it will be attempted again by itself.")
        }
        delivery.state = .pending
        delivery.attempts = 0
        delivery.nextAttemptAt = clock.now
        delivery.lastError = nil
        delivery.deliveredAt = nil
        try await queue.saveWebhook(delivery)
        return JSONResponse.response(Self.json(delivery), status: .accepted)
    }

    static func json(_ delivery: WebhookDelivery) -> JSONValue {
        let payload = (try? JSONDecoder().decode(JSONValue.self, from: delivery.payload)) ?? .null
        return .object([
            "id": .string(delivery.id),
            "event_id": .string(delivery.eventID),
            "endpoint": .string(delivery.endpoint),
            "type": .string(delivery.type.rawValue),
            "verification_id": .string(delivery.verificationID),
            "state": .string(delivery.state.rawValue),
            "attempts": .number(Double(delivery.attempts)),
            "next_attempt_at": delivery.state == .pending
                ? .string(VerificationsController.timestamp(delivery.nextAttemptAt)) : .null,
            "last_error": delivery.lastError.map(JSONValue.string) ?? .null,
            "created_at": .string(VerificationsController.timestamp(delivery.createdAt)),
            "delivered_at": delivery.deliveredAt.map { .string(VerificationsController.timestamp($0)) } ?? .null,
            "payload": payload,
        ])
    }
}
