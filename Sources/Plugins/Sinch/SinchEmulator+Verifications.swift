import Foundation
import GatewayCore
import HTTPTypes

extension SinchEmulator {
    typealias Finder = @Sendable (SinchEmulatorState) throws -> SinchEmulatorState.Verification?

    /// How long a code lives when the start does not say (our choice: Sinch does not publish one).
    static let defaultValidity: TimeInterval = 600
    static let flashInterceptionTimeout = 45
    static let flashReportTimeout = 120

    // MARK: start

    func start(_ request: EmulatorRequest, now: Date) async -> TransportResponse {
        guard let body = try? JSONDecoder().decode(SinchWire.StartRequest.self, from: request.body) else {
            return Self.error(400, code: 40001, message: "Invalid request body.")
        }
        guard let identity = body.identity, let endpoint = identity.endpoint, !endpoint.isEmpty else {
            return Self.error(400, code: 40002, message: "Endpoint parameter is missing.")
        }
        guard identity.type == "number" else { return Self.error(400, code: 40001, message: "Invalid identity type.") }
        guard endpoint.hasPrefix("+") else {
            return Self.error(400, code: 40005, message: "Number missing leading plus.")
        }
        guard let methodName = body.method, let method = SinchWire.canonicalMethod(methodName) else {
            return Self.error(400, code: 40001, message: "Invalid verification method.")
        }
        if let code = SinchSandbox.errorCode(of: endpoint), let row = SinchErrorMapping.row(for: code) {
            return Self.error(row.httpStatus ?? code / 100, code: code, message: row.name)
        }
        guard let number = try? PhoneNumber(parsing: endpoint), number.isValid else {
            return Self.error(400, code: 40001, message: "Number \(PhoneNumber.mask(endpoint)) is invalid.")
        }
        if let reference = body.reference, reference.isEmpty || reference.count > 128 {
            return Self.error(400, code: 40001, message: "Invalid reference.")
        }
        let reference = body.reference
        let e164 = number.e164
        guard
            let admission = await withState(
                now: now,
                { state -> StartAdmission in
                    if let reference, try state.isReferenceTaken(reference) { return .referenceTaken }
                    return try state.admitStart(endpoint: e164) ? .admitted : .tooSoon
                })
        else { return Self.serverError(500) }
        switch admission {
        case .referenceTaken: return Self.error(409, code: 40900, message: "Reference already defined")
        case .tooSoon:
            return Self.error(429, code: 42901, message: "Cannot initiate verification to the same number too quickly")
        case .admitted: break
        }
        let requested = SinchWire.languages(fromAcceptLanguage: request.headerFields[.acceptLanguage])
        let language = SinchLanguages.negotiate(requested: requested, country: number.region)
        let id = Self.randomID()
        var verification = SinchEmulatorState.Verification(
            id: id, method: method, endpoint: number.e164, reference: body.reference, custom: body.custom,
            secret: Self.secret(for: method), status: "PENDING", reason: nil, source: nil,
            language: method == "seamless" || method == "flashcall" ? nil : language, countryID: number.region,
            createdAt: now, updatedAt: now, expiresAt: now.addingTimeInterval(Self.validity(of: body, method: method)))

        if number.e164 == SinchSandbox.fraudNumber {
            // Sinch accepts the request and its fraud engine denies it: nothing is sent.
            verification.status = "DENIED"
            verification.reason = "Fraud"
            let denied = verification
            guard await withState(now: now, { try $0.put(denied) }) != nil else { return Self.serverError(500) }
            await sendResult(denied)
            return Self.json(200, startResponse(denied, body: body), headers: languageHeader(denied))
        }
        // Ask the gateway first, as Sinch does when a callback URL is set.
        let answer = await sendEvent(
            SinchWire.Event(
                id: id, event: SinchWire.requestEvent, method: method,
                identity: SinchWire.Identity(endpoint: number.e164),
                reference: body.reference, custom: body.custom, acceptLanguage: requested.isEmpty ? nil : requested))
        if let answer {
            let action =
                (200..<300).contains(answer.status.code)
                ? (try? JSONDecoder().decode(SinchWire.EventAction.self, from: answer.body))?.action.lowercased() : nil
            if action != "allow" {
                verification.status = "DENIED"
                verification.reason = action == "deny" ? "Denied by callback" : "Invalid callback"
                let denied = verification
                guard await withState(now: now, { try $0.put(denied) }) != nil else { return Self.serverError(500) }
                return action == "deny"
                    ? Self.error(403, code: 40300, message: "Verification denied by callback.")
                    : Self.error(422, code: 42202, message: "Invalid callback response.")
            }
        }
        let created = verification
        guard
            await withState(
                now: now,
                { state -> Bool in
                    try state.abortPending(endpoint: e164)
                    try state.put(created)
                    return true
                }) != nil
        else { return Self.serverError(500) }
        deliver(created, now: now)
        return Self.json(200, startResponse(created, body: body), headers: languageHeader(created))
    }

