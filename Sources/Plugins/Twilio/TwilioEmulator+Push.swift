import Crypto
import Foundation
import GatewayCore
import HTTPTypes

/// Verify Push on the emulator's wire (the vendor notes `docs/vendors/twilio.md` §3, `specs/twilio_verify_v2.yaml`):
/// access tokens, entities, push factors with ES256 bindings, factor verification by the device's signed
/// proof, challenges with details, hidden details, expiry and limits, approval or denial only with a JWT
/// signed by the factor's key, the push payload in the outbox, and webhooks signed as Twilio signs them.
extension TwilioEmulator {
    /// Who is calling: the backend's account credentials, a device enrolling with an access token, or a
    /// device authenticating with a JWT signed by its factor's key.
    enum Caller: Sendable {
        case account
        case enrolment(TwilioPushState.AccessToken)
        case device(TwilioPushState.Factor)
    }

    // Limits. Twilio documents the first two; the others are the emulator's choices (docs/vendors/twilio.md §3.4 names
    // the codes, not the numbers).
    static let maxPushFactors = 20
    static let maxNotifications = 3
    static let maxFactorVerifications = 5
    static let maxPendingChallenges = 20
    static let maxFactorCreationsPerMinute = 10
    static let defaultChallengeLifetime: TimeInterval = 300
    static let maxChallengeLifetime: TimeInterval = 3600
    /// The response fields a device signs when it answers a challenge (`Twilio-Verify-Signature-Fields`).
    static let signatureFields = [
        "sid", "service_sid", "entity_sid", "identity", "factor_sid", "date_created", "details", "expiration_date",
    ]

    /// `token:<access token>` or `token:<JWT>`, the device's Basic auth (docs/vendors/twilio.md §3.1–3.2).
    func deviceCaller(_ header: String?, now: Date) async -> Caller? {
        guard let header, header.count > 6, header.prefix(6).lowercased() == "basic ",
            let data = Data(base64Encoded: header.dropFirst(6).trimmingCharacters(in: .whitespaces)),
            let text = String(data: data, encoding: .utf8), text.hasPrefix("token:")
        else { return nil }
        let secret = String(text.dropFirst("token:".count))
        if let jwt = TwilioPushCrypto.parseJWT(secret) {
            guard let kid = jwt.header["kid"]?.stringValue,
                let factor = await withPush(now: now, { try $0.factor(credential: kid) }) ?? nil,
                let key = TwilioPushCrypto.publicKey(base64: factor.publicKey), jwt.isSigned(by: key),
                jwt.claims["sub"]?.stringValue == TwilioSandbox.accountSID,
                let exp = jwt.claims["exp"]?.numberValue, exp > now.timeIntervalSince1970,
                (jwt.claims["nbf"]?.numberValue ?? 0) <= now.timeIntervalSince1970 + 60
            else { return nil }
            return .device(factor)
        }
        return (await withPush(now: now) { try $0.accessToken(secret) } ?? nil).map(Caller.enrolment)
    }

