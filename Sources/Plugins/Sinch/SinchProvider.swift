import Foundation
import GatewayCore
import Logging

/// Sinch Verification v1: application-signed requests (or Basic). A start sends the gateway's id as `reference`
/// and the caller's languages as `Accept-Language` (Sinch's choice comes back in `Content-Language`). A flash call
/// answers `intercept_call` and is checked with the intercepted number; seamless opens a URL over cellular and
/// completes without a code. Sinch has no resend: a resend starts again (Sinch aborts the old one).
struct SinchProvider: VendorHTTPProvider, ResendingProvider, StatusReportingProvider, ActionProvider {
    let configuration: SinchConfiguration
    let client: VendorHTTPClient

    /// Sinch has no cancel call (docs/vendors/sinch.md §2), so the provider is no ``CancelingProvider``: a cancel
    /// ends the verification in the gateway only.
    static let declaredCapabilities = ProviderCapabilities(
        channels: [.sms, .voice, .flashcall, .silentAuth, .whatsapp], resendCanChangeChannel: true,
        completesWithoutCode: [.silentAuth])

    var capabilities: ProviderCapabilities { Self.declaredCapabilities }

    /// What the gateway keeps: the current Sinch verification's method, the `reference` sent with it (the gateway
    /// id, suffixed `-2`, `-3`… on resends: Sinch wants it unique), and how many Sinch verifications it started.
    struct State: Codable, Sendable, Equatable {
        var method: String
        var reference: String?
        var starts: Int
    }

    init(context: ProviderContext) throws(ConfigurationError) {
        self.configuration = try SinchConfiguration(settings: context.settings, providerID: context.providerID)
        self.client = VendorHTTPClient(vendor: "Sinch", context: context, baseURL: configuration.baseURL)
    }

    // MARK: operations

    func start(_ request: StartVerification) async throws(GatewayError) -> ProviderStartResult {
        try await startVerification(
            destination: request.destination, channel: request.channel, locales: request.locales,
            reference: request.verificationID, starts: 1, operation: .start)
    }

    func resend(_ verification: ProviderVerification, request: ResendRequest) async throws(GatewayError)
        -> ProviderStartResult
    {
        let state = try? verification.state.decode(State.self)
        let starts = (state?.starts ?? 1) + 1
        let reference = verification.id.isEmpty ? nil : verification.id + "-" + String(starts)
        return try await startVerification(
            destination: verification.destination, channel: request.channel ?? verification.channel,
            locales: verification.locales, reference: reference, starts: starts, operation: .resend)
    }

    func check(_ verification: ProviderVerification, code: String) async throws(GatewayError) -> ProviderCheckResult {
        let method = try Self.method(for: verification.channel)
        guard method != "seamless" else {
            throw GatewayError(.invalidState, "A seamless verification completes without a code.")
        }
        let value = code.trimmingCharacters(in: .whitespaces)
        guard Self.isWellFormed(value, method: method) else {
            throw GatewayError.invalidRequest(
                method == "flashcall"
                    ? "For a flash call, the code is the caller number the app intercepted."
                    : "The code must be 1 to 32 letters or digits.")
        }
        let sinchID = try client.reference(of: verification, where: Self.isSafeSegment)
        let body = try client.json(SinchWire.ReportRequest(method: method, value: value))
        let response = try await call(
            .put, path: SinchWire.path("id", sinchID), body: body, operation: .check)
        let report = try client.decode(SinchWire.StatusResponse.self, from: response, operation: .check)
        guard let name = report.status, let status = SinchErrorMapping.outcome(status: name, reason: report.reason)
        else {
            throw client.malformed(.check, httpStatus: response.status.code)
        }
        client.logger.debug(
            "sinch report answered",
            metadata: [
                "provider.id": "\(id)", "sinch.status": "\(name)", "sinch.reason": "\(report.reason ?? "-")",
            ])
        return ProviderCheckResult(status: status)
    }

    /// Status by Sinch id; by `reference` (the gateway id) when no Sinch id is known.
    func status(_ verification: ProviderVerification) async throws(GatewayError) -> VerificationChange {
        let path: String
        if let sinchID = verification.reference, Self.isSafeSegment(sinchID) {
            path = SinchWire.path("id", sinchID)
        } else if let reference = (try? verification.state.decode(State.self))?.reference
            ?? (verification.id.isEmpty ? nil : verification.id)
        {
            path = SinchWire.path("reference", reference)
        } else {
            throw GatewayError.internal("The verification has no usable Sinch id or reference.")
        }
        let status = try await fetchStatus(path: path, operation: .status)
        return try change(from: status)
    }

