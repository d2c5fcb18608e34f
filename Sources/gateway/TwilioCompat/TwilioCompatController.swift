import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird

/// Twilio Verify v2's verification surface, served by the gateway's engine: each handler reads Twilio's
/// parameters, calls ``VerificationService`` as `/v1/verifications` does, and answers Twilio's resource
/// (docs/twilio-compat.md has every parameter and field).
struct TwilioCompatController: Sendable {
    let service: VerificationService
    let settings: TwilioCompatSettings
    /// The native API's controller, for what both share: the client's address, the body's bound, the owner.
    let native: VerificationsController
    /// The base of the resources' `url` (`public_base_url`; else the request's `Host`, over http).
    var publicBaseURL: URL?
    /// When this configuration was loaded: the services' `date_created` and `date_updated`.
    var loadedAt = Date()

    static let createParameters: Set<String> = [
        "To", "Channel", "CustomFriendlyName", "CustomMessage", "SendDigits", "Locale", "CustomCode", "Amount",
        "Payee", "RateLimits", "ChannelConfiguration", "AppHash", "TemplateSid", "TemplateCustomSubstitutions",
        "DeviceIp", "EnableSnaClientToken", "RiskCheck", "Tags",
    ]
    static let checkParameters: Set<String> = ["Code", "To", "VerificationSid", "Amount", "Payee", "SnaClientToken"]
    /// The metadata entry that ties a verification to the service that started it.
    static let serviceMetadataKey = "twilio_service_sid"

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.get("v2/Services/{ServiceSid}", use: fetchService)
        group.post("v2/Services/{ServiceSid}/Verifications", use: create)
        group.get("v2/Services/{ServiceSid}/Verifications/{Sid}", use: fetch)
        group.post("v2/Services/{ServiceSid}/Verifications/{Sid}", use: update)
        group.post("v2/Services/{ServiceSid}/VerificationCheck", use: check)
    }

    // MARK: handlers

    @Sendable func fetchService(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let verifyService = try verifyService(context)
        return JSONResponse.response(renderService(verifyService, base: base(request)))
    }

    @Sendable func create(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        var request = request
        let verifyService = try verifyService(context)
        let form = try await form(&request, context: context, allowing: Self.createParameters)
        let start = try Self.parseCreate(
            form, service: verifyService, takesCustomCodes: takesCustomCodes(verifyService))
        // One create at a time per key, service, `To` and channel, across instances: a repeated create resends
        // the pending verification, creates at the same instant start one and send once (+CreateClaim).
        let record = try await createOnce(
            start, service: verifyService, context: context, clientIP: native.clientIP(request, context: context))
        return JSONResponse.response(
            text: render(record, service: verifyService, base: base(request), sendTimes: try await sendTimes(record)),
            status: .created)
    }

    @Sendable func fetch(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let verifyService = try verifyService(context)
        let record = try await verification(context, service: verifyService)
        return JSONResponse.response(
            text: render(record, service: verifyService, base: base(request), sendTimes: try await sendTimes(record)))
    }

    @Sendable func update(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        var request = request
        let verifyService = try verifyService(context)
        let form = try await form(&request, context: context, allowing: ["Status"])
        let status = try form.required("Status")
        let found = try await verification(context, service: verifyService)
        let record: VerificationRecord
        switch status {
        case "canceled":
            record = try await service.cancel(id: found.id, owner: VerificationsController.owner(context))
        case "approved":
            guard verifyService.allowsApproval else {
                throw TwilioCompatError.invalidParameter(
                    "Status",
                    "`approved` is refused: this service approves only a code its vendor confirmed "
                        + "(`allow_approve` in twilio_compat)")
            }
            let applied = try await service.apply(
                VerificationChange(status: .approved, reason: "twilio_compat"), to: found.id, source: "twilio_compat")
            if applied.status != .approved { throw applied.finalStateError ?? GatewayError.notFound() }
            record = applied
        default:
            throw TwilioCompatError.invalidParameter("Status", "it must be `canceled` or `approved`")
        }
        return JSONResponse.response(
            text: render(record, service: verifyService, base: base(request), sendTimes: try await sendTimes(record)))
    }

    @Sendable func check(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        var request = request
        let verifyService = try verifyService(context)
        let form = try await form(&request, context: context, allowing: Self.checkParameters)
        for name in ["Amount", "Payee"] where form[name] != nil {
            throw TwilioCompatError.unsupported(name, "PSD2 transaction parameters are not served by this gateway")
        }
        if form["SnaClientToken"] != nil {
            throw TwilioCompatError.unsupported("SnaClientToken", "the `sna` channel is not served by this gateway")
        }
        let code = try form.required("Code")
        guard (4...10).contains(code.count), code.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
            throw TwilioCompatError.invalidParameter("Code", "it must be the 4 to 10 characters the user received")
        }
        let checkPath = "/v2/Services/\(verifyService.sid)/VerificationCheck"
        let record: VerificationRecord
        if let sid = form["VerificationSid"] {
            record = try await verification(sid: sid, context: context, service: verifyService)
            if let to = form["To"], try Self.destinationValue(to) != record.destination.value {
                throw TwilioCompatError.notFound(checkPath)
            }
        } else if let to = form["To"] {
            // As Twilio: the service's pending verification to that number or address, the newest one.
            guard
                let open = try await openVerification(
                    to: try Self.destinationValue(to), service: verifyService, context: context)
            else { throw TwilioCompatError.notFound(checkPath) }
            record = open
        } else {
            throw TwilioCompatError(
                status: 400, code: 60221, message: "No target verification specified",
                error: GatewayError(.invalidRequest, "Send `VerificationSid` or `To` (and the `Code`)."))
        }
        let outcome: CheckOutcome
        do {
            outcome = try await service.check(
                CheckVerification(verificationID: record.id, code: code),
                owner: VerificationsController.owner(context), apiKeyID: context.apiKey?.id)
        } catch {
            guard error.code == .incorrectCode else { throw error }
            // Twilio answers a wrong code with the verification, still pending, and `valid: false`.
            let current = try await service.get(id: record.id, owner: VerificationsController.owner(context))
            return JSONResponse.response(text: renderCheck(current, service: verifyService, token: nil))
        }
        var token: String?
        if outcome.carriesToken, outcome.record.status == .approved {
            token = native.signer.sign(outcome.record, at: service.clock.now)
        }
        return JSONResponse.response(text: renderCheck(outcome.record, service: verifyService, token: token))
    }

    // MARK: reading the request

    /// The path's service, or Twilio's 20404.
    func verifyService(_ context: GatewayRequestContext) throws -> TwilioCompatSettings.Service {
        let sid = try context.parameters.require("ServiceSid")
        guard let found = settings.services[sid] else { throw TwilioCompatError.notFound("/v2/Services/\(sid)") }
        return found
    }

    func form(_ request: inout Request, context: GatewayRequestContext, allowing known: Set<String>) async throws
        -> TwilioCompatForm
    {
        let body = try await VerificationsController.body(of: &request, context: context)
        return try TwilioCompatForm(body, contentType: request.headers[.contentType], allowing: known)
    }

    /// The path's verification, when this service started it and the caller may see it; else 20404.
    func verification(_ context: GatewayRequestContext, service verifyService: TwilioCompatSettings.Service)
        async throws -> VerificationRecord
    {
        try await verification(sid: try context.parameters.require("Sid"), context: context, service: verifyService)
    }

    func verification(sid: String, context: GatewayRequestContext, service verifyService: TwilioCompatSettings.Service)
        async throws -> VerificationRecord
    {
        let path = "/v2/Services/\(verifyService.sid)/Verifications/\(sid)"
        guard let id = Self.verificationID(sid: sid) else {
            // Twilio also takes the `To` in the SID's place: the service's pending verification to it.
            let to = sid.contains("%") ? sid.removingPercentEncoding ?? sid : sid
            guard !to.hasPrefix("VE"), let value = try? Self.destinationValue(to),
                let open = try await openVerification(to: value, service: verifyService, context: context)
            else { throw TwilioCompatError.notFound(path) }
            return open
        }
        let record: VerificationRecord
        do {
            record = try await service.get(id: id, owner: VerificationsController.owner(context))
        } catch {
            guard error.code == .notFound else { throw error }
            throw TwilioCompatError.notFound(path)
        }
        guard record.metadata[Self.serviceMetadataKey] == verifyService.sid else {
            throw TwilioCompatError.notFound(path)
        }
        return record
    }

    /// How many of a destination's open verifications are read to find one of a service (other services' and
    /// other keys' are skipped).
    static let openVerificationsRead = 20

    /// The newest verification to `destination` (its E.164 number or address) that this service started, that
    /// is still pending and that the caller may see; on `channel` when one is given.
    func openVerification(
        to destination: String, service verifyService: TwilioCompatSettings.Service,
        context: GatewayRequestContext, channel: Channel? = nil
    ) async throws -> VerificationRecord? {
        let owner = VerificationsController.owner(context)
        let open = try await service.store.openVerifications(
            destination: destination, at: service.clock.now, limit: Self.openVerificationsRead)
        return open.first {
            $0.metadata[Self.serviceMetadataKey] == verifyService.sid && (owner == nil || $0.apiKeyID == owner)
                && (channel == nil || $0.channel == channel)
        }
    }

    /// Whether a create may send `record` again: its vendor resends, and no challenge stands before the send.
    func resendable(_ record: VerificationRecord) -> Bool {
        if case .solveChallenge = record.nextAction { return false }
        return service.registry.provider(record.providerID)?.resending != nil
    }

    /// A `To` as the gateway keeps it: an email address as given, a phone number in E.164; not one is `60200`.
    static func destinationValue(_ to: String) throws(TwilioCompatError) -> String {
        guard to.utf8.count <= 254 else { throw TwilioCompatError.invalidParameter("To", "it is too long") }
        do {
            return try Destination.parse(to, for: to.contains("@") ? .email : .sms).value
        } catch {
            throw TwilioCompatError.invalidParameter("To", error.message)
        }
    }

    /// The gateway id behind a `VE…` SID: the same 32 hex digits after `vf_` (both ways, so a SID needs no
    /// storage and works on every instance and after a restart).
    static func verificationID(sid: String) -> String? {
        guard TwilioCompatSettings.isSID(sid, prefix: "VE") else { return nil }
        let id = "vf_" + sid.dropFirst(2).lowercased()
        return VerificationService.isWellFormedID(id) ? id : nil
    }

    static func sid(verificationID id: String) -> String { "VE" + id.dropFirst(3) }

    /// When each send happened: the start, then each resend from the timeline (read only when there was one).
    func sendTimes(_ record: VerificationRecord) async throws -> [Date] {
        guard record.sends > 1 else { return [record.createdAt] }
        let events = try await service.events(id: record.id)
        let times = events.filter { $0.kind == .started || $0.kind == .resent }.map(\.at)
        return times.isEmpty ? [record.createdAt] : times
    }

    func base(_ request: Request) -> String {
        if let publicBaseURL {
            var text = publicBaseURL.absoluteString
            while text.hasSuffix("/") { text.removeLast() }
            return text + TwilioCompatRoutes.prefix
        }
        let host = request.head.authority ?? request.headers[.host] ?? "localhost"
        return "http://" + host + TwilioCompatRoutes.prefix
    }
}

extension HTTPField.Name {
    static let host = HTTPField.Name("Host")!
}