    /// Routes `AccessTokens` and `Entities/…`.
    func pushRoute(_ rest: [String], request: EmulatorRequest, caller: Caller, now: Date) async -> TransportResponse {
        let form = Self.formPairs(request.body)
        let single = Dictionary(form, uniquingKeysWith: { _, last in last })
        let isAccount: Bool
        if case .account = caller { isAccount = true } else { isAccount = false }
        let denied = Self.error(401, code: 20003, message: "Authenticate")
        if rest == ["AccessTokens"] {
            guard request.method == .post else { return Self.methodNotAllowed() }
            return isAccount ? await createAccessToken(single, now: now) : denied
        }
        guard rest.first == "Entities" else { return Self.notFound() }
        if rest.count == 1 {
            guard isAccount else { return denied }
            switch request.method {
            case .post: return await createEntity(single, now: now)
            case .get: return await listEntities(now: now)
            default: return Self.methodNotAllowed()
            }
        }
        let identity = rest[1]
        guard Self.isIdentity(identity) else { return Self.pushInvalid("Identity") }
        // A device reaches only its own entity; an access token only creates a factor.
        switch caller {
        case .account: break
        case .device(let factor): guard factor.identity == identity else { return Self.notFound() }
        case .enrolment: guard rest.count == 3, rest[2] == "Factors", request.method == .post else { return denied }
        }
        switch (Array(rest.dropFirst(2)), request.method) {
        case ([], .get):
            guard isAccount else { return denied }
            guard let found = await withPush(now: now, { try $0.entity(identity) }) else {
                return Self.serverError(500)
            }
            return found.map { Self.json(200, Self.entityJSON($0)) } ?? Self.notFound()
        case ([], .delete):
            guard isAccount else { return denied }
            guard
                let existed = await withPush(
                    now: now,
                    { state -> Bool in
                        let found = try state.entity(identity) != nil
                        try state.deleteEntity(identity)
                        return found
                    })
            else { return Self.serverError(500) }
            return existed ? TransportResponse(status: .noContent) : Self.notFound()
        case (["Factors"], .post):
            return await createFactor(identity: identity, form: single, caller: caller, now: now)
        case (["Factors"], .get):
            guard isAccount else { return denied }
            guard let factors = await withPush(now: now, { try $0.factors(of: identity) }) else {
                return Self.serverError(500)
            }
            return Self.json(200, Self.page("factors", identity: identity, items: factors.map { Self.factorJSON($0) }))
        case (let path, .get) where path.count == 2 && path[0] == "Factors":
            if case .device(let own) = caller, own.sid != path[1] { return Self.notFound() }
            let sid = path[1]
            guard let found = await withPush(now: now, { try $0.factor(sid) }) else { return Self.serverError(500) }
            return found.flatMap { $0.identity == identity ? $0 : nil }
                .map { Self.json(200, Self.factorJSON($0)) } ?? Self.notFound()
        case (let path, .post) where path.count == 2 && path[0] == "Factors":
            if case .device(let own) = caller, own.sid != path[1] { return Self.notFound() }
            return await updateFactor(identity: identity, sid: path[1], form: single, now: now)
        case (let path, .delete) where path.count == 2 && path[0] == "Factors":
            guard isAccount else { return denied }
            return await deleteFactor(identity: identity, sid: path[1], now: now)
        case (["Challenges"], .post):
            guard isAccount else { return denied }
            return await createChallenge(identity: identity, form: form, now: now)
        case (["Challenges"], .get):
            let query = request.queryItems
            guard var challenges = await withPush(now: now, { try $0.challenges(of: identity) }) else {
                return Self.serverError(500)
            }
            if let factor = query["FactorSid"] { challenges = challenges.filter { $0.factorSID == factor } }
            if let status = query["Status"] { challenges = challenges.filter { $0.status == status } }
            if query["Order"] == "desc" { challenges.reverse() }
            return Self.json(
                200, Self.page("challenges", identity: identity, items: challenges.map { Self.challengeJSON($0) }))
        case (let path, .get) where path.count == 2 && path[0] == "Challenges":
            let sid = path[1]
            guard let found = await withPush(now: now, { try $0.challenge(sid) }) else { return Self.serverError(500) }
            guard let challenge = found, challenge.identity == identity else { return Self.notFound() }
            var response = Self.json(200, Self.challengeJSON(challenge))
            if challenge.status == "pending" {
                response.headerFields[Self.signatureFieldsHeader] = Self.signatureFields.joined(separator: ",")
            }
            return response
        case (let path, .post) where path.count == 2 && path[0] == "Challenges":
            return await updateChallenge(identity: identity, sid: path[1], form: single, now: now)
        case (let path, .post) where path.count == 3 && path[0] == "Challenges" && path[2] == "Notifications":
            guard isAccount else { return denied }
            return await notify(identity: identity, sid: path[1], form: single, now: now)
        case (let path, _) where (1...3).contains(path.count):
            return Self.methodNotAllowed()
        default:
            return Self.notFound()
        }
    }

    static let signatureFieldsHeader = HTTPField.Name("Twilio-Verify-Signature-Fields")!

    // MARK: access tokens and entities

