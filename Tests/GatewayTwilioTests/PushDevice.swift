import Crypto
import Foundation
import GatewayCore
import HTTPTypes
import Testing

@testable import GatewayTwilio

/// Calls the Twilio emulator in process, as the backend (account credentials) or as a device.
struct PushWire: Sendable {
    let emulator: TwilioEmulator
    static let base = "/v2/Services/" + TwilioSandbox.serviceSID

    struct Answer {
        var status: Int
        var json: JSONValue
        var headers: HTTPFields
        var code: Int? { json["code"]?.numberValue.map { Int($0) } }
    }

    static var account: String {
        "Basic " + Data("\(TwilioSandbox.accountSID):\(TwilioSandbox.authToken)".utf8).base64EncodedString()
    }

    static func device(_ secret: String) -> String {
        "Basic " + Data("token:\(secret)".utf8).base64EncodedString()
    }

    func call(
        _ method: HTTPRequest.Method, _ path: String, form: [(String, String)] = [], auth: String = PushWire.account,
        query: String? = nil
    ) async throws -> Answer {
        var headers = HTTPFields()
        headers[.authorization] = auth
        headers[.contentType] = "application/x-www-form-urlencoded"
        let outcome = await emulator.handle(
            EmulatorRequest(
                method: method, path: Self.base + path, query: query, headerFields: headers,
                body: Data(FormEncoding.encode(form).utf8)))
        guard case .response(let response) = outcome else { throw TransportError.connectionReset("reset") }
        let json =
            response.body.isEmpty ? JSONValue.null : try JSONDecoder().decode(JSONValue.self, from: response.body)
        return Answer(status: response.status.code, json: json, headers: response.headerFields)
    }
}

/// A simulated phone running twilio-verify-ios: its own P-256 key, the factor it enrolled, and the SDK's
/// signing of requests and answers (docs/vendors/twilio.md §3.1–3.3).
struct PushDevice {
    let identity: String
    let key = P256.Signing.PrivateKey()
    var factorSID = ""
    var credentialSID = ""

    init(identity: String) { self.identity = identity }

    var publicKey: String { key.publicKey.derRepresentation.base64EncodedString() }

    /// The JWT the SDK authenticates with: `kid` is the factor's credential SID, `sub` the account.
    func authentication(now: Date) throws -> String {
        let claims: [String: JSONValue] = [
            "sub": .string(TwilioSandbox.accountSID), "nbf": .number(now.timeIntervalSince1970.rounded(.down)),
            "exp": .number(now.timeIntervalSince1970.rounded(.down) + 600),
        ]
        return PushWire.device(
            try TwilioPushCrypto.signJWT(
                claims: claims, extraHeader: ["cty": "twilio-pba;v=1", "kid": .string(credentialSID)], key: key))
    }

    /// Creates the factor with an access token, then verifies it with the signed SID.
    mutating func enrol(_ wire: PushWire, platform: String = "apn", now: Date) async throws {
        let token = try await wire.call(
            .post, "/AccessTokens", form: [("Identity", identity), ("FactorType", "push")])
        #expect(token.status == 201)
        let created = try await wire.call(
            .post, "/Entities/\(identity)/Factors",
            form: Self.factorForm(publicKey: publicKey, platform: platform),
            auth: PushWire.device(try #require(token.json["token"]?.stringValue)))
        #expect(created.status == 201)
        #expect(created.json["status"] == "unverified")
        #expect(created.json["binding"]?["public_key"]?.stringValue == publicKey)
        factorSID = try #require(created.json["sid"]?.stringValue)
        credentialSID = try #require(created.json["config"]?["credential_sid"]?.stringValue)
        let verified = try await wire.call(
            .post, "/Entities/\(identity)/Factors/\(factorSID)", form: [("AuthPayload", proof())],
            auth: try authentication(now: now))
        #expect(verified.status == 200)
        #expect(verified.json["status"] == "verified")
    }

    static func factorForm(publicKey: String, platform: String = "apn") -> [(String, String)] {
        [
            ("FriendlyName", "Test phone"), ("FactorType", "push"), ("Binding.Alg", "ES256"),
            ("Binding.PublicKey", publicKey), ("Config.AppId", "com.example.app"),
            ("Config.NotificationPlatform", platform), ("Config.NotificationToken", String(repeating: "ab", count: 32)),
            ("Config.SdkVersion", "3.0.2"),
        ]
    }

    /// The factor-verification proof: base64 DER ECDSA over the factor SID.
    func proof() throws -> String {
        try key.signature(for: Data(factorSID.utf8)).derRepresentation.base64EncodedString()
    }

    /// Fetches the challenge and answers it as `PushChallengeProcessor` does: the signature fields' values
    /// plus `status`, signed with `signer` (the factor's own key unless a test passes another).
    func answer(
        _ wire: PushWire, challenge sid: String, status: String, now: Date, signer: P256.Signing.PrivateKey? = nil
    ) async throws -> PushWire.Answer {
        let auth = try authentication(now: now)
        let fetched = try await wire.call(.get, "/Entities/\(identity)/Challenges/\(sid)", auth: auth)
        let names = fetched.headers[TwilioEmulator.signatureFieldsHeader]?.split(separator: ",").map(String.init) ?? []
        var claims: [String: JSONValue] = [:]
        for name in names { claims[name] = fetched.json[name] ?? .null }
        claims["status"] = .string(status)
        let payload = try TwilioPushCrypto.signJWT(claims: claims, key: signer ?? key)
        return try await wire.call(
            .post, "/Entities/\(identity)/Challenges/\(sid)", form: [("AuthPayload", payload)], auth: auth)
    }
}

// A device's state is values only; swift-crypto's P-256 keys are immutable but not marked `Sendable`.
extension PushDevice: @unchecked Sendable {}
