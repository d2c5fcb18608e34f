import Crypto
import Foundation
import GatewayCore
import GatewayKitCrypto
import HTTPTypes
import Synchronization

/// One operator's CAMARA endpoints, emulated for the sandbox and the tests under the mount point
/// (`/sandbox/camara/…`): the OpenID Connect discovery document, `GET /authorize`, `POST /token`,
/// `POST /sim-swap/v2/check`, `POST /sim-swap/v2/retrieve-date`, `POST /number-verification/v2/verify` and
/// `GET /number-verification/v2/device-phone-number`, with the specs' error bodies and `x-correlator` rules.
///
/// The network is simulated per number, through sandbox controls at `/sandbox/camara/sandbox/numbers/{e164}`
/// (`PUT` a JSON object, `GET`, `DELETE`): `sim_changed_at` (RFC 3339) or `sim_changed_hours_ago`, `covered`
/// (false: the operator does not know the number), `network_number` (the number the device's mobile data
/// connection belongs to; by default the number itself) and `on_wifi` (the device has no mobile data: the
/// operator cannot recognise it). The authorization endpoint finds the device by the `login_hint` the gateway
/// sends, as a real operator finds it by the connection. A number never set has had its SIM since 2020-01-01.
///
/// State (codes, tokens, numbers) is kept in memory: a restarted sandbox starts afresh.
public final class CamaraEmulator: ContextEmulator {
    public let faults = FaultSwitch()
    /// Rows of ``CamaraErrorMapping/table`` armed to answer the next call of their operation (tests only).
    package let errors = EmulatorErrorSwitch()
    public let context: EmulatorContext

    struct NumberState: Codable, Sendable, Equatable {
        var simChangedAt: Date?
        var covered = true
        var networkNumber: String?
        var onWifi = false
    }

    struct Grant: Sendable {
        var number: String?
        var scopes: Set<String>
        var redirectURI: String?
        var until: Date
    }

    struct State: Sendable {
        var numbers: [String: NumberState] = [:]
        var codes: [String: Grant] = [:]
        var tokens: [String: Grant] = [:]
    }

    let state = Mutex(State())
    /// Since when a number never set has had its SIM.
    static let activation = Date(timeIntervalSince1970: 1_577_836_800)
    static let tokenLifetime = 3600
    static let codeLifetime: TimeInterval = 60
    /// The most codes or tokens kept; the oldest go first.
    static let capacity = 50_000

    public init(context: EmulatorContext) {
        self.context = context
    }

    public func handle(_ request: EmulatorRequest) async -> EmulatorResponse {
        let serverError: (Int) -> TransportResponse = { Self.problem($0, "INTERNAL", "Server error", correlator: nil) }
        return await withFaults(serverError: serverError) { .response(route(request)) }
    }

    static func operation(of path: String) -> String? {
        switch path {
        case "/token": "token"
        case "/sim-swap/v2/check": "sim_swap_check"
        case "/sim-swap/v2/retrieve-date": "sim_swap_date"
        case "/number-verification/v2/verify", "/number-verification/v2/device-phone-number": "number_verify"
        case "/authorize": "authorize"
        default: nil
        }
    }

    func route(_ request: EmulatorRequest) -> TransportResponse {
        let path = request.path
        let correlator = request.headerFields[HTTPField.Name("x-correlator")!]
        if let operation = Self.operation(of: path), let row = errors.take(operation: operation) {
            return armed(row, request: request, correlator: correlator)
        }
        if path.hasPrefix("/sandbox/numbers/") {
            return control(request, number: String(path.dropFirst("/sandbox/numbers/".count)))
        }
        switch (request.method, path) {
        case (.get, "/.well-known/openid-configuration"): return discovery()
        case (.get, "/authorize"): return authorize(request.queryItems)
        case (.post, "/token"): return token(request)
        default: break
        }
        let apis = [
            "/sim-swap/v2/check", "/sim-swap/v2/retrieve-date", "/number-verification/v2/verify",
            "/number-verification/v2/device-phone-number",
        ]
        guard apis.contains(path) else {
            return Self.problem(404, "NOT_FOUND", "The specified resource is not found.", correlator: correlator)
        }
        if let correlator, !CamaraWire.isCorrelator(correlator) {
            return Self.problem(400, "INVALID_ARGUMENT", "x-correlator is not valid.", correlator: nil)
        }
        let expected: HTTPRequest.Method = path.hasSuffix("device-phone-number") ? .get : .post
        guard request.method == expected else {
            return Self.problem(405, "METHOD_NOT_ALLOWED", "Method not allowed.", correlator: correlator)
        }
        guard let grant = bearer(request) else {
            return Self.problem(
                401, "UNAUTHENTICATED",
                "Request not authenticated due to missing, invalid, or expired credentials.", correlator: correlator)
        }
        switch path {
        case "/sim-swap/v2/check", "/sim-swap/v2/retrieve-date":
            return simSwap(request, grant: grant, check: path.hasSuffix("check"), correlator: correlator)
        default:
            return numberVerification(request, grant: grant, correlator: correlator)
        }
    }

