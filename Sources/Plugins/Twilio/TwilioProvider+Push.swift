import Foundation
import GatewayCore
import Logging

/// Verify Push (`docs/vendors/twilio.md` §3): a `push` verification is a challenge to the identity's enrolled
/// factor, approved or denied on the device; the result arrives by webhook or by a refresh.
extension TwilioProvider: FactorProvider, CallbackReceivingProvider {
    struct PushState: Codable, Sendable, Equatable {
        var identity: String
        var factorSID: String
        var message: String
        var expiresAt: Date?
    }

    /// The prompt when the request gives none (Twilio requires `Details.Message` for push).
    static let defaultPushMessage = "Do you want to approve this sign-in request?"

    // MARK: verifications

    func startPush(_ request: StartVerification) async throws(GatewayError) -> ProviderStartResult {
        guard case .identity(let identity) = request.destination, TwilioEmulator.isIdentity(identity) else {
            throw GatewayError.invalidRequest(
                "A push verification's `to` is the user identity its factor was enrolled for.")
        }
        let prompt = request.channelOptions.prompt
        let message = prompt?.message ?? Self.defaultPushMessage
        var form = [("FactorSid", try await factorToChallenge(identity, named: request.channelOptions.factorID))]
        form.append(("Details.Message", message))
        if let seconds = configuration.pushChallengeSeconds {
            form.append(
                ("ExpirationDate", TwilioWire.format(client.clock.now.addingTimeInterval(TimeInterval(seconds)))))
        }
        for detail in prompt?.details ?? [] {
            guard detail.label.count <= 36, detail.value.count <= 128 else {
                throw GatewayError.invalidRequest(
                    "Twilio takes prompt detail labels of up to 36 characters and values of up to 128.")
            }
            form.append(
                ("Details.Fields", try jsonText(["label": .string(detail.label), "value": .string(detail.value)])))
        }
        if let hidden = prompt?.hiddenDetails, !hidden.isEmpty {
            let text = try jsonText(.object(hidden.mapValues(JSONValue.string)))
            guard text.count <= 1024 else {
                throw GatewayError.invalidRequest("Twilio takes hidden details of up to 1024 characters as JSON.")
            }
            form.append(("HiddenDetails", text))
        }
        let response: TransportResponse
        do {
            response = try await call(.post, path: entityPath(identity) + "/Challenges", form: form, operation: .start)
        } catch let error where error.code == .notFound {
            throw GatewayError(.notEnrolled, "The factor is not enrolled for this identity.", vendor: error.vendor)
        }
        let challenge = try client.decode(ChallengeSummary.self, from: response, operation: .start)
        guard let sid = challenge.sid, TwilioConfiguration.matches(sid, prefixes: ["YC"]) else {
            throw client.malformed(.start, httpStatus: response.status.code)
        }
        let expiresAt = TwilioWire.parseDate(challenge.expirationDate)
        let factorSID = challenge.factorSID ?? form[0].1
        return ProviderStartResult(
            reference: sid,
            state: try ProviderState(
                PushState(identity: identity, factorSID: factorSID, message: message, expiresAt: expiresAt)),
            status: .pending, expiresAt: expiresAt, channel: .push,
            nextAction: .awaitApproval(NextAction.ApprovalPrompt(message: message, expiresAt: expiresAt)))
    }

    /// The factor a push goes to: the one the request names, or the identity's only verified push factor.
    private func factorToChallenge(_ identity: String, named factorID: String?) async throws(GatewayError) -> String {
        if let factorID {
            guard TwilioConfiguration.matches(factorID, prefixes: ["YF"]) else {
                throw GatewayError.invalidRequest("`channel_options.factor_id` must be a Twilio factor SID (YF…).")
            }
            return factorID
        }
        let verified = try await listFactors(identity: identity).filter { $0.status == .verified && $0.type == "push" }
        guard let only = verified.first else {
            throw GatewayError(.notEnrolled, "The identity has no verified push factor; enrol a device first.")
        }
        guard verified.count == 1 else {
            throw GatewayError.invalidRequest(
                "The identity has \(verified.count) verified push factors: name one in `channel_options.factor_id`.")
        }
        return only.id
    }

