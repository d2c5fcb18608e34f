import Foundation

/// The JSON of the CAMARA APIs and of the OpenID Connect token endpoint (docs/vendors/camara.md §1–§3), as the
/// plugin sends and the emulator answers it. CAMARA's fields are camelCase; OAuth's snake_case.
enum CamaraWire {
    /// `POST /sim-swap/v2/check`.
    struct CheckSimSwap: Codable, Sendable {
        var phoneNumber: String?
        var maxAge: Int?
    }

    /// Its answer.
    struct CheckSimSwapInfo: Codable, Sendable {
        var swapped: Bool
    }

    /// `POST /sim-swap/v2/retrieve-date`.
    struct CreateSimSwapDate: Codable, Sendable {
        var phoneNumber: String?
    }

    /// Its answer: RFC 3339 with an offset, `null` where the operator may not say.
    struct SimSwapInfo: Codable, Sendable {
        var latestSimChange: String?
        var monitoredPeriod: Int?

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            // Required, and nullable: `null` is written, never left out.
            try container.encode(latestSimChange, forKey: .latestSimChange)
            try container.encodeIfPresent(monitoredPeriod, forKey: .monitoredPeriod)
        }
    }

    /// `POST /number-verification/v2/verify`: exactly one of the two.
    struct NumberVerificationRequest: Codable, Sendable {
        var phoneNumber: String?
        var hashedPhoneNumber: String?
    }

    /// Its answer.
    struct NumberVerificationMatch: Codable, Sendable {
        var devicePhoneNumberVerified: Bool
    }

    /// `GET /number-verification/v2/device-phone-number`.
    struct NumberVerificationShare: Codable, Sendable {
        var devicePhoneNumber: String
    }

    /// CAMARA's error body.
    struct ErrorInfo: Codable, Sendable {
        var status: Int
        var code: String
        var message: String
    }

    /// The token endpoint's answer (RFC 6749 §5.1).
    struct TokenResponse: Codable, Sendable {
        var accessToken: String
        var tokenType: String
        var expiresIn: Int?
        var scope: String?

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token"
            case tokenType = "token_type"
            case expiresIn = "expires_in"
            case scope
        }
    }

    /// An OAuth error (RFC 6749 §5.2), from the token endpoint or in the redirect's query.
    struct OAuthError: Codable, Sendable {
        var error: String
        var errorDescription: String?

        enum CodingKeys: String, CodingKey {
            case error
            case errorDescription = "error_description"
        }
    }

    /// The `x-correlator` pattern ([DG]).
    static func isCorrelator(_ value: String) -> Bool {
        value.utf8.count <= 256
            && value.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII
                    && (CharacterSet.alphanumerics.contains(scalar) || "-_:;./<>{}".unicodeScalars.contains(scalar))
            }
    }

    /// `^\+[1-9][0-9]{4,14}$`.
    static func isPhoneNumber(_ value: String) -> Bool {
        let digits = value.utf8.dropFirst()
        return value.first == "+" && (5...15).contains(digits.count) && digits.first != UInt8(ascii: "0")
            && digits.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// `^[a-fA-F0-9]{64}$`.
    static func isHashedPhoneNumber(_ value: String) -> Bool {
        value.utf8.count == 64 && value.allSatisfy(\.isHexDigit)
    }
}
