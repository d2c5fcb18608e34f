import Foundation
import GatewayCore
import Logging

/// Twilio Verify v2 (OTP over SMS, voice, WhatsApp and email; Verify Push in `TwilioProvider+Push.swift`):
/// form-encoded PascalCase parameters, Basic auth, snake_case JSON answers.
struct TwilioProvider: VendorHTTPProvider, ResendingProvider, CancelingProvider, StatusReportingProvider {
    let configuration: TwilioConfiguration
    let client: VendorHTTPClient
    /// `Basic` and the account SID and auth token in base64: the same on every call, so written once.
    let authorization: String

    /// What Twilio Verify v2 offers: for OTP a resend is a start for the same `To`, which Twilio answers
    /// with the same verification and code, on any of the four channels; a push completes without a code,
    /// by the webhook at `/callbacks/<id>` or a refresh.
    static let declaredCapabilities = ProviderCapabilities(
        channels: [.sms, .voice, .whatsapp, .email, .push], resendKeepsCode: true, resendCanChangeChannel: true,
        completesWithoutCode: [.push])

    var capabilities: ProviderCapabilities { Self.declaredCapabilities }

    init(context: ProviderContext) throws(ConfigurationError) {
        self.configuration = try TwilioConfiguration(settings: context.settings, providerID: context.providerID)
        self.client = VendorHTTPClient(vendor: "Twilio", context: context, baseURL: configuration.baseURL)
        self.authorization = VendorHTTPClient.basicAuthorization(configuration.accountSID, configuration.authToken)
    }

    // MARK: operations

    func start(_ request: StartVerification) async throws(GatewayError) -> ProviderStartResult {
        if request.channel == .push { return try await startPush(request) }
        let channelName = try Self.twilioChannel(for: request.channel, destination: request.destination)
        return try await createVerification(
            destination: request.destination, channel: request.channel, channelName: channelName,
            locale: TwilioLocale.choose(from: request.locales), operation: .start)
    }

    /// Twilio resends by starting again for the same `To`: while the verification is pending it keeps
    /// its SID and its code and records another send attempt, on the new channel if one is asked for.
    func resend(_ verification: ProviderVerification, request: ResendRequest) async throws(GatewayError)
        -> ProviderStartResult
    {
        if verification.channel == .push { return try await resendPush(verification, request: request) }
        let channel = request.channel ?? verification.channel
        let channelName = try Self.twilioChannel(for: channel, destination: verification.destination)
        return try await createVerification(
            destination: verification.destination, channel: channel, channelName: channelName,
            locale: TwilioLocale.choose(from: verification.locales), operation: .resend)
    }

    func check(_ verification: ProviderVerification, code: String) async throws(GatewayError) -> ProviderCheckResult {
        guard verification.channel != .push else {
            throw GatewayError(
                .invalidState, "A push completes on the device, never with a code; read it with ?refresh=true.")
        }
        guard Self.isWellFormed(code: code) else {
            throw GatewayError.invalidRequest("The code must be 4 to 10 letters or digits.")
        }
        let sid = try reference(of: verification)
        let response = try await call(
            .post, path: servicePath + "/VerificationCheck", form: [("VerificationSid", sid), ("Code", code)],
            operation: .check)
        let resource = try decode(response, operation: .check)
        guard let name = resource.status, let status = TwilioWire.status(named: name) else {
            throw client.malformed(.check, httpStatus: response.status.code)
        }
        return ProviderCheckResult(status: status)
    }

    func cancel(_ verification: ProviderVerification) async throws(GatewayError) {
        // Twilio has no backend cancel for a challenge: it is canceled in the gateway only, and expires.
        guard verification.channel != .push else { return }
        let sid = try reference(of: verification)
        _ = try await call(
            .post, path: verificationsPath + "/" + sid, form: [("Status", "canceled")], operation: .cancel)
    }

    func status(_ verification: ProviderVerification) async throws(GatewayError) -> VerificationChange {
        if verification.channel == .push { return try await pushStatus(verification) }
        let sid = try reference(of: verification)
        let response = try await call(.get, path: verificationsPath + "/" + sid, form: nil, operation: .status)
        let resource = try decode(response, operation: .status)
        guard let name = resource.status, let status = TwilioWire.status(named: name) else {
            throw client.malformed(.status, httpStatus: response.status.code)
        }
        let channel = resource.channel.flatMap(TwilioWire.channel(named:))
        return VerificationChange(status: status, channel: channel, reason: status == .pending ? nil : name)
    }

