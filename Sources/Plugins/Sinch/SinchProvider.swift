import Foundation
import GatewayCore
import Logging

/// Sinch Verification v1 behind the gateway's provider contract.
///
/// Every request is application-signed (or Basic, by setting). A start sends the gateway's verification id
/// as Sinch's `reference` and the caller's languages as `Accept-Language`; the language Sinch used comes
/// back in `Content-Language`. A flash call answers `intercept_call` (Sinch's `cliFilter`), and its check
/// reports the intercepted number as `cli`; seamless answers `open_url` over cellular and completes
/// without a code. Sinch has no resend: a resend starts again (a new Sinch id; Sinch aborts the old one).
struct SinchProvider: VerificationProvider {
    let id: String
    let configuration: SinchConfiguration
    let client: VendorHTTPClient
    let clock: any WallClock
    let logger: Logger

    static let declaredCapabilities = ProviderCapabilities(
        channels: [.sms, .voice, .flashcall, .silentAuth, .whatsapp],
        resendKeepsCode: false,
        supportsResend: true,
        // Sinch has no cancel call (docs/vendors/sinch.md §2): a cancel ends the verification in the gateway only.
        supportsCancel: false,
        supportsStatus: true,
        resendCanChangeChannel: true,
        completesWithoutCode: [.silentAuth],
        acceptsCallbacks: true)

    var capabilities: ProviderCapabilities { Self.declaredCapabilities }

    /// What the gateway keeps with a Sinch verification.
    struct State: Codable, Sendable, Equatable {
        /// Sinch's method of the current Sinch verification (`sms`, `flashcall`…).
        var method: String
        /// The `reference` sent with it (the gateway id, suffixed `-2`, `-3`… on resends: Sinch wants it unique).
        var reference: String?
        /// How many Sinch verifications this gateway verification has started.
        var starts: Int
    }

    init(context: ProviderContext) throws(ConfigurationError) {
        self.id = context.providerID
        self.configuration = try SinchConfiguration(settings: context.settings, providerID: context.providerID)
        self.client = VendorHTTPClient(vendor: "Sinch", context: context, baseURL: configuration.baseURL)
        self.clock = context.clock
        self.logger = context.logger
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
        let sinchID = try sinchID(of: verification)
        let body = try client.json(SinchWire.ReportRequest(method: method, value: value))
        let response = try await call(
            .put, path: SinchWire.verificationsPath + "/id/" + Self.pathSegment(sinchID), body: body, operation: .check)
        let report = try client.decode(SinchWire.StatusResponse.self, from: response, operation: .check)
        guard let name = report.status, let status = SinchErrorMapping.outcome(status: name, reason: report.reason)
        else {
            throw client.malformed(.check, httpStatus: response.status.code)
        }
        logger.debug(
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
            path = SinchWire.verificationsPath + "/id/" + Self.pathSegment(sinchID)
        } else if let reference = (try? verification.state.decode(State.self))?.reference ?? nonEmpty(verification.id) {
            path = SinchWire.verificationsPath + "/reference/" + Self.pathSegment(reference)
        } else {
            throw GatewayError.internal("The verification has no usable Sinch id or reference.")
        }
        let status = try await fetchStatus(path: path, operation: .status)
        return try change(from: status)
    }