    /// A start whose gateway instance died during the call (docs/architecture.md §9.2), asked after by the
    /// reference it sent. Found for sms, callout and whatsapp; a flash call's caller pattern and a seamless URL
    /// come only with the start's answer, so those stay unknown.
    func lookUpStart(_ lookup: StartLookup) async throws(GatewayError) -> StartLookupResult {
        guard let method = SinchWire.method(for: lookup.channel), ["sms", "callout", "whatsapp"].contains(method),
            let number = lookup.destination.phoneNumber, Self.isSafeSegment(lookup.verificationID)
        else { return .unknown }
        let status: SinchWire.StatusResponse
        do {
            status = try await fetchStatus(path: SinchWire.path("reference", lookup.verificationID), operation: .lookup)
        } catch let error where error.code == .notFound {
            // Nothing under the reference: final once the dead call can no longer reach Sinch.
            return lookup.callSettled(at: client.clock.now, requestTimeout: client.timeout) ? .notFound : .notYet
        }
        guard let sinchID = status.id, Self.isSafeSegment(sinchID), status.reference == lookup.verificationID,
            status.identity?.endpoint.map({ $0 == number.e164 }) ?? true,
            let name = status.status, let mapped = SinchErrorMapping.outcome(status: name, reason: status.reason)
        else { return .unknown }
        let found = status.method.flatMap(SinchWire.canonicalMethod) ?? method
        client.logger.info(
            "sinch found a dead start by its reference",
            metadata: ["provider.id": "\(id)", "sinch.status": "\(name)", "to": "\(lookup.destination.masked)"])
        let expiresAt = configuration.smsExpiry.map { client.clock.now.addingTimeInterval(TimeInterval($0)) }
        return .found(
            ProviderStartResult(
                reference: sinchID,
                state: try ProviderState(State(method: found, reference: lookup.verificationID, starts: 1)),
                status: mapped, expiresAt: found == "sms" ? expiresAt : nil, channel: lookup.channel))
    }

    // MARK: vendor actions

    var actions: [ProviderAction] {
        [
            ProviderAction(
                name: "status_by_identity",
                summary: "Sinch's status of the newest verification of a number and method (`sms` by default).",
                requiredInputs: ["number"]),
            ProviderAction(
                name: "status_by_reference",
                summary: "Sinch's status of the verification started with this reference (a gateway verification id).",
                requiredInputs: ["reference"]),
            ProviderAction(
                name: "status_by_id", summary: "Sinch's status of a Sinch verification id.", requiredInputs: ["id"]),
        ]
    }

    func perform(action: String, input: [String: JSONValue]) async throws(GatewayError) -> [String: JSONValue] {
        func text(_ key: String) throws(GatewayError) -> String {
            guard let value = input[key]?.stringValue, !value.isEmpty, value.count <= 64, Self.isSafeSegment(value)
            else { throw GatewayError.invalidRequest("`\(key)` is required and must be a plain value.") }
            return value
        }
        let path: String
        switch action {
        case "status_by_identity":
            let number = try PhoneNumber(parsing: try text("number"))
            let method = input["method"]?.stringValue ?? "sms"
            guard let canonical = SinchWire.canonicalMethod(method) else {
                throw GatewayError.invalidRequest("`method` must be sms, flashcall, callout, seamless or whatsapp.")
            }
            path = SinchWire.path(canonical + "/number", number.e164)
        case "status_by_reference":
            path = SinchWire.path("reference", try text("reference"))
        case "status_by_id":
            path = SinchWire.path("id", try text("id"))
        default:
            throw GatewayError(.notFound, "Provider \(id) has no action named \(action).")
        }
        let status = try await fetchStatus(path: path, operation: VendorOperation(action))
        let mapped = status.status.flatMap { SinchErrorMapping.outcome(status: $0, reason: status.reason) }
        let fields = [
            "id": status.id, "method": status.method, "status": status.status, "reason": status.reason,
            "reference": status.reference, "gateway_status": mapped?.rawValue,
        ]
        return fields.mapValues { $0.map(JSONValue.string) ?? .null }
    }

    // MARK: helpers