    /// Whether a start may go on: decided, with its start counted, in one transaction.
    private enum StartAdmission: Sendable {
        case admitted
        case referenceTaken
        case tooSoon
    }

    private func languageHeader(_ verification: SinchEmulatorState.Verification) -> HTTPFields {
        var headers = HTTPFields()
        if let language = verification.language { headers[.contentLanguage] = language }
        return headers
    }

    private func startResponse(_ verification: SinchEmulatorState.Verification, body: SinchWire.StartRequest)
        -> SinchWire.StartResponse
    {
        let href = "https://verification.api.sinch.com/verification/v1/verifications/id/" + verification.id
        var response = SinchWire.StartResponse(
            id: verification.id, method: verification.method,
            links: [
                SinchWire.Link(rel: "status", href: href, method: "GET"),
                SinchWire.Link(rel: "report", href: href, method: "PUT"),
            ])
        switch verification.method {
        case "sms":
            response.sms = SinchWire.SMSDetails(
                template: "Your verification code is {{CODE}}.", interceptionTimeout: 298,
                codeType: body.smsOptions?.codeType ?? "Numeric")
        case "flashcall":
            response.flashCall = SinchWire.FlashCallDetails(
                cliFilter: Self.cliFilter(verification.secret),
                interceptionTimeout: body.flashCallOptions?.interceptionTimeout ?? Self.flashInterceptionTimeout,
                reportTimeout: Self.flashReportTimeout, denyCallAfter: 0)
        case "seamless":
            response.seamless = SinchWire.SeamlessDetails(targetUri: seamlessURL(verification))
        case "whatsapp":
            response.whatsapp = SinchWire.CodeTypeOptions(codeType: body.whatsappOptions?.codeType ?? "Numeric")
        default:
            break
        }
        return response
    }

    /// What reaches the phone, in the outbox.
    private func deliver(_ verification: SinchEmulatorState.Verification, now: Date) {
        let message: SandboxOutbox.Message
        switch verification.method {
        case "flashcall":
            message = SandboxOutbox.Message(
                provider: "sinch", kind: .flashCall, channel: "flashcall", to: verification.endpoint,
                code: verification.secret, text: "Missed call from \(verification.secret)", sentAt: now)
        case "seamless":
            let url = seamlessURL(verification)
            message = SandboxOutbox.Message(
                provider: "sinch", kind: .silentAuth, channel: "seamless", to: verification.endpoint, code: nil,
                text: "The app opens \(url) over mobile data", sentAt: now)
        default:
            let text = SandboxMessages.verificationCode(verification.secret, language: verification.language)
            let channel = SinchWire.channel(method: verification.method) ?? .sms
            message = SandboxOutbox.Message(
                provider: "sinch", kind: SandboxOutbox.Message.Kind(channel), channel: verification.method,
                to: verification.endpoint, code: verification.secret, text: text.text,
                language: verification.language, sentAt: now)
        }
        outbox.record(message)
        logger.debug(
            "sinch sandbox sent a verification",
            metadata: ["sinch.method": "\(verification.method)", "to": "\(PhoneNumber.mask(verification.endpoint))"])
    }

    func seamlessURL(_ verification: SinchEmulatorState.Verification) -> String {
        publicBase + "/seamless/" + verification.id + "/" + verification.secret
    }

    // MARK: report and status

    func report(_ bytes: Data, find: @escaping Finder, now: Date) async -> TransportResponse {
        guard let body = try? JSONDecoder().decode(SinchWire.ReportRequest.self, from: bytes),
            let method = body.method.flatMap(SinchWire.canonicalMethod), method != "seamless",
            let value = body.value(for: method)
        else {
            return Self.error(400, code: 40003, message: "Invalid identity or code.")
        }
        guard
            let found = await withState(
                now: now,
                { state -> (SinchEmulatorState.Verification, SinchWire.StatusResponse, approved: Bool)? in
                    guard var verification = try find(state) else { return nil }
                    guard verification.status == "PENDING" else {
                        return (verification, Self.reportBody(verification), false)
                    }
                    guard verification.method == method else { return nil }
                    let right =
                        method == "flashcall"
                        ? Self.digits(value) == Self.digits(verification.secret)
                        : ConstantTime.equals(value, verification.secret)
                    guard right else {
                        var failed = Self.reportBody(verification)
                        failed.status = "FAIL"
                        failed.reason = method == "flashcall" ? "Invalid CLI" : "Invalid code"
                        return (verification, failed, false)
                    }
                    verification.status = "SUCCESSFUL"
                    verification.reason = nil
                    verification.source = method == "flashcall" ? "intercepted" : "manual"
                    verification.updatedAt = now
                    try state.put(verification)
                    return (verification, Self.reportBody(verification), true)
                })
        else { return Self.serverError(500) }
        guard let (verification, response, approved) = found else { return Self.notFound() }
        // The result event goes once, from the report that approved it (a double tap reports twice).
        if approved { await sendResult(verification) }
        return Self.json(200, response)
    }