    // MARK: OpenID Connect

    private func discovery() -> TransportResponse {
        Self.json(
            200,
            JSONValue.object([
                "issuer": "camara-sandbox", "authorization_endpoint": "authorize", "token_endpoint": "token",
                "response_types_supported": .array(["code"]),
                "grant_types_supported": .array(["authorization_code", "client_credentials"]),
                "token_endpoint_auth_methods_supported": .array(["private_key_jwt"]),
                "token_endpoint_auth_signing_alg_values_supported": .array(["ES256"]),
                "scopes_supported": .array([
                    "openid", "sim-swap", "sim-swap:check", "sim-swap:retrieve-date", "number-verification:verify",
                    "number-verification:device-phone-number:read",
                ]),
            ]), correlator: nil)
    }

    /// The device's authorization request: the operator recognises the device by its connection (here, the
    /// `login_hint`'s number and its sandbox settings) and redirects back with a code, or with `access_denied`
    /// when it cannot (Wi-Fi).
    private func authorize(_ query: [String: String]) -> TransportResponse {
        guard query["client_id"] == CamaraSandbox.clientID, let redirect = query["redirect_uri"],
            let redirectURL = URL(string: redirect), ["http", "https"].contains(redirectURL.scheme ?? "")
        else {
            // RFC 6749 §4.1.2.1: no redirect to a URI the client was not registered with.
            return Self.oauthError(400, "invalid_request")
        }
        let state = query["state"]
        guard query["response_type"] == "code" else {
            return Self.redirect(redirect, ["error": "unsupported_response_type", "state": state])
        }
        let scopes = Set((query["scope"] ?? "").split(separator: " ").map(String.init))
        guard scopes.contains(where: { $0.hasPrefix("dpv:") }),
            scopes.contains("number-verification:verify")
                || scopes.contains("number-verification:device-phone-number:read")
        else { return Self.redirect(redirect, ["error": "invalid_scope", "state": state]) }
        let now = clock.now
        let hinted = query["login_hint"].flatMap { $0.hasPrefix("tel:") ? String($0.dropFirst(4)) : nil }
        let outcome: [String: String?] = self.state.withLock { state in
            guard let hinted else { return ["error": "access_denied"] }
            let settings = state.numbers[hinted] ?? NumberState()
            guard !settings.onWifi else { return ["error": "access_denied"] }
            let code = Self.randomToken()
            Self.sweep(&state.codes, now: now)
            state.codes[code] = Grant(
                number: settings.networkNumber ?? hinted, scopes: scopes, redirectURI: redirect,
                until: now.addingTimeInterval(Self.codeLifetime))
            return ["code": code]
        }
        return Self.redirect(redirect, outcome.merging(["state": state]) { first, _ in first })
    }