    private func createAccessToken(_ form: [String: String], now: Date) async -> TransportResponse {
        guard let identity = form["Identity"], Self.isIdentity(identity) else {
            return Self.error(400, code: 60305, message: "Access Token parameters invalid: Identity")
        }
        guard form["FactorType"] == "push" else {
            return Self.error(400, code: 60305, message: "Access Token parameters invalid: FactorType")
        }
        var ttl = 60
        if let text = form["Ttl"] {
            guard let value = Int(text), (60...300).contains(value) else {
                return Self.error(400, code: 60305, message: "Access Token parameters invalid: Ttl")
            }
            ttl = value
        }
        let friendlyName = form["FactorFriendlyName"]
        if let friendlyName, friendlyName.count > 64 {
            return Self.error(400, code: 60305, message: "Access Token parameters invalid: FactorFriendlyName")
        }
        let token = TwilioPushState.AccessToken(
            sid: "YK" + Self.randomHex(), identity: identity,
            token: "eyJ" + Self.randomHex() + Self.randomHex(), friendlyName: friendlyName, ttl: ttl, createdAt: now)
        guard
            await withPush(
                now: now,
                { state -> Bool in
                    try state.putToken(token)
                    return true
                }) != nil
        else {
            return Self.serverError(500)
        }
        return Self.json(201, Self.accessTokenJSON(token))
    }

    private func createEntity(_ form: [String: String], now: Date) async -> TransportResponse {
        guard let identity = form["Identity"], Self.isIdentity(identity) else { return Self.pushInvalid("Identity") }
        guard
            let created = await withPush(
                now: now,
                { state -> TwilioPushState.Entity? in
                    guard try state.entity(identity) == nil else { return nil }
                    let entity = TwilioPushState.Entity(
                        sid: "YE" + Self.randomHex(), identity: identity, createdAt: now)
                    try state.putEntity(entity)
                    return entity
                })
        else { return Self.serverError(500) }
        guard let outcome = created else { return Self.error(409, code: 60301, message: "Entity already exists") }
        return Self.json(201, Self.entityJSON(outcome))
    }

    private func listEntities(now: Date) async -> TransportResponse {
        guard let entities = await withPush(now: now, { try $0.entities() }) else { return Self.serverError(500) }
        return Self.json(
            200,
            JSONValue.object([
                "entities": .array(entities.map(Self.entityJSON)),
                "meta": Self.meta("entities", url: Self.resourceBase + "/Entities"),
            ]))
    }

    // MARK: factors

    private func createFactor(identity: String, form: [String: String], caller: Caller, now: Date) async
        -> TransportResponse
    {
        if case .enrolment(let token) = caller, token.identity != identity || token.expiresAt < now {
            return Self.error(403, code: 60313, message: "Unauthorized factor creation")
        }
        guard let name = form["FriendlyName"], !name.isEmpty, name.count <= 64 else {
            return Self.pushInvalid("FriendlyName")
        }
        guard let type = form["FactorType"] else { return Self.pushInvalid("FactorType") }
        guard type == "push" else { return Self.pushInvalid("FactorType") }
        guard form["Binding.Alg"] == "ES256", let publicKey = form["Binding.PublicKey"],
            TwilioPushCrypto.publicKey(base64: publicKey) != nil
        else { return Self.error(400, code: 60314, message: "Factor binding format invalid") }
        guard let appID = form["Config.AppId"], !appID.isEmpty, appID.count <= 100 else {
            return Self.pushInvalid("Config.AppId")
        }
        guard let platform = form["Config.NotificationPlatform"], ["apn", "fcm", "none"].contains(platform) else {
            return Self.pushInvalid("Config.NotificationPlatform")
        }
        let token = form["Config.NotificationToken"]
        if platform != "none" {
            guard let token, (32...255).contains(token.count) else {
                return Self.pushInvalid("Config.NotificationToken")
            }
        }
        var metadata: [String: String]?
        if let text = form["Metadata"] {
            guard text.count <= 1024, let parsed = Self.stringObject(text) else { return Self.pushInvalid("Metadata") }
            metadata = parsed
        }
        let (version, factorMetadata) = (form["Config.SdkVersion"], metadata)
        let outcome = await pushOutcome(
            now: now,
            { state -> Result<TwilioPushState.Factor, TransportResponseBox> in
                let existing = try state.factors(of: identity)
                if existing.contains(where: { $0.publicKey == publicKey }) {
                    return .failure(.init(Self.error(409, code: 60317, message: "Factor already exists")))
                }
                if existing.count >= Self.maxPushFactors {
                    return .failure(.init(Self.error(400, code: 60315, message: "Max factors per entity reached")))
                }
                let recent = try state.factorCreations(identity)
                if recent.count >= Self.maxFactorCreationsPerMinute {
                    return .failure(
                        .init(
                            Self.error(
                                429, code: 60326, message: "Too many requests to create factors for the entity")))
                }
                try state.setFactorCreations(identity, recent + [now])
                let known = try state.entity(identity)
                let entity =
                    known
                    ?? TwilioPushState.Entity(sid: "YE" + Self.randomHex(), identity: identity, createdAt: now)
                if known == nil { try state.putEntity(entity) }
                let factor = TwilioPushState.Factor(
                    sid: "YF" + Self.randomHex(), identity: identity, entitySID: entity.sid, friendlyName: name,
                    status: "unverified", publicKey: publicKey, credentialSID: "CR" + Self.randomHex(),
                    appID: appID,
                    notificationPlatform: platform, notificationToken: token, sdkVersion: version,
                    metadata: factorMetadata, verificationAttempts: 0, createdAt: now, updatedAt: now)
                try state.putFactor(factor)
                return .success(factor)
            })
        switch outcome {
        case .failure(let box): return box.response
        case .success(let factor):
            await sendWebhook(type: "factor.created", factor: factor, challenge: nil)
            return Self.json(201, Self.factorJSON(factor, withBinding: true))
        }
    }