    /// Twilio sends the push again for the same challenge (at most three times, 60309 after).
    func resendPush(_ verification: ProviderVerification, request: ResendRequest) async throws(GatewayError)
        -> ProviderStartResult
    {
        if let channel = request.channel, channel != .push {
            throw GatewayError(.unsupportedChannel, "A push verification can only be resent as a push.")
        }
        let (sid, state) = try pushReference(of: verification)
        _ = try await call(
            .post, path: entityPath(state.identity) + "/Challenges/" + sid + "/Notifications", form: [],
            operation: .resend)
        return ProviderStartResult(
            reference: sid, status: .pending, expiresAt: state.expiresAt, channel: .push,
            nextAction: .awaitApproval(NextAction.ApprovalPrompt(message: state.message, expiresAt: state.expiresAt)))
    }

    func pushStatus(_ verification: ProviderVerification) async throws(GatewayError) -> VerificationChange {
        let (sid, state) = try pushReference(of: verification)
        let response = try await call(
            .get, path: entityPath(state.identity) + "/Challenges/" + sid, form: nil, operation: .status)
        let challenge = try client.decode(ChallengeSummary.self, from: response, operation: .status)
        guard let name = challenge.status, let status = Self.challengeStatus(named: name) else {
            throw client.malformed(.status, httpStatus: response.status.code)
        }
        return VerificationChange(status: status, reason: status == .pending ? nil : name)
    }

    /// A challenge's status in the gateway's terms (`challenge_enum_challenge_statuses`).
    static func challengeStatus(named name: String) -> VerificationStatus? {
        ["pending": .pending, "approved": .approved, "denied": .denied, "expired": .expired][name]
    }

    // MARK: webhooks

    /// A Verify Push webhook, signed with `X-Twilio-Signature`: `challenge.approved`, `.denied` (and `.expired`,
    /// should Twilio send it) settle the verification holding the challenge; factor events change nothing.
    func handleCallback(_ callback: VendorCallback, lookup: VerificationLookup) async throws(GatewayError)
        -> CallbackReply
    {
        let parameters = TwilioEmulator.formPairs(callback.body)
        guard
            TwilioPushCrypto.isValidWebhook(
                signature: callback.headerFields[TwilioPushCrypto.signatureHeader], url: callback.url.absoluteString,
                parameters: parameters, authToken: configuration.authToken)
        else { throw client.refusedCallback("bad X-Twilio-Signature") }
        let form = Dictionary(parameters, uniquingKeysWith: { _, last in last })
        guard form["service_sid"] == nil || form["service_sid"] == configuration.serviceSID else {
            return CallbackReply(updates: [])
        }
        guard let type = form["type"], type.hasPrefix("challenge."),
            let status = Self.challengeStatus(named: String(type.dropFirst("challenge.".count))), status != .pending
        else { return CallbackReply(updates: []) }
        guard let sid = form["challenge_sid"], TwilioConfiguration.matches(sid, prefixes: ["YC"]) else {
            throw GatewayError.invalidRequest("The webhook names no challenge.")
        }
        let reason = String(type.dropFirst("challenge.".count))
        return CallbackReply(
            updates: [
                ProviderUpdate(target: .reference(sid), change: VerificationChange(status: status, reason: reason))
            ])
    }

    // MARK: factors

    func createFactorAccessToken(identity: String, friendlyName: String?, ttlSeconds: Int?) async throws(GatewayError)
        -> FactorAccessToken
    {
        try Self.checkIdentity(identity)
        var form = [("Identity", identity), ("FactorType", "push")]
        if let friendlyName { form.append(("FactorFriendlyName", friendlyName)) }
        if let ttlSeconds {
            guard (60...300).contains(ttlSeconds) else {
                throw GatewayError.invalidRequest("Twilio access tokens live 60 to 300 seconds.")
            }
            form.append(("Ttl", String(ttlSeconds)))
        }
        let response = try await call(
            .post, path: servicePath + "/AccessTokens", form: form, operation: .accessToken)
        guard let object = try? JSONDecoder().decode(JSONValue.self, from: response.body),
            let token = object["token"]?.stringValue, !token.isEmpty
        else { throw client.malformed(.accessToken, httpStatus: response.status.code) }
        let ttl = object["ttl"]?.numberValue.map { Int($0) } ?? ttlSeconds ?? 60
        let created = TwilioWire.parseDate(object["date_created"]?.stringValue) ?? client.clock.now
        return FactorAccessToken(
            identity: identity, token: token, factorType: "push",
            expiresAt: created.addingTimeInterval(TimeInterval(ttl)),
            details: [
                "service_sid": .string(configuration.serviceSID),
                "base_url": .string(configuration.baseURL + "/v2/"),
                "access_token_sid": object["sid"] ?? .null,
            ])
    }