    /// `POST /token`: the client assertion first, then the grant.
    private func token(_ request: EmulatorRequest) -> TransportResponse {
        let form = FormEncoding.decode(String(decoding: request.body, as: UTF8.self))
        guard form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            let assertion = form["client_assertion"], assertionIsValid(assertion)
        else { return Self.oauthError(401, "invalid_client") }
        let now = clock.now
        let scopes: Set<String>
        let number: String?
        switch form["grant_type"] {
        case "client_credentials":
            scopes = Set((form["scope"] ?? "").split(separator: " ").map(String.init))
            guard scopes.contains(where: { $0.hasPrefix("dpv:") }), !scopes.isEmpty else {
                return Self.oauthError(400, "invalid_scope")
            }
            number = nil
        case "authorization_code":
            let grant: Grant? = state.withLock { state in
                guard let code = form["code"], let grant = state.codes.removeValue(forKey: code),
                    grant.until > now, grant.redirectURI == form["redirect_uri"]
                else { return nil }
                return grant
            }
            guard let grant else { return Self.oauthError(400, "invalid_grant") }
            scopes = grant.scopes
            number = grant.number
        case nil:
            return Self.oauthError(400, "invalid_request")
        default:
            return Self.oauthError(400, "unsupported_grant_type")
        }
        let token = Self.randomToken()
        state.withLock { state in
            Self.sweep(&state.tokens, now: now)
            state.tokens[token] = Grant(
                number: number, scopes: scopes, redirectURI: nil,
                until: now.addingTimeInterval(TimeInterval(Self.tokenLifetime)))
        }
        return Self.json(
            200,
            CamaraWire.TokenResponse(
                accessToken: token, tokenType: "Bearer", expiresIn: Self.tokenLifetime,
                scope: scopes.sorted().joined(separator: " ")), correlator: nil)
    }

    /// ES256 by the sandbox key, issued and subject the sandbox client, for a token endpoint, at most five
    /// minutes long and not expired.
    func assertionIsValid(_ assertion: String) -> Bool {
        guard let token = JWS.parse(assertion),
            token.isSigned(by: .es256(verifyingWith: CamaraSandbox.privateKey.publicKey)),
            let claims = try? JSONDecoder().decode(JSONValue.self, from: token.payload),
            claims["iss"]?.stringValue == CamaraSandbox.clientID, claims["sub"]?.stringValue == CamaraSandbox.clientID,
            claims["aud"]?.stringValue?.hasSuffix("/token") == true, claims["jti"]?.stringValue?.isEmpty == false,
            let iat = claims["iat"]?.numberValue, let exp = claims["exp"]?.numberValue
        else { return false }
        let now = clock.now.timeIntervalSince1970
        return exp - iat <= 300 && exp > now && iat <= now + 60
    }

    private func bearer(_ request: EmulatorRequest) -> Grant? {
        guard let token = VendorHTTPClient.bearerToken(request.headerFields[.authorization]) else { return nil }
        let now = clock.now
        return state.withLock { state in state.tokens[token].flatMap { $0.until > now ? $0 : nil } }
    }

    // MARK: the APIs

    private func simSwap(_ request: EmulatorRequest, grant: Grant, check: Bool, correlator: String?)
        -> TransportResponse
    {
        let scope = check ? "sim-swap:check" : "sim-swap:retrieve-date"
        guard grant.scopes.contains(scope) || grant.scopes.contains("sim-swap") else {
            return Self.problem(
                403, "PERMISSION_DENIED", "Client does not have sufficient permissions to perform this action.",
                correlator: correlator)
        }
        guard let body = try? JSONDecoder().decode(CamaraWire.CheckSimSwap.self, from: request.body) else {
            return Self.problem(
                400, "INVALID_ARGUMENT", "Client specified an invalid argument, request body or query param.",
                correlator: correlator)
        }
        if let number = body.phoneNumber, !CamaraWire.isPhoneNumber(number) {
            return Self.problem(400, "INVALID_ARGUMENT", "phoneNumber is not valid.", correlator: correlator)
        }
        let maxAge = body.maxAge ?? 240
        if check, !(1...2400).contains(maxAge) {
            return Self.problem(400, "INVALID_ARGUMENT", "maxAge must be 1 to 2400.", correlator: correlator)
        }
        let number: String
        switch (grant.number, body.phoneNumber) {
        case (nil, nil):
            return Self.problem(422, "MISSING_IDENTIFIER", "The device cannot be identified.", correlator: correlator)
        case (.some, .some):
            return Self.problem(
                422, "UNNECESSARY_IDENTIFIER", "The device is already identified by the access token.",
                correlator: correlator)
        case (let fromToken?, nil): number = fromToken
        case (nil, let given?): number = given
        }
        let settings = state.withLock { $0.numbers[number] } ?? NumberState()
        guard settings.covered else {
            return Self.problem(
                404, "IDENTIFIER_NOT_FOUND", "Device identifier not found.", correlator: correlator)
        }
        let changed = settings.simChangedAt ?? Self.activation
        if check {
            let swapped = clock.now.timeIntervalSince(changed) < TimeInterval(maxAge) * 3600
            return Self.json(200, CamaraWire.CheckSimSwapInfo(swapped: swapped), correlator: correlator)
        }
        return Self.json(
            200, CamaraWire.SimSwapInfo(latestSimChange: Self.rfc3339(changed), monitoredPeriod: nil),
            correlator: correlator)
    }

