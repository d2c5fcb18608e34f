/// Why a string could not be parsed as a phone number.
///
/// The cases are libphonenumber's `NumberParseException` error types; ``reason`` folds them into the
/// gateway's stable reasons (`no_digits`, `too_short`, `too_long`, `invalid_country_code`, `not_a_number`),
/// which `invalid_phone_number` errors carry in their message.
public struct PhoneNumberParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// libphonenumber's error types.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// No calling code could be found: not written internationally and no (valid) default region, or a
        /// `+` followed by a code that no country has.
        case invalidCountryCode = "INVALID_COUNTRY_CODE"
        /// The text does not look like a phone number.
        case notANumber = "NOT_A_NUMBER"
        /// An international prefix (`+`, `00`, `011`) with too few digits after it.
        case tooShortAfterIDD = "TOO_SHORT_AFTER_IDD"
        /// The national number has fewer than two digits.
        case tooShortNSN = "TOO_SHORT_NSN"
        /// The input is longer than 250 characters or the national number longer than 17 digits.
        case tooLong = "TOO_LONG"
    }

    /// The gateway's stable reasons, as they appear in `invalid_phone_number` messages.
    public enum Reason: String, Sendable, Hashable, CaseIterable, Codable {
        case noDigits = "no_digits"
        case tooShort = "too_short"
        case tooLong = "too_long"
        case invalidCountryCode = "invalid_country_code"
        case notANumber = "not_a_number"
    }

    /// libphonenumber's error type.
    public var kind: Kind
    /// The gateway's reason.
    public var reason: Reason

    /// An error of libphonenumber's `kind`; `reason` refines the gateway's reason (`no_digits` for a
    /// `notANumber` input without a single digit), otherwise it follows from the kind.
    public init(_ kind: Kind, reason: Reason? = nil) {
        self.kind = kind
        switch kind {
        case .invalidCountryCode: self.reason = reason ?? .invalidCountryCode
        case .notANumber: self.reason = reason ?? .notANumber
        case .tooShortAfterIDD, .tooShortNSN: self.reason = reason ?? .tooShort
        case .tooLong: self.reason = reason ?? .tooLong
        }
    }

    /// The kind and the reason, never the input: `NOT_A_NUMBER (reason: no_digits)`.
    public var description: String { "\(kind.rawValue) (reason: \(reason.rawValue))" }

    /// The error the API answers with. The message names the reason and never echoes the input.
    public var gatewayError: GatewayError {
        let text: String
        switch reason {
        case .noDigits: text = "The phone number has no digits"
        case .tooShort: text = "The phone number is too short"
        case .tooLong: text = "The phone number is too long"
        case .invalidCountryCode:
            text =
                "The phone number has no valid country code; write it with + and the country code, or give its region"
        case .notANumber: text = "The phone number is not a number"
        }
        return GatewayError(.invalidPhoneNumber, "\(text) (reason: \(reason.rawValue)).")
    }
}
