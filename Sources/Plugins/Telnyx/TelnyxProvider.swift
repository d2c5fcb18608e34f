import Foundation
import GatewayCore
import HTTPTypes
import Logging

/// Telnyx's calls, by the names its error table and logs use; only a trigger may have sent a code.
extension VendorOperation {
    static let trigger = VendorOperation("trigger", sendMayHaveHappened: true)
    static let verify = VendorOperation("verify")
    static let retrieve = VendorOperation("retrieve")
}

/// Telnyx Verify (API v2) behind the gateway's provider contract (docs/telnyx.md): sms, call (voice), flash call
/// and WhatsApp, each a `POST /verifications/{type}` on a Verify profile; codes checked by verification id or,
/// with `verify_by: phone_number`, by number and profile. Telnyx has no cancel and no resend: a resend is a new
/// verification, whose id replaces the old one. Signed webhooks keep the status current. Every failure leaves
/// as a ``GatewayError`` chosen by ``TelnyxErrorMapping``.
/// Telnyx has no cancel call: the provider is no ``CancelingProvider``.
struct TelnyxProvider: VendorHTTPProvider, ResendingProvider, StatusReportingProvider, CallbackReceivingProvider {
    /// What the plugin keeps with a verification: its Telnyx type and profile (a check by number names it).
    struct State: Codable, Sendable, Equatable {
        var type: String
        var profile: String
    }

    let configuration: TelnyxConfiguration
    /// The kit's pipeline; an error answer, 5xx included, never claims a send (Telnyx answers before it acts).
    let client: VendorHTTPClient

    init(context: ProviderContext) throws(ConfigurationError) {
        configuration = try TelnyxConfiguration(settings: context.settings, providerID: context.providerID)
        client = VendorHTTPClient(vendor: "Telnyx", context: context, baseURL: configuration.baseURL)
    }

    /// Telnyx documents no wrong-code limit (docs/vendors/telnyx.md §6): the gateway's own limit applies. Without
    /// `public_key` no webhook can be verified, so callbacks are withheld.
    var capabilities: ProviderCapabilities {
        ProviderCapabilities(
            channels: Set(TelnyxWire.channels.keys), resendKeepsCode: false, resendCanChangeChannel: true,
            withheld: configuration.publicKey == nil ? [.callbacks] : [])
    }

    func start(_ request: StartVerification) async throws(GatewayError) -> ProviderStartResult {
        try await trigger(request.channel, to: request.destination)
    }

    /// A new verification on the asked channel (or the same one).
    func resend(_ verification: ProviderVerification, request: ResendRequest) async throws(GatewayError)
        -> ProviderStartResult
    {
        try await trigger(request.channel ?? verification.channel, to: verification.destination)
    }

