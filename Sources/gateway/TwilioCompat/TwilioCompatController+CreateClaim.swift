import Foundation
import GatewayCore

/// A create runs under a claim on its (API key, service, `To`, channel), so that creates of one user at the
/// same instant (a double-tapped submit, two app servers retrying), on one instance or on several sharing the
/// store, start one verification and send once (docs/twilio-compat.md, "Creates at the same instant"). The
/// engine runs it (``VerificationService/startShared(_:)``); the front door says what the claim is, which
/// pending verification a create resends, and which verification left in the claim answers a create.
extension TwilioCompatController {
    /// One fingerprint for every create of a claim: a repeated create may differ in its other parameters.
    static let createClaimFingerprint = "twilio_compat.create"

    /// The claim of creates by `apiKeyID` in `serviceSID` to `destination` (E.164 or an address) on `channel`.
    /// Its scope cannot be an API key id, so no `Idempotency-Key` of the native API meets it.
    static func createClaimKey(serviceSID: String, channel: Channel, destination: String, apiKeyID: String?)
        -> IdempotencyKey
    {
        IdempotencyKey(
            scope: "twilio_compat.create:" + (apiKeyID ?? "-"), key: "\(serviceSID) \(channel.rawValue) \(destination)")
    }

    /// A create, one at a time per claim key: resends the pending verification, starts one, or (having
    /// waited for a create that held the claim) answers the verification that one left.
    func createOnce(
        _ start: StartVerification, service verifyService: TwilioCompatSettings.Service,
        context: GatewayRequestContext, clientIP: String?
    ) async throws -> VerificationRecord {
        let owner = VerificationsController.owner(context)
        let caller = StartCaller(
            apiKeyID: context.apiKey?.id, apiKeyName: context.apiKey?.name, clientIP: clientIP,
            keyCountries: context.apiKey?.countries,
            keyLimit: context.apiKey?.startsPerHour.map { RateLimit(limit: $0, window: 3600) })
        let shared = SharedStart(
            key: Self.createClaimKey(
                serviceSID: verifyService.sid, channel: start.channel, destination: start.destination.value,
                apiKeyID: context.apiKey?.id),
            fingerprint: Self.createClaimFingerprint, request: start, caller: caller, owner: owner,
            // A key's creates are all made under its claim, so a new claim means none is pending; a key that
            // sees every verification (admin, read) may meet one made another way, and reads first.
            claimsAhead: owner != nil,
            resendable: {
                // As Twilio: a create to a number that has a pending verification of this service on the same
                // channel sends that one again (same `sid`, one more `send_code_attempts`) rather than
                // starting another.
                let open = try await openVerification(
                    to: start.destination.value, service: verifyService, context: context, channel: start.channel)
                return open.flatMap { resendable($0) ? $0 : nil }
            },
            answers: { record in
                record.metadata[Self.serviceMetadataKey] == verifyService.sid && record.channel == start.channel
                    && (owner == nil || record.apiKeyID == owner)
            })
        return try await service.startShared(shared)
    }
}