    /// A start whose gateway instance died during the call (docs/architecture.md §9.2): Twilio keeps one pending
    /// verification per `To` and reads `GET …/Verifications/{To}` as it, the one the dead start made or sent
    /// again. None pending (404) is final once the dead call can no longer reach Twilio; a push is unknown.
    func lookUpStart(_ lookup: StartLookup) async throws(GatewayError) -> StartLookupResult {
        guard lookup.channel != .push,
            (try? Self.twilioChannel(for: lookup.channel, destination: lookup.destination)) != nil
        else { return .unknown }
        let settled = lookup.callSettled(at: client.clock.now, requestTimeout: client.timeout)
        let response: TransportResponse
        do {
            response = try await call(
                .get, path: verificationsPath + "/" + Self.pathSegment(lookup.destination.value), form: nil,
                operation: .lookup)
        } catch let error where error.code == .notFound {
            return settled ? .notFound : .notYet
        }
        let resource = try decode(response, operation: .lookup)
        guard let sid = resource.sid, TwilioConfiguration.matches(sid, prefixes: ["VE"]), let name = resource.status,
            let status = TwilioWire.status(named: name)
        else { throw client.malformed(.lookup, httpStatus: response.status.code) }
        // Canceled, or out of checks: nothing pending for the number, so the dead start made nothing.
        guard status == .pending else { return settled ? .notFound : .notYet }
        let now = client.clock.now
        let created = TwilioWire.parseDate(resource.dateCreated).map { min($0, now) } ?? now
        client.logger.info(
            "twilio found the pending verification of a dead start's number",
            metadata: ["provider.id": "\(id)", "to": "\(lookup.destination.masked)"])
        return .found(
            ProviderStartResult(
                reference: sid, status: .pending, expiresAt: created.addingTimeInterval(TwilioWire.validity),
                channel: resource.channel.flatMap(TwilioWire.channel(named:)) ?? lookup.channel))
    }

    /// `value` as one URL path segment: an E.164 number's `+` and an address's `@` percent-encoded, as
    /// Twilio's helper libraries send them.
    static func pathSegment(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }

    // MARK: helpers

    var servicePath: String { "/v2/Services/" + configuration.serviceSID }
    private var verificationsPath: String { servicePath + "/Verifications" }

    private func createVerification(
        destination: Destination, channel: Channel, channelName: String, locale: String?, operation: VendorOperation
    ) async throws(GatewayError) -> ProviderStartResult {
        var form = [("To", destination.value), ("Channel", channelName)]
        if let locale { form.append(("Locale", locale)) }
        let response: TransportResponse
        do {
            response = try await call(.post, path: verificationsPath, form: form, operation: operation)
        } catch let error where error.code == .notFound {
            // A 404 to a create is not about a verification. Twilio documents it for an unsupported
            // Locale and advises sending again without one; otherwise the service SID is unknown.
            if locale != nil {
                client.logger.info(
                    "twilio refused the locale; sending again without it",
                    metadata: ["provider.id": "\(id)", "twilio.operation": "\(operation)"])
                return try await createVerification(
                    destination: destination, channel: channel, channelName: channelName, locale: nil,
                    operation: operation)
            }
            throw Self.unknownService(error)
        }
        // Twilio accepted the send: from here on a broken answer may hide a delivered code.
        let resource = try decode(response, operation: operation)
        guard let sid = resource.sid, TwilioConfiguration.matches(sid, prefixes: ["VE"]) else {
            throw client.malformed(operation, httpStatus: response.status.code)
        }
        let now = client.clock.now
        // A start that reuses a pending verification keeps its original window; never promise more.
        let created = TwilioWire.parseDate(resource.dateCreated).map { min($0, now) } ?? now
        client.logger.debug(
            "twilio verification sent",
            metadata: [
                "provider.id": "\(id)", "twilio.operation": "\(operation)", "channel": "\(channel.rawValue)",
                "to": "\(destination.masked)", "locale": "\(locale ?? "-")",
            ])
        return ProviderStartResult(
            reference: sid,
            status: resource.status.flatMap(TwilioWire.status(named:)) ?? .pending,
            expiresAt: created.addingTimeInterval(TwilioWire.validity),
            contentLanguage: locale,
            channel: channel)
    }

    /// A create answered 404: the configured service is unknown, a configuration problem to fail over from.
    static func unknownService(_ error: GatewayError) -> GatewayError {
        var error = error
        error.code = .providerRejected
        error.message = "Twilio does not know the configured Verify service (HTTP 404)."
        return error
    }

    static func twilioChannel(for channel: Channel, destination: Destination) throws(GatewayError) -> String {
        guard let name = TwilioWire.channelName(for: channel) else {
            throw .unsupported(channel, by: "Twilio Verify")
        }
        try destination.requireFits(channel)
        return name
    }

    static func isWellFormed(code: String) -> Bool {
        TwilioWire.codeLengths.contains(code.count) && code.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
    }

    private func reference(of verification: ProviderVerification) throws(GatewayError) -> String {
        try client.reference(of: verification) { TwilioConfiguration.matches($0, prefixes: ["VE"]) }
    }
}
