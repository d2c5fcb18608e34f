import Crypto
import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird

import struct NIOCore.NIOTooManyBytesError

/// `/v1/verifications`: start, check, resend, cancel, get (docs/design.md §4).
struct VerificationsController: Sendable {
    let service: VerificationService
    let signer: VerificationTokenSigner
    /// A header a trusted proxy sets to the client's address (`X-Forwarded-For`); without one, the
    /// connection's own peer address is the client IP for per-IP limits.
    var trustedProxyHeader: HTTPField.Name? = nil

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.post("verifications", use: start)
        group.get("verifications/{id}", use: get)
        group.post("verifications/{id}/check", use: check)
        group.post("verifications/{id}/resend", use: resend)
        group.post("verifications/{id}/cancel", use: cancel)
        group.post("verifications/{id}/challenge", use: challenge)
        group.post("providers/{provider}/actions/{action}", use: action)
    }

    // MARK: start

    static let startFields: Set<String> = [
        "to", "channel", "locales", "app_verification", "code_length", "client_ref", "metadata", "provider",
        "region", "fallback_channels", "client_context", "channel_options", "multi_factor",
    ]

    @Sendable func start(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        var request = request
        let body = try await Self.body(of: &request, context: context)
        let clientIP = clientIP(request, context: context)
        let idempotencyKey = try Self.idempotencyKey(request, context: context)
        guard let idempotencyKey else {
            return JSONResponse.response(
                try await startBody(body: body, clientIP: clientIP, context: context), status: .created)
        }
        let fingerprint = Hex.lowercase(SHA256.hash(data: body))
        let claim = IdempotentStart(key: idempotencyKey)
        let instance = service.leaseOwners?.instanceID
        // The instance of a claim found running, once it is known dead: the next claim takes it over at once.
        var deadOwner: String?
        while true {
            switch try await service.store.claimIdempotencyKey(
                idempotencyKey, fingerprint: fingerprint, token: claim.token, owner: instance, at: service.clock.now,
                lease: service.policy.idempotencyLease, deadOwner: deadOwner)
            {
            case .replay(let stored):
                return Self.replay(stored)
            case .inProgress(let owner):
                if deadOwner == nil, let owner, owner != instance, let leaseOwners = service.leaseOwners,
                    await leaseOwners.isDead(owner)
                {
                    // Its instance died during the start: the claim is this request's to take, now rather than
                    // when its lease lapses (the same rule as a check's lease, docs/architecture.md §9.3).
                    deadOwner = owner
                    continue
                }
                throw GatewayError(
                    .idempotencyConflict, "A request with this Idempotency-Key is still being processed; retry shortly.")
            case .mismatch:
                throw GatewayError(
                    .idempotencyConflict, "This Idempotency-Key was already used with a different request body.")
            case .claimed:
                return try await startClaimed(claim, body: body, clientIP: clientIP, context: context)
            case .takenOver(let progress):
                return try await answerTakeover(
                    claim, progress: progress, deadOwner: deadOwner, body: body, clientIP: clientIP, context: context)
            }
        }
    }

    /// A start under an idempotency claim this request holds: its answer is kept for replays, or the claim
    /// is given up so a retry may try again, or (when a vendor may have sent) left for a retry to take over
    /// at once and learn what is known.
    private func startClaimed(
        _ claim: IdempotentStart, body: Data, clientIP: String?, context: GatewayRequestContext
    ) async throws -> Response {
        do {
            let data = JSONResponse.encode(
                try await startBody(body: body, clientIP: clientIP, context: context, idempotency: claim))
            try await service.store.completeIdempotencyKey(
                claim.key, token: claim.token, response: StoredResponse(status: 201, body: data))
            return Response(
                status: .created, headers: [.contentType: "application/json; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(data: data)))
        } catch let error as GatewayError where error.errorClass == .caller || error.errorClass == .blocked {
            // The same body will fail the same way: keep the answer so a replay gets it without a send. (A
            // claim taken over meanwhile keeps nothing of this request: the write needs the claim's token.)
            let apiError = APIError(error)
            try await service.store.completeIdempotencyKey(
                claim.key, token: claim.token,
                response: StoredResponse(
                    status: Int(apiError.status.code), body: apiError.body(requestID: context.requestID)))
            throw error
        } catch {
            if claim.sendMayHaveHappened {
                // A vendor may have sent: a retry must not send again blindly. It takes the claim over at once
                // and answers the verification if it was stored, else `idempotency_outcome_unknown`.
                try? await service.store.abandonIdempotencyKey(claim.key, token: claim.token, at: service.clock.now)
            } else {
                // Nothing was sent and a retry may succeed (vendor down, state changed): free the key.
                try? await service.store.releaseIdempotencyKey(claim.key, token: claim.token)
            }
            throw error
        }
    }

    /// What a request that took over a dead start's claim answers from how far that start got: the
    /// verification it stored or its vendor has (`201`, replayed), a start anew when no vendor was called
    /// or the vendor has nothing and can no longer get the dead call, `idempotency_conflict` while it still
    /// may, and `idempotency_outcome_unknown` when nobody can tell (docs/architecture.md §9.2).
    private func answerTakeover(
        _ claim: IdempotentStart, progress: IdempotencyProgress, deadOwner: String?, body: Data, clientIP: String?,
        context: GatewayRequestContext
    ) async throws -> Response {
        service.logger.notice(
            "idempotency claim taken over",
            metadata: [
                "idempotency.stage": "\(progress.stage)", "verification.id": "\(progress.verificationID ?? "-")",
                "provider.id": "\(progress.providerID ?? "-")", "instance.dead": "\(deadOwner ?? "-")",
            ])
        // A body that does not parse never reached a vendor: the start anew answers (and keeps) the refusal.
        guard let request = try? Self.parseStart(body) else {
            return try await startClaimed(claim, body: body, clientIP: clientIP, context: context)
        }
        let recovery: VerificationService.StartRecovery
        do {
            recovery = try await service.recoverStart(request, progress: progress, apiKeyID: context.apiKey?.id)
        } catch {
            // Left for the next retry to take over at once and ask again.
            try? await service.store.abandonIdempotencyKey(claim.key, token: claim.token, at: service.clock.now)
            throw error
        }
        switch recovery {
        case .verification(let record):
            let data = JSONResponse.encode(Self.render(record, now: service.clock.now))
            let stored = StoredResponse(status: 201, body: data)
            try await service.store.completeIdempotencyKey(claim.key, token: claim.token, response: stored)
            return Self.replay(stored)
        case .startAnew(let id):
            let resumed = IdempotentStart(key: claim.key, token: claim.token, resumingID: id)
            return try await startClaimed(resumed, body: body, clientIP: clientIP, context: context)
        case .notYet:
            try await service.store.abandonIdempotencyKey(claim.key, token: claim.token, at: service.clock.now)
            throw GatewayError(
                .idempotencyConflict,
                "An earlier request with this Idempotency-Key stopped while its vendor call may still arrive; "
                    + "retry shortly with the same key to learn its outcome.")
        case .unknown:
            // Left for the next retry to take over at once: the verification may still turn up.
            try await service.store.abandonIdempotencyKey(claim.key, token: claim.token, at: service.clock.now)
            throw GatewayError(
                .idempotencyOutcomeUnknown,
                "An earlier request with this Idempotency-Key stopped after asking a vendor to send and before its "
                    + "outcome was stored: a code may have reached the user. Do not start again at once: ask the user "
                    + "whether a code arrived; to send one, start with a new Idempotency-Key.")
        }
    }

    private static func replay(_ stored: StoredResponse) -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        headers[.idempotentReplayed] = "true"
        return Response(
            status: HTTPResponse.Status(code: stored.status), headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(data: stored.body)))
    }

    private func startBody(
        body: Data, clientIP: String?, context: GatewayRequestContext, idempotency: IdempotentStart? = nil
    ) async throws -> JSONValue {
        let start = try Self.parseStart(body)
        let record = try await service.start(
            start, apiKeyID: context.apiKey?.id, apiKeyName: context.apiKey?.name, clientIP: clientIP,
            keyCountries: context.apiKey?.countries,
            keyLimit: context.apiKey?.startsPerHour.map { RateLimit(limit: $0, window: 3600) },
            idempotency: idempotency)
        return Self.render(record, now: service.clock.now)
    }

    static func parseStart(_ body: Data) throws(GatewayError) -> StartVerification {
        let reader = try JSONObjectReader(data: body)
        try reader.rejectUnknown(allowing: startFields)
        let channel = try parseChannel(try reader.string("channel", maxLength: 32) ?? "sms", field: "channel")
        let to = try reader.string("to", required: true, maxLength: 254) ?? ""
        let region = try PhoneNumbersController.region(try reader.string("region", maxLength: 8))
        let destination = try Destination.parse(to, for: channel, region: region)
        let locales = try reader.stringArray("locales", maxCount: 10, maxLength: 35) ?? []
        for locale in locales where !isLanguageTag(locale) {
            throw GatewayError.invalidRequest("`locales` entry `\(locale)` is not a language tag such as `es-ES`.")
        }
        let proof = try parseProof(reader)
        var fallbackChannels: [Channel] = []
        for (index, name) in (try reader.stringArray("fallback_channels", maxCount: 4, maxLength: 32) ?? []).enumerated() {
            let fallback = try parseChannel(name, field: "fallback_channels[\(index)]")
            guard fallback != channel, !fallbackChannels.contains(fallback) else {
                throw GatewayError.invalidRequest(
                    "`fallback_channels` must not repeat a channel or the request's `channel`.")
            }
            guard fallback.needsPhoneNumber == channel.needsPhoneNumber else {
                throw GatewayError.invalidRequest(
                    "`fallback_channels[\(index)]` needs another kind of destination than `channel`.")
            }
            fallbackChannels.append(fallback)
        }
        return StartVerification(
            destination: destination,
            channel: channel,
            locales: locales,
            appVerification: proof,
            codeLength: try reader.integer("code_length", in: 4...10),
            clientReference: try reader.string("client_ref", maxLength: 128),
            metadata: try reader.stringMap("metadata", maxCount: 20) ?? [:],
            forcedProvider: try reader.string("provider", maxLength: 40),
            fallbackChannels: fallbackChannels,
            clientContext: try parseClientContext(reader),
            channelOptions: try parseChannelOptions(reader),
            multiFactor: try parseMultiFactor(reader))
    }

    /// The optional `multi_factor` object: the second factor of a sign-in (`type: sign_in`, the first factor's
    /// `pending_credential` and the enrolled factor's `enrollment_id`) or an enrollment (`type: enroll`, the
    /// signed-in user's `id_token` and an optional `display_name`). Each type takes only its own fields.
    static func parseMultiFactor(_ reader: JSONObjectReader) throws(GatewayError) -> MultiFactor? {
        guard let object = try reader.object("multi_factor") else { return nil }
        let typeName = try object.string("type", required: true, maxLength: 32) ?? ""
        guard let kind = MultiFactor.Kind(rawValue: typeName) else {
            let known = MultiFactor.Kind.allCases.map(\.rawValue).joined(separator: ", ")
            throw GatewayError.invalidRequest("`multi_factor.type` must be one of: \(known).")
        }
        switch kind {
        case .signIn:
            try object.rejectUnknown(allowing: ["type", "pending_credential", "enrollment_id"])
            let credential = try object.string("pending_credential", required: true, maxLength: 8192) ?? ""
            let enrollment = try object.string("enrollment_id", required: true, maxLength: 128) ?? ""
            for (name, value) in [("pending_credential", credential), ("enrollment_id", enrollment)]
            where !isVisibleASCII(value) {
                throw GatewayError.invalidRequest(
                    "`multi_factor.\(name)` must be the value Firebase returned, without spaces.")
            }
            return .signIn(pendingCredential: credential, enrollmentID: enrollment)
        case .enroll:
            try object.rejectUnknown(allowing: ["type", "id_token", "display_name"])
            let idToken = try object.string("id_token", required: true, maxLength: 8192) ?? ""
            if !isVisibleASCII(idToken) {
                throw GatewayError.invalidRequest("`multi_factor.id_token` must be the user's ID token, without spaces.")
            }
            let name = try object.string("display_name", maxLength: 128)
            if let name, name.contains(where: { $0.isNewline || ($0.asciiValue.map { $0 < 0x20 } ?? false) }) {
                throw GatewayError.invalidRequest("`multi_factor.display_name` must be one line of text.")
            }
            return .enroll(idToken: idToken, displayName: name)
        }
    }

    static func parseChannel(_ name: String, field: String) throws(GatewayError) -> Channel {
        guard let channel = Channel(rawValue: name) else {
            let known = Channel.allCases.map(\.rawValue).joined(separator: ", ")
            throw GatewayError(.unsupportedChannel, "`\(field)` must be one of: \(known).")
        }
        return channel
    }

    /// The optional `client_context` object: the end user's IP, user agent, device id and app platform.
    static func parseClientContext(_ reader: JSONObjectReader) throws(GatewayError) -> ClientContext {
        guard let object = try reader.object("client_context") else { return ClientContext() }
        try object.rejectUnknown(allowing: ["ip", "user_agent", "device_id", "platform"])
        let ip = try object.string("ip", maxLength: 64)
        if let ip, !isIPAddress(ip) {
            throw GatewayError.invalidRequest("`client_context.ip` must be an IPv4 or IPv6 address.")
        }
        var platform: ClientContext.Platform?
        if let name = try object.string("platform", maxLength: 16) {
            guard let known = ClientContext.Platform(rawValue: name) else {
                let names = ClientContext.Platform.allCases.map(\.rawValue).joined(separator: ", ")
                throw GatewayError.invalidRequest("`client_context.platform` must be one of: \(names).")
            }
            platform = known
        }
        return ClientContext(
            ipAddress: ip, userAgent: try object.string("user_agent", maxLength: 512),
            deviceID: try object.string("device_id", maxLength: 128), platform: platform)
    }

    static func isIPAddress(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count == 4 {
            return parts.allSatisfy { part in
                (1...3).contains(part.count) && part.allSatisfy(\.isASCII) && UInt8(part) != nil
            }
        }
        return text.contains(":") && text.count <= 45
            && text.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
    }

    /// The optional `channel_options` object: a push factor and its prompt.
    static func parseChannelOptions(_ reader: JSONObjectReader) throws(GatewayError) -> ChannelOptions {
        guard let object = try reader.object("channel_options") else { return ChannelOptions() }
        try object.rejectUnknown(allowing: ["factor_id", "prompt"])
        var options = ChannelOptions(factorID: try object.string("factor_id", maxLength: 64))
        if let prompt = try object.object("prompt") {
            try prompt.rejectUnknown(allowing: ["message", "details", "hidden_details"])
            let message = try prompt.string("message", required: true, maxLength: 256) ?? ""
            var details: [ChannelOptions.Prompt.Detail] = []
            for (index, item) in (try prompt.objectArray("details", maxCount: 10) ?? []).enumerated() {
                try item.rejectUnknown(allowing: ["label", "value"])
                guard let label = try item.string("label", required: true, maxLength: 64),
                    let value = try item.string("value", required: true, maxLength: 256)
                else { throw GatewayError.invalidRequest("`channel_options.prompt.details[\(index)]` is incomplete.") }
                details.append(ChannelOptions.Prompt.Detail(label: label, value: value))
            }
            options.prompt = ChannelOptions.Prompt(
                message: message, details: details,
                hiddenDetails: try prompt.stringMap("hidden_details", maxCount: 20, maxLength: 256) ?? [:])
        }
        return options
    }

    /// The optional `app_verification` object of a start or a resend.
    static func parseProof(_ reader: JSONObjectReader) throws(GatewayError) -> AppVerificationProof? {
        guard let object = try reader.object("app_verification") else { return nil }
        try object.rejectUnknown(allowing: ["type", "token", "secret"])
        let kind = try proofKind(try object.string("type", required: true, maxLength: 32) ?? "")
        let token = try object.string("token", required: true, maxLength: 8192) ?? ""
        let secret = try object.string("secret", maxLength: 1024)
        if kind == .iosReceipt && secret == nil {
            throw GatewayError.invalidRequest("`app_verification.secret` is required with type ios_receipt.")
        }
        return AppVerificationProof(kind: kind, token: token, secret: secret)
    }

    /// Whether `value` is non-empty and only visible ASCII (`!` to `~`): the shape of Firebase's credentials and
    /// tokens (the OpenAPI pattern `^[!-~]+$`).
    static func isVisibleASCII(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }

    /// The proof kind `app_verification.type` names. A retired kind (`safety_net`) is refused with the kind
    /// that replaced it, so an app still sending one learns what to send instead.
    static func proofKind(_ name: String) throws(GatewayError) -> AppVerificationProof.Kind {
        if let replacement = AppVerificationProof.retiredKinds[name] {
            throw GatewayError.invalidRequest(
                "`app_verification.type` `\(name)` is no longer accepted: Google shut SafetyNet Attestation down "
                    + "and Firebase no longer takes its tokens. Send a `\(replacement.rawValue)` token instead.")
        }
        guard let kind = AppVerificationProof.Kind(rawValue: name) else {
            let known = AppVerificationProof.Kind.allCases.map(\.rawValue).joined(separator: ", ")
            throw GatewayError.invalidRequest("`app_verification.type` must be one of: \(known).")
        }
        return kind
    }

    static func isLanguageTag(_ tag: String) -> Bool {
        let parts = tag.split(separator: "-", omittingEmptySubsequences: false)
        guard let first = parts.first, (2...3).contains(first.count), first.allSatisfy({ $0.isASCII && $0.isLetter })
        else { return false }
        return parts.dropFirst().allSatisfy {
            (1...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
        }
    }

    // MARK: check, resend, cancel, get

    @Sendable func check(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        var request = request
        let id = try context.parameters.require("id")
        let reader = try JSONObjectReader(data: try await Self.body(of: &request, context: context), allowEmpty: true)
        try reader.rejectUnknown(allowing: ["code", "client_context"])
        let code = try reader.string("code", required: true, maxLength: 64) ?? ""
        if code.contains(where: { !$0.isASCII || $0.isWhitespace }) {
            throw GatewayError.invalidRequest("`code` must be the code the user received, without spaces.")
        }
        let outcome = try await service.check(
            CheckVerification(verificationID: id, code: code, clientContext: try Self.parseClientContext(reader)),
            owner: Self.owner(context), apiKeyID: context.apiKey?.id)
        return JSONResponse.response(render(outcome))
    }

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

    @Sendable func challenge(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        var request = request
        let id = try context.parameters.require("id")
        let reader = try JSONObjectReader(data: try await Self.body(of: &request, context: context))
        try reader.rejectUnknown(allowing: ["answer", "client_context"])
        guard let answer = try reader.object("answer") else {
            throw GatewayError.invalidRequest("`answer` is required: the app's answer to the challenge.")
        }
        let record = try await service.submitChallenge(
            id: id,
            answer: ChallengeAnswer(answer: .object(answer.fields), clientContext: try Self.parseClientContext(reader)),
            owner: Self.owner(context))
        return JSONResponse.response(Self.render(record, now: service.clock.now))
    }

    @Sendable func resend(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        var request = request
        let id = try context.parameters.require("id")
        let reader = try JSONObjectReader(data: try await Self.body(of: &request, context: context), allowEmpty: true)
        try reader.rejectUnknown(allowing: ["channel", "app_verification", "client_context"])
        let proof = try Self.parseProof(reader)
        let channel = try reader.string("channel", maxLength: 32).map { (name) throws(GatewayError) in
            try Self.parseChannel(name, field: "channel")
        }
        let record = try await service.resend(
            id: id,
            request: ResendRequest(
                channel: channel, appVerification: proof, clientContext: try Self.parseClientContext(reader)),
            owner: Self.owner(context))
        return JSONResponse.response(Self.render(record, now: service.clock.now))
    }

    @Sendable func cancel(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        var request = request
        let id = try context.parameters.require("id")
        let reader = try JSONObjectReader(data: try await Self.body(of: &request, context: context), allowEmpty: true)
        try reader.rejectUnknown(allowing: [])
        let record = try await service.cancel(id: id, owner: Self.owner(context))
        return JSONResponse.response(Self.render(record, now: service.clock.now))
    }

    @Sendable func get(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let id = try context.parameters.require("id")
        var refresh = false
        if let value = request.uri.queryParameters.get("refresh") {
            guard value == "true" || value == "false" else {
                throw GatewayError.invalidRequest("`refresh` takes `true` or `false`.")
            }
            refresh = value == "true"
        }
        var body = render(try await service.read(id: id, refresh: refresh, owner: Self.owner(context)))
        if let include = request.uri.queryParameters.get("include") {
            guard include == "events" || include == "timeline" else {
                throw GatewayError.invalidRequest("`include` takes the value `timeline` (or its older name `events`).")
            }
            let events = try await service.events(id: id)
            if case .object(var fields) = body {
                fields[String(include)] = .array(
                    events.map { event in
                        [
                            "kind": .string(event.kind.rawValue), "at": .string(Self.timestamp(event.at)),
                            "detail": .object(event.detail.mapValues(JSONValue.string)),
                        ]
                    })
                body = .object(fields)
            }
        }
        return JSONResponse.response(body)
    }

    @Sendable func action(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        var request = request
        let providerID = try context.parameters.require("provider")
        let name = try context.parameters.require("action")
        guard let provider = service.registry.provider(providerID) else {
            throw GatewayError(.notFound, "No provider named `\(providerID)` is configured.")
        }
        guard let action = provider.actions.first(where: { $0.name == name }) else {
            throw GatewayError(.notFound, "Provider `\(providerID)` has no action named `\(name)`.")
        }
        let reader = try JSONObjectReader(data: try await Self.body(of: &request, context: context), allowEmpty: true)
        let input = try reader.object("input")?.fields ?? [:]
        try reader.rejectUnknown(allowing: ["input"])
        guard input.count <= 32 else { throw GatewayError.invalidRequest("`input` has more than 32 entries.") }
        for key in action.requiredInputs where input[key] == nil {
            throw GatewayError.invalidRequest("`input.\(key)` is required by action `\(name)`.")
        }
        let output = try await provider.perform(action: name, input: input)
        return JSONResponse.response([
            "provider": .string(providerID), "action": .string(name),
            "output": .object(output),
        ])
    }

    // MARK: helpers

    /// The client's address: the trusted proxy's header (its first, left-most entry) when one is
    /// configured, else the connection's peer.
    func clientIP(_ request: Request, context: GatewayRequestContext) -> String? {
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
        return .object(fields)
    }

    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: false))
    }

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
