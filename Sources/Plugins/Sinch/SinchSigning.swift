import Crypto
import Foundation
import GatewayCore
import HTTPTypes

/// Sinch's application-signed requests (docs/vendors/sinch.md §1.1), used both ways: the provider signs its calls, the
/// emulator checks them, the emulator signs its callbacks and the provider checks those.
///
/// ```
/// Content-MD5   = Base64(MD5(body))                 ; "" when there is no body
/// StringToSign  = VERB \n Content-MD5 \n Content-Type \n "x-timestamp:" + value \n CanonicalizedResource
/// Signature     = Base64(HMAC-SHA256(key: Base64Decode(secret), StringToSign))
/// Authorization = "Application " + key + ":" + Signature
/// ```
///
/// The resource is the request path with its leading slash and without the query, as both official SDKs
/// sign it (the documentation's example drops the slash; docs/vendors/sinch.md trusts the SDKs, and so do we).
/// `x-timestamp` is ISO 8601 (``VendorDate``); the Python SDK sends `datetime.isoformat()`, with microseconds.
enum SinchSigning {
    static let scheme = "Application"
    static let timestampHeader = HTTPField.Name("x-timestamp")!

    /// `Base64(MD5(body))`, or the empty string for an empty body (a `GET`).
    static func contentMD5(_ body: Data) -> String {
        body.isEmpty ? "" : Data(Insecure.MD5.hash(data: body)).base64EncodedString()
    }

    static func stringToSign(
        method: String, contentMD5: String, contentType: String, timestamp: String, resource: String
    ) -> String {
        [method.uppercased(), contentMD5, contentType, "x-timestamp:" + timestamp, resource].joined(separator: "\n")
    }

    /// The application secret as the HMAC key: Sinch hands it out base64-encoded. Padding is optional, as
    /// Python's `b64decode` is lenient about it; `nil` when it is not base64 at all.
    static func key(fromSecret secret: String) -> Data? {
        var text = secret.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return nil }
        while text.count % 4 != 0 { text += "=" }
        return Data(base64Encoded: text)
    }

    static func signature(_ stringToSign: String, key: Data) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: SymmetricKey(data: key))
        return Data(mac).base64EncodedString()
    }

    static func authorization(
        applicationKey: String, key: Data, method: String, body: Data, contentType: String, timestamp: String,
        resource: String
    ) -> String {
        let text = stringToSign(
            method: method, contentMD5: contentMD5(body), contentType: contentType, timestamp: timestamp,
            resource: resource)
        return scheme + " " + applicationKey + ":" + signature(text, key: key)
    }

    /// Why a signed request was refused, by the Sinch error code the emulator answers for it (§4.2).
    /// `badSignature` is also a wrong Basic secret; `weakScheme` is `Application <key>` alone, the public scheme.
    enum Refusal: Int, Error, Equatable {
        case missingAuthorization = 40104
        /// Not `Application key:signature` or `Basic …`.
        case malformedAuthorization = 40100
        case missingTimestamp = 40101
        case staleTimestamp = 40105
        case unknownKey = 40004
        case badSignature = 40102
        case weakScheme = 40301

        var errorCode: Int { rawValue }

        var message: String {
            [
                .missingAuthorization: "Authorization required",
                .malformedAuthorization: "Invalid authorization header",
                .missingTimestamp: "X-Timestamp required", .staleTimestamp: "Expired",
                .unknownKey: "Invalid application key",
                .badSignature: "Invalid signature", .weakScheme: "Invalid authorization scheme",
            ][self] ?? ""
        }
    }

    /// Checks a request signed by `applicationKey`'s `secret`. `resources` lists the paths the signature may
    /// cover (the emulator accepts its path with and without its sandbox mount point). `allowBasic` also
    /// takes the Basic scheme. The timestamp must be within `tolerance` of `now`.
    static func verify(
        headers: HTTPFields, method: String, body: Data, resources: [String], applicationKey: String, secret: String,
        now: Date, tolerance: TimeInterval, allowBasic: Bool
    ) -> Result<Void, Refusal> {
        guard let header = headers[.authorization]?.trimmingCharacters(in: .whitespaces), !header.isEmpty else {
            return .failure(.missingAuthorization)
        }
        let parts = header.split(separator: " ", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return .failure(.malformedAuthorization) }
        switch parts[0].lowercased() {
        case "basic" where allowBasic:
            guard let (user, password) = VendorHTTPClient.basicCredentials(header) else {
                return .failure(.malformedAuthorization)
            }
            guard user == applicationKey else { return .failure(.unknownKey) }
            return ConstantTime.equals(password, secret) ? .success(()) : .failure(.badSignature)
        case "application":
            guard let colon = parts[1].lastIndex(of: ":") else {
                return parts[1].isEmpty ? .failure(.malformedAuthorization) : .failure(.weakScheme)
            }
            let key = String(parts[1][..<colon])
            let given = String(parts[1][parts[1].index(after: colon)...])
            guard key == applicationKey else { return .failure(.unknownKey) }
            guard let stamp = headers[timestampHeader], let date = VendorDate.parseISO8601(stamp) else {
                return .failure(.missingTimestamp)
            }
            guard abs(date.timeIntervalSince(now)) <= tolerance else { return .failure(.staleTimestamp) }
            guard let hmacKey = SinchSigning.key(fromSecret: secret) else { return .failure(.badSignature) }
            let contentType = headers[.contentType] ?? ""
            let md5 = contentMD5(body)
            for resource in resources {
                let expected = signature(
                    stringToSign(
                        method: method, contentMD5: md5, contentType: contentType, timestamp: stamp, resource: resource),
                    key: hmacKey)
                if ConstantTime.equals(expected, given) { return .success(()) }
            }
            return .failure(.badSignature)
        default:
            return .failure(.malformedAuthorization)
        }
    }
}
