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

    /// The `Authorization` value for one request.
    static func authorization(
        applicationKey: String, key: Data, method: String, body: Data, contentType: String, timestamp: String,
        resource: String
    ) -> String {
        let text = stringToSign(
            method: method, contentMD5: contentMD5(body), contentType: contentType, timestamp: timestamp,
            resource: resource)
        return scheme + " " + applicationKey + ":" + signature(text, key: key)
    }

    /// `Basic base64(key:secret)`, the prototyping scheme (docs/vendors/sinch.md §1, [DOC-BASIC]).
    static func basic(applicationKey: String, secret: String) -> String {
        "Basic " + Data("\(applicationKey):\(secret)".utf8).base64EncodedString()
    }

    // MARK: timestamps

    /// ISO-8601 in UTC with a `Z`, as Sinch's examples show (`2014-06-04T13:41:58Z`).
    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: false))
    }

    /// Reads an `x-timestamp`: with or without fractional seconds, with `Z` or an offset (the Python SDK
    /// sends `datetime.isoformat()`, `2026-01-02T03:04:05.123456+00:00`).
    static func parseTimestamp(_ text: String) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let date = try? Date(trimmed, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: false)) {
            return date
        }
        if let date = try? Date(trimmed, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) {
            return date
        }
        // Foundation reads at most milliseconds: drop digits past the third and try again.
        guard let dot = trimmed.firstIndex(of: ".") else { return nil }
        let fraction = trimmed[trimmed.index(after: dot)...].prefix { $0.isNumber }
        guard fraction.count > 3 else { return nil }
        let rest = trimmed[trimmed.index(after: dot)...].dropFirst(fraction.count)
        let shortened = String(trimmed[...dot]) + fraction.prefix(3) + rest
        return try? Date(shortened, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    // MARK: checking

    /// Why a signed request was refused, with the Sinch error code the emulator answers for it (§4.2).
    enum Refusal: Error, Equatable {
        /// No `Authorization` header (40104).
        case missingAuthorization
        /// An `Authorization` header that is not `Application key:signature` or `Basic …` (40100).
        case malformedAuthorization
        /// No readable `x-timestamp` (40101).
        case missingTimestamp
        /// An `x-timestamp` outside the allowed skew (40105).
        case staleTimestamp
        /// An application key the server does not know (40004).
        case unknownKey
        /// The signature does not match (40102); also a wrong Basic secret.
        case badSignature
        /// `Application <key>` alone: the public scheme, weaker than the application allows (40301).
        case weakScheme

        var errorCode: Int {
            switch self {
            case .missingAuthorization: return 40104
            case .malformedAuthorization: return 40100
            case .missingTimestamp: return 40101
            case .staleTimestamp: return 40105
            case .unknownKey: return 40004
            case .badSignature: return 40102
            case .weakScheme: return 40301
            }
        }

        var message: String {
            switch self {
            case .missingAuthorization: return "Authorization required"
            case .malformedAuthorization: return "Invalid authorization header"
            case .missingTimestamp: return "X-Timestamp required"
            case .staleTimestamp: return "Expired"
            case .unknownKey: return "Invalid application key"
            case .badSignature: return "Invalid signature"
            case .weakScheme: return "Invalid authorization scheme"
            }
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
            guard let data = Data(base64Encoded: parts[1].trimmingCharacters(in: .whitespaces)),
                let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":")
            else { return .failure(.malformedAuthorization) }
            guard String(text[..<colon]) == applicationKey else { return .failure(.unknownKey) }
            return ConstantTime.equals(String(text[text.index(after: colon)...]), secret)
                ? .success(()) : .failure(.badSignature)
        case "application":
            guard let colon = parts[1].lastIndex(of: ":") else {
                return parts[1].isEmpty ? .failure(.malformedAuthorization) : .failure(.weakScheme)
            }
            let key = String(parts[1][..<colon])
            let given = String(parts[1][parts[1].index(after: colon)...])
            guard key == applicationKey else { return .failure(.unknownKey) }
            guard let stamp = headers[timestampHeader], let date = parseTimestamp(stamp) else {
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