    /// `POST …/Factors/{sid}`: the device's first signed proof verifies the factor; later calls update it.
    private func updateFactor(identity: String, sid: String, form: [String: String], now: Date) async
        -> TransportResponse
    {
        let outcome = await pushOutcome(
            now: now,
            { state -> Result<(TwilioPushState.Factor, Bool), TransportResponseBox> in
                guard var factor = try state.factor(sid), factor.identity == identity else {
                    return .failure(.init(Self.notFound()))
                }
                var verifiedNow = false
                if let proof = form["AuthPayload"], factor.status == "unverified" {
                    guard factor.verificationAttempts < Self.maxFactorVerifications else {
                        return .failure(
                            .init(Self.error(429, code: 60310, message: "Factor verification attempts reached")))
                    }
                    guard let key = TwilioPushCrypto.publicKey(base64: factor.publicKey),
                        TwilioPushCrypto.verifiesFactor(proof: proof, sid: sid, key: key)
                    else {
                        factor.verificationAttempts += 1
                        try state.putFactor(factor)
                        return .failure(.init(Self.error(403, code: 60311, message: "Factor verification failed")))
                    }
                    factor.status = "verified"
                    verifiedNow = true
                }
                if let name = form["FriendlyName"] {
                    guard !name.isEmpty, name.count <= 64 else {
                        return .failure(.init(Self.pushInvalid("FriendlyName")))
                    }
                    factor.friendlyName = name
                }
                if let token = form["Config.NotificationToken"] {
                    guard (32...255).contains(token.count) else {
                        return .failure(.init(Self.pushInvalid("Config.NotificationToken")))
                    }
                    factor.notificationToken = token
                }
                if let version = form["Config.SdkVersion"] { factor.sdkVersion = version }
                factor.updatedAt = now
                try state.putFactor(factor)
                return .success((factor, verifiedNow))
            })
        switch outcome {
        case .failure(let box): return box.response
        case .success(let (factor, verifiedNow)):
            if verifiedNow { await sendWebhook(type: "factor.verified", factor: factor, challenge: nil) }
            return Self.json(200, Self.factorJSON(factor))
        }
    }

    private func deleteFactor(identity: String, sid: String, now: Date) async -> TransportResponse {
        guard
            let deleted = await withPush(
                now: now,
                { state -> TwilioPushState.Factor? in
                    guard let factor = try state.factor(sid), factor.identity == identity else { return nil }
                    try state.deleteFactor(sid)
                    return factor
                })
        else { return Self.serverError(500) }
        guard let removed = deleted else { return Self.notFound() }
        await sendWebhook(type: "factor.deleted", factor: removed, challenge: nil)
        return TransportResponse(status: .noContent)
    }

    // MARK: challenges