    private func startVerification(
        destination: Destination, channel: Channel, locales: [String], reference: String?, starts: Int,
        operation: VendorOperation
    ) async throws(GatewayError) -> ProviderStartResult {
        let method = try Self.method(for: channel)
        guard let number = destination.phoneNumber else {
            throw GatewayError.invalidRequest("Sinch verifies phone numbers only.")
        }
        var request = SinchWire.StartRequest(
            identity: SinchWire.Identity(endpoint: number.e164), method: method, reference: reference)
        if method == "sms", let expiry = configuration.smsExpiry {
            request.smsOptions = SinchWire.SMSOptions(codeType: nil, expiry: SinchConfiguration.expiry(expiry))
        }
        if method == "flashcall", let timeout = configuration.flashCallInterceptionTimeout {
            request.flashCallOptions = SinchWire.FlashCallOptions(dialTimeout: nil, interceptionTimeout: timeout)
        }
        let body = try client.json(request)
        let response = try await call(
            .post, path: SinchWire.verificationsPath, body: body, operation: operation,
            acceptLanguage: SinchWire.acceptLanguage(locales))
        // Sinch accepted the start: from here on an unreadable answer may hide a sent code.
        let started = try client.decode(SinchWire.StartResponse.self, from: response, operation: operation)
        let sinchID = try client.required(started.id, where: Self.isSafeSegment, operation, in: response)
        let now = client.clock.now
        var nextAction: NextAction?
        var expiresAt: Date?
        switch method {
        case "flashcall":
            let filter = try client.required(
                started.flashCall?.cliFilter, where: { !$0.isEmpty }, operation, in: response)
            let interception =
                started.flashCall?.interceptionTimeout ?? configuration.flashCallInterceptionTimeout ?? 60
            nextAction = .interceptCall(
                NextAction.CallInterception(callerPattern: filter, timeoutSeconds: interception))
            if let report = started.flashCall?.reportTimeout {
                expiresAt = now.addingTimeInterval(TimeInterval(report))
            }
        case "seamless":
            let target = try client.required(
                started.seamless?.targetUri, where: { !$0.isEmpty }, operation, in: response)
            nextAction = .openURL(NextAction.URLOpening(url: target, cellularOnly: true))
        case "sms":
            if let expiry = configuration.smsExpiry { expiresAt = now.addingTimeInterval(TimeInterval(expiry)) }
        default:
            break
        }
        let language = response.headerFields[.contentLanguage]?.trimmingCharacters(in: .whitespaces)
        client.logger.debug(
            "sinch verification started",
            metadata: [
                "provider.id": "\(id)", "sinch.operation": "\(operation)", "sinch.method": "\(method)",
                "to": "\(destination.masked)", "content_language": "\(language ?? "-")",
            ])
        return ProviderStartResult(
            reference: sinchID, state: try ProviderState(State(method: method, reference: reference, starts: starts)),
            status: .pending, expiresAt: expiresAt, contentLanguage: language.flatMap { $0.isEmpty ? nil : $0 },
            channel: channel, nextAction: nextAction)
    }

    private func fetchStatus(path: String, operation: VendorOperation) async throws(GatewayError)
        -> SinchWire.StatusResponse
    {
        let response = try await call(.get, path: path, body: nil, operation: operation)
        let status = try client.decode(SinchWire.StatusResponse.self, from: response, operation: operation)
        _ = try client.required(
            status.status, where: { SinchErrorMapping.status(named: $0) != nil }, operation, in: response)
        return status
    }

    /// What a status answer (or a result event) changes.
    func change(from status: SinchWire.StatusResponse) throws(GatewayError) -> VerificationChange {
        guard let name = status.status, let mapped = SinchErrorMapping.outcome(status: name, reason: status.reason)
        else {
            throw GatewayError(.providerError, "Sinch reported a status the gateway does not know.")
        }
        guard mapped != .pending else { return VerificationChange() }
        guard mapped != .approved else { return VerificationChange(status: .approved, nextAction: .clear) }
        let reason = status.reason.map { name + ": " + $0 } ?? name
        return VerificationChange(status: mapped, nextAction: .clear, reason: reason)
    }

    static func method(for channel: Channel) throws(GatewayError) -> String {
        guard let method = SinchWire.method(for: channel) else { throw .unsupported(channel, by: "Sinch Verification") }
        return method
    }

    /// A flash call's report is a phone number (`+` and digits); other codes are letters and digits.
    static func isWellFormed(_ value: String, method: String) -> Bool {
        if method == "flashcall" {
            let digits = value.hasPrefix("+") ? value.dropFirst() : Substring(value)
            return (4...15).contains(digits.count) && digits.allSatisfy { $0.isASCII && $0.isNumber }
        }
        return (1...32).contains(value.count) && value.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
    }

    /// Letters, digits and `-_.~+`: what may go into a URL path segment as it is.
    static func isSafeSegment(_ value: String) -> Bool {
        !value.isEmpty && value.count <= 128
            && value.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.~+".contains($0)) }
    }

}