    private func numberVerification(_ request: EmulatorRequest, grant: Grant, correlator: String?)
        -> TransportResponse
    {
        let share = request.path.hasSuffix("device-phone-number")
        let scope = share ? "number-verification:device-phone-number:read" : "number-verification:verify"
        guard grant.scopes.contains(scope) else {
            return Self.problem(
                403, "PERMISSION_DENIED", "Client does not have sufficient permissions to perform this action.",
                correlator: correlator)
        }
        guard let number = grant.number else {
            return Self.problem(
                403, "NUMBER_VERIFICATION.USER_NOT_AUTHENTICATED_BY_MOBILE_NETWORK",
                "Client must authenticate via the mobile network to use this service.", correlator: correlator)
        }
        if share {
            return Self.json(200, CamaraWire.NumberVerificationShare(devicePhoneNumber: number), correlator: correlator)
        }
        let fields = (try? JSONDecoder().decode(JSONValue.self, from: request.body))?.objectValue ?? [:]
        let plain = fields["phoneNumber"]?.stringValue
        let hashed = fields["hashedPhoneNumber"]?.stringValue
        guard fields.count == 1,
            plain.map(CamaraWire.isPhoneNumber) ?? hashed.map(CamaraWire.isHashedPhoneNumber) ?? false
        else {
            return Self.problem(
                400, "INVALID_ARGUMENT", "Give exactly one of phoneNumber and hashedPhoneNumber.",
                correlator: correlator)
        }
        let digest = Hex.lowercase(SHA256.hash(data: Data(number.utf8)))
        let verified = plain.map { $0 == number } ?? (hashed?.lowercased() == digest)
        return Self.json(
            200, CamaraWire.NumberVerificationMatch(devicePhoneNumberVerified: verified), correlator: correlator)
    }

    // MARK: sandbox controls

    struct NumberControl: Codable {
        var simChangedAt: String?
        var simChangedHoursAgo: Double?
        var covered: Bool?
        var networkNumber: String?
        var onWifi: Bool?

        enum CodingKeys: String, CodingKey {
            case simChangedAt = "sim_changed_at"
            case simChangedHoursAgo = "sim_changed_hours_ago"
            case covered
            case networkNumber = "network_number"
            case onWifi = "on_wifi"
        }
    }

