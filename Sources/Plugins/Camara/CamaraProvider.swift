import Crypto
import Foundation
import GatewayCore
import GatewayKitCrypto
import HTTPTypes
import Logging
import Synchronization

/// CAMARA's calls, by the names the error table and logs use; none sends anything to the user.
extension VendorOperation {
    static let token = VendorOperation("token")
    static let simSwapCheck = VendorOperation("sim_swap_check")
    static let simSwapDate = VendorOperation("sim_swap_date")
    static let numberVerify = VendorOperation("number_verify")
}

/// One operator's (or aggregator's) CAMARA APIs behind the gateway's contracts (docs/network-signals.md):
///
/// - **SIM Swap** as a risk signal (``SimSwapSignalProvider``): a two-legged token by client credentials,
///   then `POST /sim-swap/v2/check` with the number and `maxAge`; `POST /retrieve-date` as the `sim_swap_date`
///   action.
/// - **Number Verification** as a `silent_auth` provider: the start answers an `open_url` (cellular only) of the
///   operator's authorization endpoint; the device opens it over mobile data, the operator recognises the
///   connection and redirects to the gateway's callback with a code; the gateway exchanges it for a
///   three-legged token and asks `POST /number-verification/v2/verify` with the number's SHA-256. A match
///   approves the verification with no code; anything else fails the silent step (the engine then moves to the
///   request's `fallback_channels`).
///
/// Every token request authenticates with `private_key_jwt` (ES256), the only method the CAMARA profile
/// allows; every API call carries an `x-correlator`.
struct CamaraProvider: VendorHTTPProvider, SimSwapSignalProvider, RedirectReceivingProvider, ActionProvider {
    let configuration: CamaraConfiguration
    let client: VendorHTTPClient
    /// Where the operator sends the device back: `<public_base_url>/callbacks/<provider id>`.
    let redirectURL: URL?
    /// The two-legged tokens for SIM Swap (one per scope), reused until shortly before they expire.
    let tokens = TokenHolder()

    init(context: ProviderContext) throws(ConfigurationError) {
        configuration = try CamaraConfiguration(settings: context.settings, providerID: context.providerID)
        // Three endpoints of one operator: the token endpoint and the API root are given whole.
        client = VendorHTTPClient(vendor: "CAMARA", context: context, baseURL: "")
        redirectURL = context.callbackURL
    }

    /// Silent verification needs the authorization endpoint and a public base URL for the redirect; without
    /// them the provider is a signal only.
    var silentAuth: Bool { configuration.authorizeURL != nil && redirectURL != nil }

    var capabilities: ProviderCapabilities {
        ProviderCapabilities(
            channels: silentAuth ? [.silentAuth] : [], completesWithoutCode: [.silentAuth],
            withheld: silentAuth ? [] : [.callbacks])
    }

    // MARK: Number Verification

    func start(_ request: StartVerification) async throws(GatewayError) -> ProviderStartResult {
        guard request.channel == .silentAuth, let number = request.destination.phoneNumber,
            let authorize = configuration.authorizeURL, let redirect = redirectURL
        else { throw GatewayError.unsupported(request.channel, by: id) }
        let state = Self.randomHex()
        let query = FormEncoding.encode([
            ("response_type", "code"), ("client_id", configuration.clientID),
            ("redirect_uri", redirect.absoluteString),
            ("scope", "openid \(configuration.purpose) number-verification:verify"), ("state", state),
            ("nonce", Self.randomHex()), ("prompt", "none"), ("login_hint", "tel:" + number.e164),
        ])
        guard let url = URL(string: authorize + (authorize.contains("?") ? "&" : "?") + query) else {
            throw GatewayError.internal("The CAMARA authorization URL does not form a valid URL.")
        }
        logger.debug("silent verification opened", metadata: ["provider.id": "\(id)"])
        return ProviderStartResult(
            reference: state, status: .pending,
            expiresAt: clock.now.addingTimeInterval(TimeInterval(configuration.silentValidity)), channel: .silentAuth,
            nextAction: .openURL(NextAction.URLOpening(url: url.absoluteString, cellularOnly: true)))
    }

    func check(_ verification: ProviderVerification, code: String) async throws(GatewayError) -> ProviderCheckResult {
        throw GatewayError(
            .invalidState, "A CAMARA verification completes without a code, when the device opens its URL.")
    }

