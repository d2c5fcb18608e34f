import Foundation

/// Compact JWS (RFC 7515) and JWTs: written once for every plugin that signs or checks one (Vonage's
/// application JWTs and signed callbacks, Firebase's and IDaaS's ID tokens, Twilio Verify Push's factor
/// JWTs), with ``Base64URL`` as the one base64url.
public enum JWS {
    /// A compact JWS as read, before its signature is checked.
    public struct Token: Sendable {
        /// The decoded header, a JSON object.
        public var header: [String: JSONValue]
        /// The decoded payload bytes (a JWT's claims).
        public var payload: Data
        /// The decoded signature bytes.
        public var signature: Data
        /// `base64url(header).base64url(payload)`, what the signature covers.
        public var signingInput: String

        /// The `alg` header value.
        public var algorithm: String? { header["alg"]?.stringValue }

        /// Whether the header names `algorithm` and the signature verifies with it.
        public func isSigned(by algorithm: JWSAlgorithm) -> Bool {
            self.algorithm == algorithm.name && algorithm.verify(signature, Data(signingInput.utf8))
        }

        /// The payload decoded as `T`; `nil` when it is not.
        public func claims<T: Decodable>(_ type: T.Type) -> T? {
            try? JSONDecoder().decode(type, from: payload)
        }
    }

    /// `header` (with `alg` from `algorithm` and `typ: JWT` unless given) and `claims`, as JSON with sorted keys
    /// and unescaped slashes, signed by `algorithm`, in the compact form.
    public static func sign(
        _ claims: some Encodable, header: [String: JSONValue] = [:], with algorithm: JWSAlgorithm
    ) throws -> String {
        var fields: [String: JSONValue] = ["typ": "JWT"]
        fields.merge(header) { _, given in given }
        fields["alg"] = .string(algorithm.name)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let input =
            Base64URL.encode(try encoder.encode(JSONValue.object(fields))) + "."
            + Base64URL.encode(try encoder.encode(claims))
        return input + "." + Base64URL.encode(try algorithm.sign(Data(input.utf8)))
    }

    /// Splits and decodes a compact JWS: three base64url parts (URL alphabet only), a JSON object header.
    /// `nil` when it is not one.
    public static func parse(_ token: String) -> Token? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ isBase64URL($0) }), let headerData = Base64URL.decode(parts[0]),
            let payload = Base64URL.decode(parts[1]), let signature = Base64URL.decode(parts[2]),
            let header = (try? JSONDecoder().decode(JSONValue.self, from: headerData))?.objectValue
        else { return nil }
        return Token(header: header, payload: payload, signature: signature, signingInput: parts[0] + "." + parts[1])
    }

    private static func isBase64URL(_ part: Substring) -> Bool {
        part.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                return true
            default:
                return false
            }
        }
    }
}