    func listFactors(identity: String) async throws(GatewayError) -> [DeviceFactor] {
        try Self.checkIdentity(identity)
        let response: TransportResponse
        do {
            response = try await call(.get, path: entityPath(identity) + "/Factors", form: nil, operation: .factors)
        } catch let error where error.code == .notFound {
            return []
        }
        guard let object = try? JSONDecoder().decode(JSONValue.self, from: response.body),
            case .array(let items) = object["factors"]
        else { throw client.malformed(.factors, httpStatus: response.status.code) }
        return items.compactMap { Self.factor(from: $0, identity: identity) }
    }

    func fetchFactor(identity: String, id factorID: String) async throws(GatewayError) -> DeviceFactor {
        let path = try factorPath(identity: identity, id: factorID)
        let response = try await call(.get, path: path, form: nil, operation: .factor)
        guard let object = try? JSONDecoder().decode(JSONValue.self, from: response.body),
            let factor = Self.factor(from: object, identity: identity)
        else { throw client.malformed(.factor, httpStatus: response.status.code) }
        return factor
    }

    func deleteFactor(identity: String, id factorID: String) async throws(GatewayError) {
        _ = try await call(
            .delete, path: try factorPath(identity: identity, id: factorID), form: nil, operation: .deleteFactor)
    }

    static func factor(from object: JSONValue, identity: String) -> DeviceFactor? {
        guard let sid = object["sid"]?.stringValue, let statusName = object["status"]?.stringValue,
            let status = DeviceFactor.Status(rawValue: statusName)
        else { return nil }
        var details: [String: JSONValue] = [:]
        for key in ["app_id", "notification_platform", "sdk_version"] {
            if let value = object["config"]?[key], value != .null { details[key] = value }
        }
        return DeviceFactor(
            id: sid, identity: identity, type: object["factor_type"]?.stringValue ?? "push",
            friendlyName: object["friendly_name"]?.stringValue, status: status,
            createdAt: TwilioWire.parseDate(object["date_created"]?.stringValue),
            updatedAt: TwilioWire.parseDate(object["date_updated"]?.stringValue), details: details)
    }

    // MARK: helpers

    func entityPath(_ identity: String) -> String { servicePath + "/Entities/" + identity }

    private func factorPath(identity: String, id factorID: String) throws(GatewayError) -> String {
        try Self.checkIdentity(identity)
        guard TwilioConfiguration.matches(factorID, prefixes: ["YF"]) else {
            throw GatewayError(.notFound, "No factor with this id for this identity.")
        }
        return entityPath(identity) + "/Factors/" + factorID
    }

    static func checkIdentity(_ identity: String) throws(GatewayError) {
        guard TwilioEmulator.isIdentity(identity) else {
            throw GatewayError.invalidRequest("`identity` must be 8 to 64 letters, digits and dashes.")
        }
    }

    /// The stored `YC…` SID and push state; anything else never reaches a URL path.
    private func pushReference(of verification: ProviderVerification) throws(GatewayError) -> (String, PushState) {
        guard let sid = verification.reference, TwilioConfiguration.matches(sid, prefixes: ["YC"]),
            let state = try? verification.state.decode(PushState.self), TwilioEmulator.isIdentity(state.identity)
        else { throw GatewayError.internal("The push verification has no usable Twilio challenge.") }
        return (sid, state)
    }

    struct ChallengeSummary: Decodable {
        var sid: String?
        var status: String?
        var factorSID: String?
        var expirationDate: String?

        enum CodingKeys: String, CodingKey {
            case sid, status
            case factorSID = "factor_sid"
            case expirationDate = "expiration_date"
        }
    }

    func jsonText(_ value: JSONValue) throws(GatewayError) -> String {
        String(decoding: try client.json(value), as: UTF8.self)
    }
}
