import Crypto
import Foundation
import GatewayClient
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The phone of the Verify Push flow, as twilio-verify-ios runs on it: a P-256 key made on the device, a push
/// factor enrolled at Twilio (here the sandbox's Twilio) with the access token the app's back end fetched, and
/// a challenge answered with a JWT signed by that key. Every call authenticates as the SDK does: Basic
/// `token:<JWT>`, the factor's `credential_sid` as `kid`. None of this goes through the gateway: on a real
/// phone it is the vendor's SDK, which stays on the device with the key (docs/apps.md).
final class SimulatedPhone: Sendable {
    let identity: String
    /// The phone's private key (its raw bytes: the key type itself is not `Sendable`).
    private let keyBytes = P256.Signing.PrivateKey().rawRepresentation
    private let enrolled: Mutex<Factor?> = Mutex(nil)

    struct Factor: Sendable {
        var baseURL: String
        var serviceSID: String
        var sid: String
        var credentialSID: String
        var accountSID: String
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init(identity: String) {
        self.identity = identity
    }

    /// Enrols a push factor with `token` (from `VerificationClient.factorAccessToken`) and verifies it by signing
    /// its SID. Returns the factor's SID.
    @discardableResult
    func enrol(with token: FactorAccessToken) async throws -> String {
        guard let baseURL = token.details["base_url"]?.stringValue,
            let serviceSID = token.details["service_sid"]?.stringValue
        else { throw Failure(description: "the access token has no base_url or service_sid: \(token.details)") }
        let entity = baseURL + "Services/" + serviceSID + "/Entities/" + identity
        let (status, created, _) = try await Self.form(
            "POST", entity + "/Factors",
            [
                ("FriendlyName", "verify-demo phone"), ("FactorType", "push"), ("Binding.Alg", "ES256"),
                ("Binding.PublicKey", try key().publicKey.derRepresentation.base64EncodedString()),
                ("Config.AppId", "com.example.verify-demo"), ("Config.NotificationPlatform", "apn"),
                ("Config.NotificationToken", String(repeating: "0a", count: 32)), ("Config.SdkVersion", "3.0.2"),
            ], auth: "token:" + token.token)
        guard status == 201, let sid = created["sid"] as? String,
            let credentialSID = (created["config"] as? [String: Any])?["credential_sid"] as? String,
            let accountSID = created["account_sid"] as? String
        else { throw Failure(description: "create factor: \(status) \(created)") }
        let factor = Factor(
            baseURL: baseURL, serviceSID: serviceSID, sid: sid, credentialSID: credentialSID, accountSID: accountSID)
        enrolled.withLock { $0 = factor }
        let proof = try key().signature(for: Data(sid.utf8)).derRepresentation.base64EncodedString()
        let (verifiedStatus, verified, _) = try await Self.form(
            "POST", entity + "/Factors/" + sid, [("AuthPayload", proof)], auth: try authorization())
        guard verifiedStatus == 200, verified["status"] as? String == "verified" else {
            throw Failure(description: "verify factor: \(verifiedStatus) \(verified)")
        }
        return sid
    }

    /// Answers a challenge as the SDK's PushChallengeProcessor does: fetch it, sign the fields its
    /// `Twilio-Verify-Signature-Fields` header names plus `status`, post the JWT.
    func answer(challengeSID: String, approve: Bool) async throws {
        guard let factor = enrolled.withLock({ $0 }) else { throw Failure(description: "no factor enrolled") }
        let url =
            factor.baseURL + "Services/" + factor.serviceSID + "/Entities/" + identity + "/Challenges/" + challengeSID
        let (status, challenge, headers) = try await Self.form("GET", url, [], auth: try authorization())
        guard status == 200 else { throw Failure(description: "fetch challenge: \(status) \(challenge)") }
        let fields = headers.first { $0.key.lowercased() == "twilio-verify-signature-fields" }?.value ?? ""
        var claims: [String: Any] = [:]
        for name in fields.split(separator: ",").map(String.init) { claims[name] = challenge[name] ?? NSNull() }
        claims["status"] = approve ? "approved" : "denied"
        let (answered, body, _) = try await Self.form(
            "POST", url, [("AuthPayload", try jwt(claims: claims, header: [:]))], auth: try authorization())
        guard answered == 200 else { throw Failure(description: "answer challenge: \(answered) \(body)") }
    }

    private func key() throws -> P256.Signing.PrivateKey {
        try P256.Signing.PrivateKey(rawRepresentation: keyBytes)
    }

    /// Basic `token:<JWT>`: `kid` the factor's credential SID, `sub` the account, ten minutes.
    private func authorization() throws -> String {
        guard let factor = enrolled.withLock({ $0 }) else { throw Failure(description: "no factor enrolled") }
        let now = Int(Date().timeIntervalSince1970)
        return "token:"
            + (try jwt(
                claims: ["sub": factor.accountSID, "nbf": now, "exp": now + 600],
                header: ["cty": "twilio-pba;v=1", "kid": factor.credentialSID]))
    }

    /// An ES256 JWT signed with the phone's key (the signature as raw r‖s, base64url).
    private func jwt(claims: [String: Any], header extra: [String: String]) throws -> String {
        var header: [String: Any] = ["typ": "JWT", "alg": "ES256"]
        for (name, value) in extra { header[name] = value }
        let input =
            Self.base64URL(try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])) + "."
            + Self.base64URL(try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys]))
        let signature = try key().signature(for: Data(input.utf8))
        return input + "." + Self.base64URL(signature.rawRepresentation)
    }

    private static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// A form-encoded call to Twilio's wire: status, JSON object, headers.
    private static func form(
        _ method: String, _ url: String, _ fields: [(String, String)], auth: String
    ) async throws -> (Int, [String: Any], [String: String]) {
        guard let target = URL(string: url) else { throw Failure(description: "bad URL \(url)") }
        var request = URLRequest(url: target)
        request.httpMethod = method
        request.setValue("Basic " + Data(auth.utf8).base64EncodedString(), forHTTPHeaderField: "Authorization")
        if method == "POST" {
            var allowed = CharacterSet.alphanumerics
            allowed.insert(charactersIn: "-._~")
            let body = fields.map { name, value in
                name.addingPercentEncoding(withAllowedCharacters: allowed)! + "="
                    + value.addingPercentEncoding(withAllowedCharacters: allowed)!
            }.joined(separator: "&")
            request.httpBody = Data(body.utf8)
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw Failure(description: "no HTTP answer from \(url)") }
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        return (http.statusCode, object, headers)
    }
}
