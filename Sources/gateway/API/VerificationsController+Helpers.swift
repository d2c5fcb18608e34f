import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird

import struct NIOCore.NIOTooManyBytesError

/// What every verification route shares: a record or a check's outcome as JSON, the client's address, the
/// key's owner, a bounded body, the Idempotency-Key.
extension VerificationsController {
    /// A verification, with the gateway's token and the vendor's tokens when this answer carries them.
    func render(_ outcome: CheckOutcome) -> JSONValue {
        var body = Self.render(outcome.record, now: service.clock.now)
        if outcome.carriesToken, outcome.record.status == .approved, case .object(var fields) = body {
            fields["token"] = .string(signer.sign(outcome.record, at: service.clock.now))
            fields["provider_tokens"] = .object(outcome.providerTokens)
            body = .object(fields)
        }
        return body
    }

    /// The client's address: the trusted proxy's header (its first, left-most entry) when one is
    /// configured, else the connection's peer.
    func clientIP(_ request: Request, context: GatewayRequestContext) -> String? {
        Self.clientIP(request, context: context, trustedProxyHeader: trustedProxyHeader)
    }

    /// The client's address, as ``clientIP(_:context:)`` reads it, for code outside the controller (the
    /// client-secret limit in ``APIKeyMiddleware``).
    static func clientIP(_ request: Request, context: GatewayRequestContext, trustedProxyHeader: HTTPField.Name?)
        -> String?
    {
        if let trustedProxyHeader {
            let forwarded = request.headers[trustedProxyHeader]?.split(separator: ",").first
                .map { $0.trimmingCharacters(in: .whitespaces) }
            return forwarded.flatMap { Self.isIPAddress($0) ? $0 : nil }
        }
        return context.remoteAddress
    }

    /// The key whose verifications the caller may see: its own, or every one with the admin scope.
    static func owner(_ context: GatewayRequestContext) -> String? {
        guard let key = context.apiKey, !key.scopes.contains(.admin), !key.scopes.contains(.read) else { return nil }
        return key.id
    }

    static func render(_ record: VerificationRecord, now: Date) -> JSONValue {
        var fields: [String: JSONValue] = [
            "id": .string(record.id),
            "status": .string(record.effectiveStatus(at: now).rawValue),
            "to": .string(record.destination.value),
            "channel": .string(record.channel.rawValue),
            "provider": .string(record.providerID),
            "content_language": record.contentLanguage.map(JSONValue.string) ?? .null,
            "expires_at": .string(timestamp(record.expiresAt)),
            "attempts_remaining": .number(Double(record.attemptsRemaining)),
            "sends": .number(Double(record.sends)),
            "created_at": .string(timestamp(record.createdAt)),
            "updated_at": .string(timestamp(record.updatedAt)),
            "experiment_arm": record.experimentArm.map(JSONValue.string) ?? .null,
            "experiment": record.experiment.map(JSONValue.string) ?? .null,
            "route": record.route.map(JSONValue.string) ?? .null,
            "test_number": .bool(record.isTestNumber),
            "client_ref": record.clientReference.map(JSONValue.string) ?? .null,
            "next_action": record.effectiveNextAction(at: now)?.json ?? .null,
            "fallback_channels": .array(record.fallbackChannels.map { .string($0.rawValue) }),
            "status_reason": record.statusReason.map(JSONValue.string) ?? .null,
        ]
        if !record.metadata.isEmpty { fields["metadata"] = .object(record.metadata.mapValues(JSONValue.string)) }
        if !record.risk.isEmpty { fields["risk"] = .object(record.risk.mapValues(JSONValue.string)) }
        return .object(fields)
    }

    static func timestamp(_ date: Date) -> String { VendorDate.iso8601(date) }

    static func body(of request: inout Request, context: GatewayRequestContext) async throws -> Data {
        try await body(of: &request, upTo: context.maxUploadSize)
    }

    static func body(of request: inout Request, upTo limit: Int) async throws -> Data {
        do {
            let buffer = try await request.collectBody(upTo: limit)
            return Data(buffer.readableBytesView)
        } catch is NIOTooManyBytesError {
            // Depending on how the body arrived, the limit surfaces as NIO's error or Hummingbird's 413.
            throw HTTPError(.contentTooLarge)
        }
    }

    static func idempotencyKey(_ request: Request, context: GatewayRequestContext) throws(GatewayError)
        -> IdempotencyKey?
    {
        guard let value = request.headers[.idempotencyKey] else { return nil }
        guard (1...255).contains(value.count), value.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
            throw GatewayError.invalidRequest("`Idempotency-Key` must be 1 to 255 visible ASCII characters.")
        }
        return IdempotencyKey(scope: context.apiKey?.id ?? "-", key: value)
    }
}