    /// A start whose gateway instance died during the call (docs/architecture.md §9.2), asked after by the
    /// reference it sent (the gateway id, which Sinch keeps unique per started verification): `GET
    /// …/verifications/reference/{reference}`. Found for the methods whose start answer the app needs nothing
    /// more of (sms, callout, whatsapp); a flash call's caller pattern and a seamless URL come only with the
    /// start's answer, so those stay unknown.
    func lookUpStart(_ lookup: StartLookup) async throws(GatewayError) -> StartLookupResult {
        guard let method = SinchWire.method(for: lookup.channel), ["sms", "callout", "whatsapp"].contains(method),
            let number = lookup.destination.phoneNumber, Self.isSafeSegment(lookup.verificationID)
        else { return .unknown }
        let status: SinchWire.StatusResponse
        do {
            status = try await fetchStatus(
                path: SinchWire.verificationsPath + "/reference/" + Self.pathSegment(lookup.verificationID),
                operation: .lookup)
        } catch let error where error.code == .notFound {
            // Nothing under the reference: final once the dead call can no longer reach Sinch.
            return lookup.callSettled(at: clock.now, requestTimeout: client.timeout) ? .notFound : .notYet
        }
        guard let sinchID = status.id, Self.isSafeSegment(sinchID), status.reference == lookup.verificationID,
            status.identity?.endpoint.map({ $0 == number.e164 }) ?? true,
            let name = status.status, let mapped = SinchErrorMapping.outcome(status: name, reason: status.reason)
        else { return .unknown }
        let found = status.method.flatMap(SinchWire.canonicalMethod) ?? method
        logger.info(
            "sinch found a dead start by its reference",
            metadata: ["provider.id": "\(id)", "sinch.status": "\(name)", "to": "\(lookup.destination.masked)"])
        return .found(
            ProviderStartResult(
                reference: sinchID,
                state: try ProviderState(State(method: found, reference: lookup.verificationID, starts: 1)),
                status: mapped,
                expiresAt: found == "sms"
                    ? configuration.smsExpiry.map { clock.now.addingTimeInterval(TimeInterval($0)) }
                    : nil,
                channel: lookup.channel))
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
            path = SinchWire.verificationsPath + "/" + canonical + "/number/" + Self.pathSegment(number.e164)
        case "status_by_reference":
            path = SinchWire.verificationsPath + "/reference/" + Self.pathSegment(try text("reference"))
        case "status_by_id":
            path = SinchWire.verificationsPath + "/id/" + Self.pathSegment(try text("id"))
        default:
            throw GatewayError(.notFound, "Provider \(id) has no action named \(action).")
        }
        let status = try await fetchStatus(path: path, operation: VendorOperation(action))
        var output: [String: JSONValue] = [
            "id": status.id.map(JSONValue.string) ?? .null,
            "method": status.method.map(JSONValue.string) ?? .null,
            "status": status.status.map(JSONValue.string) ?? .null,
            "reason": status.reason.map(JSONValue.string) ?? .null,
            "reference": status.reference.map(JSONValue.string) ?? .null,
        ]
        let mapped = status.status.flatMap { SinchErrorMapping.outcome(status: $0, reason: status.reason) }
        output["gateway_status"] = mapped.map { .string($0.rawValue) } ?? .null
        return output
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
        switch method {
        case "sms":
            if let expiry = configuration.smsExpiry {
                request.smsOptions = SinchWire.SMSOptions(codeType: nil, expiry: SinchConfiguration.expiry(expiry))
            }
        case "flashcall":
            if let timeout = configuration.flashCallInterceptionTimeout {
                request.flashCallOptions = SinchWire.FlashCallOptions(dialTimeout: nil, interceptionTimeout: timeout)
            }
        default:
            break
        }
        let body = try client.json(request)
        let response = try await call(
            .post, path: SinchWire.verificationsPath, body: body, operation: operation,
            acceptLanguage: SinchWire.acceptLanguage(locales))
        // Sinch accepted the start: from here on an unreadable answer may hide a sent code.
        let started = try client.decode(SinchWire.StartResponse.self, from: response, operation: operation)
        guard let sinchID = started.id, !sinchID.isEmpty, Self.isSafeSegment(sinchID) else {
            throw client.malformed(operation, httpStatus: response.status.code)
        }
        let now = clock.now
        var nextAction: NextAction?
        var expiresAt: Date?
        switch method {
        case "flashcall":
            guard let filter = started.flashCall?.cliFilter, !filter.isEmpty else {
                throw client.malformed(operation, httpStatus: response.status.code)
            }
            let interception =
                started.flashCall?.interceptionTimeout ?? configuration.flashCallInterceptionTimeout ?? 60
            nextAction = .interceptCall(
                NextAction.CallInterception(callerPattern: filter, timeoutSeconds: interception))
            if let report = started.flashCall?.reportTimeout {
                expiresAt = now.addingTimeInterval(TimeInterval(report))
            }
        case "seamless":
            guard let target = started.seamless?.targetUri, !target.isEmpty else {
                throw client.malformed(operation, httpStatus: response.status.code)
            }
            nextAction = .openURL(NextAction.URLOpening(url: target, cellularOnly: true))
        case "sms":
            if let expiry = configuration.smsExpiry { expiresAt = now.addingTimeInterval(TimeInterval(expiry)) }
        default:
            break
        }
        let language = response.headerFields[.contentLanguage]?.trimmingCharacters(in: .whitespaces)
        logger.debug(
            "sinch verification started",
            metadata: [
                "provider.id": "\(id)", "sinch.operation": "\(operation)", "sinch.method": "\(method)",
                "to": "\(destination.masked)", "content_language": "\(language ?? "-")",
            ])
        return ProviderStartResult(
            reference: sinchID,
            state: try ProviderState(State(method: method, reference: reference, starts: starts)),
            status: .pending,
            expiresAt: expiresAt,
            contentLanguage: language.flatMap { $0.isEmpty ? nil : $0 },
            channel: channel,
            nextAction: nextAction)
    }

    private func fetchStatus(path: String, operation: VendorOperation) async throws(GatewayError)
        -> SinchWire.StatusResponse
    {
        let response = try await call(.get, path: path, body: nil, operation: operation)
        let status = try client.decode(SinchWire.StatusResponse.self, from: response, operation: operation)
        guard let name = status.status, SinchErrorMapping.status(named: name) != nil else {
            throw client.malformed(operation, httpStatus: response.status.code)
        }
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
        guard let method = SinchWire.method(for: channel) else {
            throw GatewayError(
                .unsupportedChannel, "Sinch Verification does not offer the \(channel.rawValue) channel.")
        }
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

    static func pathSegment(_ value: String) -> String { value }

    private func sinchID(of verification: ProviderVerification) throws(GatewayError) -> String {
        guard let sinchID = verification.reference, Self.isSafeSegment(sinchID) else {
            throw GatewayError.internal("The verification has no usable Sinch id.")
        }
        return sinchID
    }

    private func nonEmpty(_ value: String) -> String? { value.isEmpty ? nil : value }
}
