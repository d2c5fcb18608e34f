/// A delivery channel of the normalized API.
public enum Channel: String, Sendable, Codable, CaseIterable, Hashable {
    case sms
    case voice
    case whatsapp
    case email
    case push
    /// A missed call whose caller number is the code (Sinch flash call).
    case flashcall
    /// Silent network authentication: the app opens a URL over cellular data and the mobile network
    /// confirms the number, with no code (Vonage silent auth, Sinch seamless).
    case silentAuth = "silent_auth"

    /// Whether the destination of this channel is a phone number.
    public var needsPhoneNumber: Bool {
        switch self {
        case .sms, .voice, .whatsapp, .flashcall, .silentAuth: return true
        case .email, .push: return false
        }
    }
}

/// Where a verification is delivered.
public enum Destination: Sendable, Hashable, Codable {
    case phone(PhoneNumber)
    case email(String)
    /// An opaque user identity (Twilio Verify Push entity, for example).
    case identity(String)
    /// A destination the store's retention replaced (`retention.anonymize_after`): `masked` is what the API and
    /// the console show (`+4474••••••23`), `digest` the keyed hash a lookup by the number still matches. The
    /// number itself is gone.
    case anonymized(masked: String, digest: String)

    /// The value as the API shows it: E.164, the email address, or the identity.
    public var value: String {
        switch self {
        case .phone(let number): return number.e164
        case .email(let address): return address
        case .identity(let identity): return identity
        case .anonymized(let masked, _): return masked
        }
    }

    /// The value for logs, with personal data masked.
    public var masked: String {
        switch self {
        case .phone(let number): return number.masked
        case .email(let address):
            guard let at = address.firstIndex(of: "@") else { return "***" }
            return String(address.prefix(1)) + "***" + String(address[at...])
        case .identity(let identity): return String(identity.prefix(3)) + "***"
        case .anonymized(let masked, _): return masked
        }
    }

    /// The number, for a phone destination; `nil` for an email or an identity.
    public var phoneNumber: PhoneNumber? {
        if case .phone(let number) = self { return number }
        return nil
    }

    /// Builds the destination a channel needs from the client's `to` field.
    ///
    /// - Parameter region: where the user is, for phone numbers written in national form (`07700 900123`
    ///   with `GB`); nil when `raw` must be international.
    public static func parse(_ raw: String, for channel: Channel, region: String? = nil) throws(GatewayError)
        -> Destination
    {
        switch channel {
        case .sms, .voice, .whatsapp, .flashcall, .silentAuth:
            return .phone(try PhoneNumber(parsing: raw, defaultRegion: region))
        case .email:
            let parts = raw.split(separator: "@", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."),
                !parts[1].hasSuffix("."), raw.count <= 254, !raw.contains(where: \.isWhitespace)
            else {
                throw GatewayError(.invalidRequest, "`to` must be an email address for the email channel.")
            }
            return .email(raw)
        case .push:
            guard (8...64).contains(raw.count),
                raw.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
            else {
                throw GatewayError(
                    .invalidRequest, "`to` must be a user identity of 8 to 64 letters, digits and dashes for push.")
            }
            return .identity(raw)
        }
    }
}