    private func createChallenge(identity: String, form: [(String, String)], now: Date) async -> TransportResponse {
        let single = Dictionary(form, uniquingKeysWith: { _, last in last })
        guard let factorSID = single["FactorSid"], TwilioConfiguration.matches(factorSID, prefixes: ["YF"]) else {
            return Self.pushInvalid("FactorSid")
        }
        guard single["AuthPayload"] == nil else { return Self.pushInvalid("AuthPayload") }
        guard let message = single["Details.Message"], !message.isEmpty, message.count <= 256 else {
            return Self.pushInvalid("Details.Message")
        }
        var fields: [TwilioPushState.Field] = []
        for (name, value) in form where name == "Details.Fields" {
            guard let object = Self.stringObject(value), object.count == 2, let label = object["label"],
                let text = object["value"], label.count <= 36, text.count <= 128
            else { return Self.pushInvalid("Details.Fields") }
            fields.append(TwilioPushState.Field(label: label, value: text))
        }
        guard fields.count <= 20 else { return Self.pushInvalid("Details.Fields") }
        var hidden: [String: String]?
        if let text = single["HiddenDetails"] {
            guard text.count <= 1024, let parsed = Self.stringObject(text) else {
                return Self.pushInvalid("HiddenDetails")
            }
            hidden = parsed
        }
        var expiresAt = now.addingTimeInterval(Self.defaultChallengeLifetime)
        if let text = single["ExpirationDate"] {
            guard let date = TwilioWire.parseDate(text), date > now,
                date <= now.addingTimeInterval(Self.maxChallengeLifetime)
            else { return Self.pushInvalid("ExpirationDate") }
            expiresAt = date
        }
        let (challengeFields, hiddenDetails, expiration) = (fields, hidden, expiresAt)
        let outcome = await pushOutcome(
            now: now,
            { state -> Result<(TwilioPushState.Challenge, TwilioPushState.Factor), TransportResponseBox> in
                guard let factor = try state.factor(factorSID), factor.identity == identity else {
                    return .failure(.init(Self.notFound()))
                }
                guard factor.status == "verified" else {
                    return .failure(.init(Self.error(403, code: 60318, message: "Factor is unverified")))
                }
                let pending = try state.challenges(of: identity).filter {
                    $0.factorSID == factorSID && $0.status == "pending"
                }
                guard pending.count < Self.maxPendingChallenges else {
                    return .failure(
                        .init(Self.error(429, code: 60312, message: "Challenge creation limit reached")))
                }
                let challenge = TwilioPushState.Challenge(
                    sid: "YC" + Self.randomHex(), identity: identity, entitySID: factor.entitySID,
                    factorSID: factorSID,
                    status: "pending", message: message, fields: challengeFields, hiddenDetails: hiddenDetails,
                    metadata: nil, notifications: 0, createdAt: now, updatedAt: now, respondedAt: nil,
                    expiresAt: expiration)
                try state.putChallenge(challenge)
                return .success((challenge, factor))
            })
        return pushed(outcome, now: now, answer: Self.challengeJSON)
    }

    /// `POST …/Challenges/{sid}`: the device approves or denies with a JWT signed by the factor's key.
    private func updateChallenge(identity: String, sid: String, form: [String: String], now: Date) async
        -> TransportResponse
    {
        guard let payload = form["AuthPayload"], !payload.isEmpty, payload.count <= 5456 else {
            return Self.pushInvalid("AuthPayload")
        }
        var metadata: [String: String]?
        if let text = form["Metadata"] {
            guard text.count <= 1024, let parsed = Self.stringObject(text) else { return Self.pushInvalid("Metadata") }
            metadata = parsed
        }
        let answer = metadata
        let outcome = await pushOutcome(
            now: now,
            { state -> Result<(TwilioPushState.Challenge, TwilioPushState.Factor), TransportResponseBox> in
                let pending = try Self.pendingChallenge(sid, of: identity, in: state)
                guard case .success((var challenge, let factor)) = pending else { return pending }
                let failed = Self.error(403, code: 60324, message: "Challenge verification failed")
                guard let jwt = TwilioPushCrypto.parseJWT(payload),
                    let key = TwilioPushCrypto.publicKey(base64: factor.publicKey),
                    jwt.isSigned(by: key), let status = jwt.claims["status"]?.stringValue,
                    status == "approved" || status == "denied"
                else { return .failure(.init(failed)) }
                let current = Self.challengeJSON(challenge)
                for field in Self.signatureFields where jwt.claims[field] != current[field] {
                    return .failure(.init(failed))
                }
                challenge.status = status
                challenge.respondedAt = now
                challenge.updatedAt = now
                if let answer { challenge.metadata = answer }
                try state.putChallenge(challenge)
                return .success((challenge, factor))
            })
        switch outcome {
        case .failure(let box): return box.response
        case .success(let (challenge, factor)):
            await sendWebhook(type: "challenge." + challenge.status, factor: factor, challenge: challenge)
            return Self.json(200, Self.challengeJSON(challenge))
        }
    }