    /// The device's browser, back from the operator: `?code=…&state=…`, or `?error=…&state=…`.
    func handleCallback(_ callback: VendorCallback, lookup: VerificationLookup) async throws(GatewayError)
        -> CallbackReply
    {
        let query = FormEncoding.decode(callback.query ?? "")
        guard let state = query["state"], !state.isEmpty, state.count <= 64 else {
            return CallbackReply(updates: [], response: Self.page(404, "unknown"))
        }
        guard let verification = try await lookup(.reference(state)), verification.status == .pending,
            let number = verification.destination.phoneNumber
        else { return CallbackReply(updates: [], response: Self.page(404, "unknown")) }
        let target = ProviderUpdate.Target.reference(state)
        let failed: (String) -> CallbackReply = { reason in
            CallbackReply(
                updates: [ProviderUpdate(target: target, change: VerificationChange(status: .failed, reason: reason))],
                response: Self.page(200, "not_verified"))
        }
        if let error = query["error"] {
            let mapped = CamaraErrorMapping.authorizationError(error, providerID: id)
            logger.info(
                "silent verification refused by the operator",
                metadata: [
                    "provider.id": "\(id)", "camara.error": "\(error.prefix(40))", "error.code": "\(mapped.code)",
                ])
            return failed("authorize:" + String(error.prefix(40)))
        }
        guard let code = query["code"], !code.isEmpty, let redirect = redirectURL else {
            return failed("authorize:no_code")
        }
        do {
            let token = try await requestToken([
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect.absoluteString),
            ])
            let verified = try await verifyNumber(number, token: token)
            guard verified else { return failed("number_mismatch") }
            return CallbackReply(
                updates: [ProviderUpdate(target: target, change: VerificationChange(status: .approved))],
                response: Self.page(200, "verified"))
        } catch {
            return failed(error.vendor?.code.map { "camara:" + $0 } ?? error.code.rawValue)
        }
    }

    /// `POST /number-verification/v2/verify` with the number's SHA-256: whether it is the device's.
    func verifyNumber(_ number: PhoneNumber, token: String) async throws(GatewayError) -> Bool {
        let hashed = Hex.lowercase(SHA256.hash(data: Data(number.e164.utf8)))
        let response = try await call(
            "/number-verification/v2/verify", json: CamaraWire.NumberVerificationRequest(hashedPhoneNumber: hashed),
            token: token, operation: .numberVerify)
        return try client.decode(CamaraWire.NumberVerificationMatch.self, from: response, operation: .numberVerify)
            .devicePhoneNumberVerified
    }

    // MARK: SIM Swap

    func simSwapped(_ number: PhoneNumber, withinHours hours: Int) async throws(GatewayError) -> Bool {
        let body = CamaraWire.CheckSimSwap(phoneNumber: number.e164, maxAge: min(max(hours, 1), 2400))
        let response = try await withSignalToken(scope: configuration.simSwapScope) { token throws(GatewayError) in
            try await call("/sim-swap/v2/check", json: body, token: token, operation: .simSwapCheck)
        }
        return try client.decode(CamaraWire.CheckSimSwapInfo.self, from: response, operation: .simSwapCheck).swapped
    }

    var actions: [ProviderAction] {
        [
            ProviderAction(
                name: "sim_swap_date",
                summary: "When the SIM behind `phone_number` last changed (CAMARA retrieve-date): "
                    + "`latest_sim_change` (null where the operator may not say) and `monitored_period` in days.",
                requiredInputs: ["phone_number"])
        ]
    }

    func perform(action: String, input: [String: JSONValue]) async throws(GatewayError) -> [String: JSONValue] {
        guard action == "sim_swap_date" else {
            throw GatewayError(.notFound, "Provider \(id) has no action `\(action)`.")
        }
        guard let text = input["phone_number"]?.stringValue else {
            throw GatewayError.invalidRequest("`phone_number` is required: a number in E.164.")
        }
        let number: PhoneNumber
        do {
            number = try PhoneNumber(parsing: text)
        } catch {
            throw GatewayError(.invalidPhoneNumber, "`phone_number` is not a phone number in E.164.")
        }
        // Its own scope: a client granted only `sim-swap:check` still has its checks.
        let scope = configuration.simSwapScope == "sim-swap" ? "sim-swap" : "sim-swap:retrieve-date"
        let response = try await withSignalToken(scope: scope) { token throws(GatewayError) in
            try await call(
                "/sim-swap/v2/retrieve-date", json: CamaraWire.CreateSimSwapDate(phoneNumber: number.e164),
                token: token, operation: .simSwapDate)
        }
        let info = try client.decode(CamaraWire.SimSwapInfo.self, from: response, operation: .simSwapDate)
        var output: [String: JSONValue] = ["latest_sim_change": info.latestSimChange.map(JSONValue.string) ?? .null]
        if let days = info.monitoredPeriod { output["monitored_period"] = .number(Double(days)) }
        return output
    }

    /// Runs `body` with the two-legged token for `scope`, fetching one when none is held; a token the API no
    /// longer takes (`UNAUTHENTICATED`) is dropped and the call made once more with a fresh one.
    private func withSignalToken(
        scope: String, _ body: (String) async throws(GatewayError) -> TransportResponse
    ) async throws(GatewayError) -> TransportResponse {
        let now = clock.now
        let held = tokens.withLock { $0[scope].flatMap { $0.until > now ? $0.token : nil } }
        let token: String
        if let held { token = held } else { token = try await signalToken(scope: scope) }
        do {
            return try await body(token)
        } catch  where held != nil && error.vendor?.code == "UNAUTHENTICATED" {
            tokens.withLock { $0[scope] = nil }
            return try await body(try await signalToken(scope: scope))
        }
    }

    /// A client-credentials token for the purpose and `scope`, kept until a minute before it ends.
    private func signalToken(scope: String) async throws(GatewayError) -> String {
        let began = clock.now
        let answer = try await tokenAnswer([
            ("grant_type", "client_credentials"), ("scope", "\(configuration.purpose) \(scope)"),
        ])
        let lifetime = TimeInterval(max(0, (answer.expiresIn ?? 300) - 60))
        if lifetime > 0 { tokens.withLock { $0[scope] = (answer.accessToken, began.addingTimeInterval(lifetime)) } }
        return answer.accessToken
    }

    // MARK: the wire

    private func requestToken(_ grant: [(String, String)]) async throws(GatewayError) -> String {
        try await tokenAnswer(grant).accessToken
    }

    /// A token request authenticated with a fresh client assertion (`private_key_jwt`).
    private func tokenAnswer(_ grant: [(String, String)]) async throws(GatewayError) -> CamaraWire.TokenResponse {
        let form =
            grant + [
                ("client_id", configuration.clientID),
                ("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"),
                ("client_assertion", try clientAssertion()),
            ]
        let response = try await client.send(
            .post, configuration.tokenURL, headers: [.accept: "application/json"], form: form, operation: .token
        ) { answer in
            CamaraErrorMapping.map(
                status: answer.status, body: answer.body, operation: .token, retryAfter: answer.retryAfter,
                providerID: id)
        }
        let answer = try client.decode(CamaraWire.TokenResponse.self, from: response, operation: .token)
        guard answer.tokenType.lowercased() == "bearer", !answer.accessToken.isEmpty else {
            throw client.malformed(.token, httpStatus: response.status.code)
        }
        return answer
    }

    /// The client assertion: `iss` and `sub` the client id, `aud` the token endpoint, valid five minutes (the
    /// profile's most), a random `jti`; ES256.
    func clientAssertion() throws(GatewayError) -> String {
        let now = clock.now.timeIntervalSince1970.rounded(.down)
        let claims: JSONValue = [
            "iss": .string(configuration.clientID), "sub": .string(configuration.clientID),
            "aud": .string(configuration.tokenURL), "iat": .number(now), "exp": .number(now + 300),
            "jti": .string(Self.randomHex()),
        ]
        var header: [String: JSONValue] = [:]
        if let kid = configuration.keyID { header["kid"] = .string(kid) }
        do {
            let key = try P256.Signing.PrivateKey(rawRepresentation: configuration.privateKey)
            return try JWS.sign(claims, header: header, with: .es256(signingWith: key))
        } catch {
            throw GatewayError.internal("The CAMARA client assertion could not be signed.")
        }
    }

    /// One API call: bearer token, `x-correlator`, JSON body; every answer outside 2xx mapped.
    private func call(_ path: String, json: some Encodable, token: String, operation: VendorOperation)
        async throws(GatewayError) -> TransportResponse
    {
        let correlator = UUID().uuidString.lowercased()
        let headers: HTTPFields = [
            .authorization: "Bearer " + token, .accept: "application/json", HTTPField.Name("x-correlator")!: correlator,
        ]
        return try await client.send(
            .post, configuration.apiRoot + path, headers: headers, json: json, operation: operation
        ) { answer in
            CamaraErrorMapping.map(
                status: answer.status, body: answer.body, operation: operation, retryAfter: answer.retryAfter,
                providerID: id)
        }
    }

    /// What the device's browser shows at the end of the redirects: JSON, with no code in it.
    static func page(_ status: Int, _ outcome: String) -> TransportResponse {
        TransportResponse(
            status: HTTPResponse.Status(code: status), headerFields: [.contentType: "application/json"],
            body: Data("{\"silent_auth\":\"\(outcome)\"}".utf8))
    }

    static func randomHex() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in Hex.lowercase(generator.next() as UInt64) }.joined()
    }
}

/// The two-legged tokens a provider holds, by scope, shared by its copies.
final class TokenHolder: Sendable {
    private let held = Mutex<[String: (token: String, until: Date)]>([:])

    func withLock<T>(_ body: (inout [String: (token: String, until: Date)]) -> T) -> T {
        held.withLock { body(&$0) }
    }
}