    func status(now: Date, _ find: @escaping Finder) async -> TransportResponse {
        guard let found = await withState(now: now, { try find($0) }) else { return Self.serverError(500) }
        guard let verification = found else { return Self.notFound() }
        return Self.json(200, Self.statusBody(verification))
    }

    /// `GET /seamless/{id}/{token}`: the device reached Sinch over mobile data, so the number is verified.
    func seamless(id: String, token: String, now: Date) async -> TransportResponse {
        guard
            let found = await withState(
                now: now,
                { state -> (SinchEmulatorState.Verification, Bool)? in
                    guard var verification = try state.verification(id), verification.method == "seamless",
                        ConstantTime.equals(token, verification.secret)
                    else { return nil }
                    guard verification.status == "PENDING" else { return (verification, false) }
                    // Sinch's `source` says how a code came back (`intercepted` or `manual`); a data verification
                    // returns no code, so it has none.
                    verification.status = "SUCCESSFUL"
                    verification.updatedAt = now
                    try state.put(verification)
                    return (verification, true)
                })
        else { return Self.serverError(500) }
        guard let (verification, changed) = found else { return Self.notFound() }
        if changed { await sendResult(verification) }
        return Self.json(200, Self.reportBody(verification))
    }

    static func reportBody(_ verification: SinchEmulatorState.Verification) -> SinchWire.StatusResponse {
        SinchWire.StatusResponse(
            id: verification.id, method: verification.method, status: verification.status, reason: verification.reason,
            callComplete: verification.method == "callout" || verification.method == "flashcall" ? true : nil)
    }

    /// The methods whose status answers may carry `source`.
    static let methodsWithSource: Set<String> = ["sms", "flashcall", "whatsapp"]

    static func statusBody(_ verification: SinchEmulatorState.Verification) -> SinchWire.StatusResponse {
        var body = reportBody(verification)
        body.reference = verification.reference
        body.identity = SinchWire.Identity(endpoint: verification.endpoint)
        body.countryId = verification.countryID
        body.verificationTimestamp = SinchWire.verificationTimestamp(verification.updatedAt)
        // Sinch's status schemas carry `source` for sms, flashcall and whatsapp only (not callout).
        body.source = Self.methodsWithSource.contains(verification.method) ? verification.source : nil
        body.price = SinchWire.Price(
            verificationPrice: SinchWire.Money(currencyId: "EUR", amount: 0), terminationPrice: nil,
            billableDuration: nil)
        return body
    }

    // MARK: generation

    static func validity(of body: SinchWire.StartRequest, method: String) -> TimeInterval {
        if method == "flashcall" { return TimeInterval(flashReportTimeout) }
        if method == "sms", let expiry = body.smsOptions?.expiry {
            let parts = expiry.split(separator: ":").compactMap { Int($0) }
            if parts.count == 3, parts.allSatisfy({ $0 >= 0 }) {
                let seconds = parts[0] * 3600 + parts[1] * 60 + parts[2]
                if seconds > 0 { return TimeInterval(seconds) }
            }
        }
        return defaultValidity
    }

    /// A 4-digit code; a flash call's caller number (`+46 10` and seven digits); a seamless URL token.
    static func secret(for method: String) -> String {
        switch method {
        case "flashcall": return "+4610" + randomDigits(7)
        case "seamless": return randomHex(32)
        default: return randomDigits(4)
        }
    }

    /// Sinch's `cliFilter`: a pattern the caller number matches, without giving all of it away.
    static func cliFilter(_ cli: String) -> String { "(.*)" + String(cli.dropFirst().prefix(7)) + "(.*)" }

    static func digits(_ text: String) -> String { String(text.filter { $0.isASCII && $0.isNumber }) }

    static func randomDigits(_ count: Int) -> String {
        String((0..<count).map { _ in Character(String(Int.random(in: 0..<10))) })
    }

    static func randomHex(_ count: Int) -> String {
        String((0..<count).map { _ in Character(String(Int.random(in: 0..<16), radix: 16)) })
    }

    /// Sinch ids are long decimal strings in the examples (`1234567890`); 19 digits.
    static func randomID() -> String { String(Int.random(in: 1...9)) + randomDigits(18) }
}