    private func control(_ request: EmulatorRequest, number raw: String) -> TransportResponse {
        let number = raw.removingPercentEncoding ?? raw
        guard CamaraWire.isPhoneNumber(number) else {
            return Self.problem(400, "INVALID_ARGUMENT", "The path must end with a number in E.164.", correlator: nil)
        }
        switch request.method {
        case .put:
            guard let control = try? JSONDecoder().decode(NumberControl.self, from: request.body),
                control.networkNumber.map(CamaraWire.isPhoneNumber) ?? true
            else {
                return Self.problem(
                    400, "INVALID_ARGUMENT",
                    "Send {sim_changed_at | sim_changed_hours_ago, covered, network_number, on_wifi}.", correlator: nil)
            }
            var changed: Date?
            if let text = control.simChangedAt {
                guard let date = try? Date(text, strategy: .iso8601) else {
                    return Self.problem(400, "INVALID_ARGUMENT", "sim_changed_at must be RFC 3339.", correlator: nil)
                }
                changed = date
            } else if let hours = control.simChangedHoursAgo, hours >= 0 {
                changed = clock.now.addingTimeInterval(-hours * 3600)
            }
            let settings = state.withLock { state in
                var settings = state.numbers[number] ?? NumberState()
                if let changed { settings.simChangedAt = changed }
                if let covered = control.covered { settings.covered = covered }
                if let network = control.networkNumber { settings.networkNumber = network }
                if let wifi = control.onWifi { settings.onWifi = wifi }
                state.numbers[number] = settings
                return settings
            }
            return Self.json(200, describe(number, settings), correlator: nil)
        case .get:
            let settings = state.withLock { $0.numbers[number] } ?? NumberState()
            return Self.json(200, describe(number, settings), correlator: nil)
        case .delete:
            state.withLock { _ = $0.numbers.removeValue(forKey: number) }
            return TransportResponse(status: .noContent)
        default:
            return Self.problem(405, "METHOD_NOT_ALLOWED", "PUT, GET or DELETE.", correlator: nil)
        }
    }

    private func describe(_ number: String, _ settings: NumberState) -> JSONValue {
        .object([
            "phone_number": .string(number),
            "sim_changed_at": .string(Self.rfc3339(settings.simChangedAt ?? Self.activation)),
            "covered": .bool(settings.covered), "network_number": .string(settings.networkNumber ?? number),
            "on_wifi": .bool(settings.onWifi),
        ])
    }

    // MARK: answers

    /// An armed error row's answer: CAMARA's body, an OAuth error, or an authorization redirect with it.
    private func armed(_ row: VendorErrorRow, request: EmulatorRequest, correlator: String?) -> TransportResponse {
        let code = row.code ?? "INTERNAL"
        switch row.vocabulary {
        case "authorize":
            let query = request.queryItems
            guard let redirect = query["redirect_uri"] else { return Self.oauthError(400, "invalid_request") }
            return Self.redirect(redirect, ["error": code, "state": query["state"]])
        case "oauth":
            return Self.oauthError(row.httpStatus ?? 400, code)
        default:
            return Self.problem(row.httpStatus ?? 400, code, row.name, correlator: correlator)
        }
    }

    static func problem(_ status: Int, _ code: String, _ message: String, correlator: String?) -> TransportResponse {
        json(status, CamaraWire.ErrorInfo(status: status, code: code, message: message), correlator: correlator)
    }

    static func oauthError(_ status: Int, _ error: String) -> TransportResponse {
        var response = json(status, CamaraWire.OAuthError(error: error), correlator: nil)
        response.headerFields[.cacheControl] = "no-store"
        return response
    }

    static func json(_ status: Int, _ value: some Encodable, correlator: String?) -> TransportResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var headers: HTTPFields = [.contentType: "application/json"]
        // The client's correlator echoed; one of the emulator's own when it sent none ([DG]).
        headers[HTTPField.Name("x-correlator")!] = correlator ?? UUID().uuidString.lowercased()
        return TransportResponse(
            status: HTTPResponse.Status(code: status), headerFields: headers,
            body: (try? encoder.encode(value)) ?? Data())
    }

    static func redirect(_ target: String, _ query: [String: String?]) -> TransportResponse {
        let pairs = query.compactMap { key, value in value.map { (key, $0) } }.sorted { $0.0 < $1.0 }
        let location = target + (target.contains("?") ? "&" : "?") + FormEncoding.encode(pairs)
        return TransportResponse(status: .found, headerFields: [.location: location, .cacheControl: "no-store"])
    }

    static func rfc3339(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: false))
    }

    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<3).map { _ in Hex.lowercase(generator.next() as UInt64) }.joined()
    }

    /// Drops what has expired, and the oldest when still full.
    static func sweep(_ grants: inout [String: Grant], now: Date) {
        guard grants.count >= capacity else { return }
        grants = grants.filter { $0.value.until > now }
        if grants.count >= capacity {
            for key in grants.sorted(by: { $0.value.until < $1.value.until }).prefix(capacity / 2).map(\.key) {
                grants[key] = nil
            }
        }
    }
}