    /// Runs `body` on the push state in one transaction: its success, or the answer to give instead (the Twilio
    /// error it chose, or a 500 when the sandbox's file failed).
    func pushOutcome<T: Sendable>(
        now: Date, _ body: @escaping @Sendable (TwilioPushState) throws -> Result<T, TransportResponseBox>
    ) async -> Result<T, TransportResponseBox> {
        await withPush(now: now, body) ?? .failure(.init(Self.serverError(500)))
    }

    /// The identity's challenge `sid` and its factor while it is pending, or Twilio's answer why not: 404, 60323
    /// (expired) or 60322 (already responded).
    static func pendingChallenge(
        _ sid: String, of identity: String, in state: TwilioPushState
    ) throws -> Result<(TwilioPushState.Challenge, TwilioPushState.Factor), TransportResponseBox> {
        guard let challenge = try state.challenge(sid), challenge.identity == identity,
            let factor = try state.factor(challenge.factorSID)
        else { return .failure(.init(Self.notFound())) }
        if challenge.status == "expired" {
            return .failure(.init(Self.error(403, code: 60323, message: "Challenge expired")))
        }
        guard challenge.status == "pending" else {
            return .failure(.init(Self.error(403, code: 60322, message: "Challenge already responded")))
        }
        return .success((challenge, factor))
    }

    /// `POST …/Challenges/{sid}/Notifications`: sends the push again (at most three times).
    private func notify(identity: String, sid: String, form: [String: String], now: Date) async -> TransportResponse {
        var ttl = 300
        if let text = form["Ttl"] {
            guard let value = Int(text), (0...300).contains(value) else { return Self.pushInvalid("Ttl") }
            ttl = value
        }
        let outcome = await pushOutcome(
            now: now,
            { state -> Result<(TwilioPushState.Challenge, TwilioPushState.Factor), TransportResponseBox> in
                let pending = try Self.pendingChallenge(sid, of: identity, in: state)
                guard case .success((var challenge, let factor)) = pending else { return pending }
                guard factor.notificationPlatform != "none" else {
                    return .failure(
                        .init(Self.error(400, code: 60307, message: "Cannot resend push to 'none' platform")))
                }
                guard challenge.notifications < Self.maxNotifications else {
                    return .failure(
                        .init(
                            Self.error(
                                429, code: 60309, message: "Push notifications limit for a challenge reached")))
                }
                challenge.notifications += 1
                try state.putChallenge(challenge)
                return .success((challenge, factor))
            })
        return pushed(outcome, now: now) { challenge in
            [
                "sid": .string("NT" + Self.randomHex()), "account_sid": .string(TwilioSandbox.accountSID),
                "service_sid": .string(TwilioSandbox.serviceSID), "entity_sid": .string(challenge.entitySID),
                "identity": .string(identity), "challenge_sid": .string(challenge.sid), "priority": "high",
                "ttl": .number(Double(ttl)), "date_created": .string(TwilioWire.format(now)),
            ]
        }
    }

    /// Sends the push of the challenge `outcome` stored and answers 201 with `answer` of it, or the answer the
    /// transaction chose instead.
    private func pushed(
        _ outcome: Result<(TwilioPushState.Challenge, TwilioPushState.Factor), TransportResponseBox>, now: Date,
        answer: (TwilioPushState.Challenge) -> JSONValue
    ) -> TransportResponse {
        switch outcome {
        case .failure(let box): return box.response
        case .success(let (challenge, factor)):
            deliverPush(challenge, factor: factor, now: now)
            return Self.json(201, answer(challenge))
        }
    }