    func check(_ verification: ProviderVerification, code: String) async throws(GatewayError) -> ProviderCheckResult {
        // Flash-call codes are caller-ID digits (up to 15); the others Telnyx's 4–10 character codes.
        guard (4...15).contains(code.count), code.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw GatewayError.invalidRequest("The code must be 4 to 15 letters or digits.")
        }
        let reference = try reference(of: verification)
        var path = "/verifications/\(reference)/actions/verify"
        var body = TelnyxWire.VerifyCode(code: code)
        if configuration.verifyBy == .phoneNumber {
            // `+E.164` in the path as is (§9): `+` is a valid path character.
            path = "/verifications/by_phone_number/\(verification.destination.value)/actions/verify"
            body.verifyProfileId = state(of: verification).profile
        }
        let response: TransportResponse
        do {
            response = try await call(.post, path, json: body, operation: .verify)
        } catch  where error.code == .notFound {
            // Unknown, finished and expired alike (§11.3): the verification's status tells which.
            guard let found = try? await retrieve(reference), found.status == "expired" else { throw error }
            throw GatewayError(.expired, TelnyxErrorMapping.table.summary(of: .expired) + ".", vendor: error.vendor)
        }
        switch try decode(TelnyxWire.CodeResult.self, from: response, operation: .verify).responseCode {
        case "accepted": return ProviderCheckResult(status: .approved)
        case "rejected": return ProviderCheckResult(status: .pending)
        case "expired": throw GatewayError(.expired, TelnyxErrorMapping.table.summary(of: .expired) + ".")
        case "max_attempts_exceeded":
            throw GatewayError(
                .maxAttemptsReached, TelnyxErrorMapping.table.summary(of: .maxAttemptsReached) + ".",
                attemptsRemaining: 0)
        default: throw client.malformed(.verify, httpStatus: response.status.code)
        }
    }

    func status(_ verification: ProviderVerification) async throws(GatewayError) -> VerificationChange {
        let found = try await retrieve(try reference(of: verification))
        return VerificationChange(status: Self.status(found.status), reason: found.status)
    }

    /// Checks the Ed25519 signature over `timestamp|body` and the timestamp's age first, then reads the payload's
    /// verification status (`verify.*` events and `verification.complete`).
    func handleCallback(_ callback: VendorCallback, lookup: VerificationLookup) async throws(GatewayError)
        -> CallbackReply
    {
        guard let key = configuration.publicKey else {
            throw GatewayError(.notFound, "Provider \(id) takes no callbacks (no public_key).")
        }
        if let problem = TelnyxSignature.problem(
            signature: callback.headerFields[TelnyxWire.signatureHeader],
            timestamp: callback.headerFields[TelnyxWire.timestampHeader], body: callback.body, publicKey: key,
            now: clock.now)
        {
            throw client.refusedCallback(problem)
        }
        guard let event = (try? SnakeCaseJSON.decoder.decode(TelnyxWire.Webhook.self, from: callback.body))?.data,
            event.eventType.hasPrefix("verify.") || event.eventType == "verification.complete"
        else { throw GatewayError.invalidRequest("The callback body is not a Telnyx Verify webhook.") }
        let target = ProviderUpdate.Target.reference(event.payload.id)
        guard try await lookup(target) != nil, let status = Self.status(event.payload.status), status != .pending else {
            return CallbackReply(updates: [])
        }
        let change = VerificationChange(status: status, reason: event.payload.deliveryStatus ?? event.payload.status)
        return CallbackReply(updates: [ProviderUpdate(target: target, change: change)])
    }

    func trigger(_ channel: Channel, to destination: Destination) async throws(GatewayError) -> ProviderStartResult {
        guard let type = TelnyxWire.channels[channel] else {
            throw GatewayError.unsupported(channel, by: "Telnyx Verify")
        }
        guard case .phone(let number) = destination else {
            throw GatewayError.invalidRequest("Telnyx Verify sends to phone numbers only.")
        }
        let profile = configuration.profile(for: type)
        let body = TelnyxWire.Trigger(
            phoneNumber: number.e164, verifyProfileId: profile, timeoutSecs: configuration.timeoutSecs)
        let response = try await call(.post, "/verifications/" + type, json: body, operation: .trigger)
        let started = try decode(TelnyxWire.Verification.self, from: response, operation: .trigger)
        let reference = try client.required(started.id, where: TelnyxConfiguration.isUUID, .trigger, in: response)
        return ProviderStartResult(
            reference: reference, state: try ProviderState(State(type: type, profile: profile)),
            expiresAt: started.timeoutSecs.map { clock.now.addingTimeInterval(TimeInterval($0)) }, channel: channel)
    }

    func retrieve(_ reference: String) async throws(GatewayError) -> TelnyxWire.Verification {
        let response = try await call(.get, "/verifications/" + reference, operation: .retrieve)
        return try decode(TelnyxWire.Verification.self, from: response, operation: .retrieve)
    }

    /// Sends one call with the bearer key and a JSON body (or none); every answer outside 2xx is mapped.
    func call(
        _ method: HTTPRequest.Method, _ path: String, json: (any Encodable)? = nil, operation: VendorOperation
    ) async throws(GatewayError) -> TransportResponse {
        var headers: HTTPFields = [.authorization: "Bearer " + configuration.apiKey, .accept: "application/json"]
        var body = Data()
        if let json {
            headers[.contentType] = "application/json"
            body = try client.snakeCaseJSON(json)
        }
        return try await client.send(method, path, headers: headers, body: body, operation: operation) { answer in
            TelnyxErrorMapping.map(
                status: answer.status, errors: try? JSONDecoder().decode(TelnyxWire.Errors.self, from: answer.body),
                operation: operation, retryAfter: answer.retryAfter, providerID: id)
        }
    }

    /// The `data` of a 2xx answer, or ``VendorHTTPClient/malformed(_:httpStatus:)``.
    func decode<T: Codable & Sendable>(_ type: T.Type, from response: TransportResponse, operation: VendorOperation)
        throws(GatewayError) -> T
    {
        try client.decodeSnakeCase(TelnyxWire.DataEnvelope<T>.self, from: response, operation: operation).data
    }

    /// The stored verification id; anything but a uuid never reaches a URL path.
    func reference(of verification: ProviderVerification) throws(GatewayError) -> String {
        try client.reference(of: verification, where: TelnyxConfiguration.isUUID)
    }

    func state(of verification: ProviderVerification) -> State {
        (try? verification.state.decode(State.self))
            ?? State(type: TelnyxWire.channels[verification.channel] ?? "sms", profile: configuration.verifyProfileID)
    }

    /// The gateway status of a Telnyx `status` (§4, the 2024 values too); `nil` for unknown ones.
    static func status(_ telnyx: String?) -> VerificationStatus? {
        switch telnyx {
        case "pending": return .pending
        case "accepted": return .approved
        case "expired", "timed_out": return .expired
        case "invalid", "error", "sms_delivery_failed", "number_unreachable", "invalid_destination": return .failed
        default: return nil
        }
    }
}