    /// The push the app receives (docs/vendors/twilio.md §3.4), recorded in the outbox; a factor on platform `none`
    /// gets none.
    private func deliverPush(_ challenge: TwilioPushState.Challenge, factor: TwilioPushState.Factor, now: Date) {
        guard factor.notificationPlatform != "none" else { return }
        let payload: JSONValue = [
            "type": "verify_push_challenge", "challenge_sid": .string(challenge.sid),
            "factor_sid": .string(factor.sid), "message": .string(challenge.message),
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let text = (try? encoder.encode(payload)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        outbox.record(
            SandboxOutbox.Message(
                provider: "twilio", kind: .push, channel: factor.notificationPlatform, to: challenge.identity,
                code: nil, text: text, sentAt: now))
    }

    // MARK: webhooks

    /// Calls the gateway's callback route as a Verify Push webhook (events `*`, version v2), form-encoded and
    /// signed with `X-Twilio-Signature` over the full URL. The sandbox's service has this one webhook.
    func sendWebhook(type: String, factor: TwilioPushState.Factor, challenge: TwilioPushState.Challenge?) async {
        guard let url = callbacks.url() else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        func text(_ value: JSONValue) -> String {
            (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
        }
        var parameters: [(String, String)] = [
            ("uuid", UUID().uuidString.lowercased()), ("type", type), ("account_sid", TwilioSandbox.accountSID),
            ("service_sid", TwilioSandbox.serviceSID), ("entity_identity", factor.identity),
            ("factor_sid", factor.sid), ("factor_type", "push"), ("factor_friendly_name", factor.friendlyName),
        ]
        if let challenge {
            let json = Self.challengeJSON(challenge)
            parameters += [
                ("challenge_sid", challenge.sid), ("challenge_status", challenge.status),
                ("challenge_details", text(json["details"] ?? .null)),
                ("challenge_hidden_details", text(json["hidden_details"] ?? .null)),
                ("challenge_metadata", text(json["metadata"] ?? .null)),
                ("challenge_date_updated", TwilioWire.format(challenge.updatedAt)),
            ]
        }
        var headers = HTTPFields()
        headers[.contentType] = "application/x-www-form-urlencoded"
        headers[TwilioPushCrypto.signatureHeader] = TwilioPushCrypto.webhookSignature(
            url: url.absoluteString, parameters: parameters, authToken: TwilioSandbox.authToken)
        let request = TransportRequest(
            method: .post, url: url, headerFields: headers, body: Data(FormEncoding.encode(parameters).utf8))
        do {
            let response = try await callbacks.send(request)
            logger.debug(
                "twilio emulator webhook delivered",
                metadata: ["type": "\(type)", "http.status": "\(response.status.code)"])
        } catch {
            logger.notice("twilio emulator webhook failed", metadata: ["type": "\(type)", "error": "\(error)"])
        }
    }

    // MARK: resources

    static func entityJSON(_ entity: TwilioPushState.Entity) -> JSONValue {
        let url = resourceBase + "/Entities/" + entity.identity
        return [
            "sid": .string(entity.sid), "identity": .string(entity.identity),
            "account_sid": .string(TwilioSandbox.accountSID), "service_sid": .string(TwilioSandbox.serviceSID),
            "date_created": .string(TwilioWire.format(entity.createdAt)),
            "date_updated": .string(TwilioWire.format(entity.createdAt)), "url": .string(url),
            "links": ["factors": .string(url + "/Factors"), "challenges": .string(url + "/Challenges")],
        ]
    }

    static func factorJSON(_ factor: TwilioPushState.Factor, withBinding: Bool = false) -> JSONValue {
        var fields: [String: JSONValue] = [
            "sid": .string(factor.sid), "account_sid": .string(TwilioSandbox.accountSID),
            "service_sid": .string(TwilioSandbox.serviceSID), "entity_sid": .string(factor.entitySID),
            "identity": .string(factor.identity), "date_created": .string(TwilioWire.format(factor.createdAt)),
            "date_updated": .string(TwilioWire.format(factor.updatedAt)), "friendly_name": .string(factor.friendlyName),
            "status": .string(factor.status), "factor_type": "push",
            "config": [
                "sdk_version": factor.sdkVersion.map(JSONValue.string) ?? .null, "app_id": .string(factor.appID),
                "notification_platform": .string(factor.notificationPlatform),
                "notification_token": factor.notificationToken.map(JSONValue.string) ?? .null,
                "credential_sid": .string(factor.credentialSID),
            ],
            "metadata": factor.metadata.map { .object($0.mapValues(JSONValue.string)) } ?? .null,
            "url": .string(resourceBase + "/Entities/" + factor.identity + "/Factors/" + factor.sid),
        ]
        if withBinding {
            fields["binding"] = ["alg": "ES256", "public_key": .string(factor.publicKey)]
            fields["options"] = .null
        }
        return .object(fields)
    }

    static func challengeJSON(_ challenge: TwilioPushState.Challenge) -> JSONValue {
        let url = resourceBase + "/Entities/" + challenge.identity + "/Challenges/" + challenge.sid
        return [
            "sid": .string(challenge.sid), "account_sid": .string(TwilioSandbox.accountSID),
            "service_sid": .string(TwilioSandbox.serviceSID), "entity_sid": .string(challenge.entitySID),
            "identity": .string(challenge.identity), "factor_sid": .string(challenge.factorSID),
            "date_created": .string(TwilioWire.format(challenge.createdAt)),
            "date_updated": .string(TwilioWire.format(challenge.updatedAt)),
            "date_responded": challenge.respondedAt.map { .string(TwilioWire.format($0)) } ?? .null,
            "expiration_date": .string(TwilioWire.format(challenge.expiresAt)), "status": .string(challenge.status),
            "responded_reason": "none",
            "details": [
                "message": .string(challenge.message), "date": .string(TwilioWire.format(challenge.createdAt)),
                "fields": .array(challenge.fields.map { ["label": .string($0.label), "value": .string($0.value)] }),
            ],
            "hidden_details": challenge.hiddenDetails.map { .object($0.mapValues(JSONValue.string)) } ?? .null,
            "metadata": challenge.metadata.map { .object($0.mapValues(JSONValue.string)) } ?? .null,
            "factor_type": "push", "url": .string(url), "links": ["notifications": .string(url + "/Notifications")],
        ]
    }

    static func accessTokenJSON(_ token: TwilioPushState.AccessToken) -> JSONValue {
        [
            "sid": .string(token.sid), "account_sid": .string(TwilioSandbox.accountSID),
            "service_sid": .string(TwilioSandbox.serviceSID), "entity_identity": .string(token.identity),
            "factor_type": "push", "factor_friendly_name": token.friendlyName.map(JSONValue.string) ?? .null,
            "token": .string(token.token), "url": .string(resourceBase + "/AccessTokens/" + token.sid),
            "ttl": .number(Double(token.ttl)), "date_created": .string(TwilioWire.format(token.createdAt)),
        ]
    }

    /// One page holding every item (the emulator never has more than a page's worth per entity).
    static func page(_ key: String, identity: String, items: [JSONValue]) -> JSONValue {
        let url = resourceBase + "/Entities/" + identity + "/" + key.prefix(1).uppercased() + key.dropFirst()
        return .object([key: .array(items), "meta": meta(key, url: url)])
    }

    static func meta(_ key: String, url: String) -> JSONValue {
        let first = url + "?PageSize=50&Page=0"
        return [
            "page": 0, "page_size": 50, "first_page_url": .string(first), "previous_page_url": .null,
            "url": .string(first), "next_page_url": .null, "key": .string(key),
        ]
    }

    // MARK: helpers

    /// Twilio's "Invalid Param" for the push resources (60300).
    static func pushInvalid(_ name: String) -> TransportResponse {
        error(400, code: 60300, message: "Invalid Param: \(name)")
    }

    static func methodNotAllowed() -> TransportResponse {
        error(405, code: 20004, message: "Method not allowed")
    }

    /// An identity as Twilio takes it: 8 to 64 dash-separated letters and digits.
    static func isIdentity(_ text: String) -> Bool {
        (8...64).contains(text.count) && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
    }

    /// A stringified JSON object whose values are all strings.
    static func stringObject(_ text: String) -> [String: String]? {
        guard let object = (try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)))?.objectValue else {
            return nil
        }
        var result: [String: String] = [:]
        for (key, value) in object {
            guard let string = value.stringValue else { return nil }
            result[key] = string
        }
        return result
    }

    /// A form body's pairs in order, repeated names kept (`Details.Fields`).
    static func formPairs(_ body: Data) -> [(String, String)] {
        String(decoding: body, as: UTF8.self).split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func unescape(_ text: Substring) -> String {
                let spaced = text.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            return (unescape(parts[0]), parts.count > 1 ? unescape(parts[1]) : "")
        }
    }
}

/// A response carried out of a lock as a failure.
struct TransportResponseBox: Error {
    let response: TransportResponse
    init(_ response: TransportResponse) { self.response = response }
}
