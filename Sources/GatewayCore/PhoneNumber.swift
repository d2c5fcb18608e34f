/// A phone number in E.164 form (`+` then 8 to 15 digits, no leading zero).
///
/// Input may carry spaces, dashes, dots and parentheses, and full-width digits; they are removed.
/// Region-aware parsing of national forms comes with the libphonenumber metadata (issue 4).
public struct PhoneNumber: Sendable, Hashable, Codable, CustomStringConvertible {
    public let e164: String

    /// Parses `input` as an international number.
    /// - Throws: `invalid_phone_number` with a reason in the message.
    public init(parsing input: String) throws(GatewayError) {
        var digits = ""
        var sawPlus = false
        for scalar in input.unicodeScalars {
            switch scalar.value {
            case 0x30...0x39: digits.unicodeScalars.append(scalar)
            case 0xFF10...0xFF19: digits.unicodeScalars.append(Unicode.Scalar(scalar.value - 0xFF10 + 0x30)!)
            case 0x2B, 0xFF0B:  // + and full-width +
                if sawPlus || !digits.isEmpty {
                    throw GatewayError(.invalidPhoneNumber, "The phone number is not a number (reason: not_a_number).")
                }
                sawPlus = true
            case 0x20, 0x2D, 0x2E, 0x28, 0x29, 0xA0, 0x2010...0x2015, 0x3000:
                continue
            default:
                throw GatewayError(.invalidPhoneNumber, "The phone number is not a number (reason: not_a_number).")
            }
        }
        if digits.isEmpty {
            throw GatewayError(.invalidPhoneNumber, "The phone number has no digits (reason: no_digits).")
        }
        if !sawPlus {
            // Accept the international-prefix form 00CC... ; national forms need region metadata.
            if digits.hasPrefix("00") {
                digits.removeFirst(2)
            } else {
                throw GatewayError(
                    .invalidPhoneNumber,
                    "The phone number must be in E.164 form, starting with + and the country code (reason: invalid_country_code)."
                )
            }
        }
        if digits.first == "0" {
            throw GatewayError(.invalidPhoneNumber, "No country code starts with 0 (reason: invalid_country_code).")
        }
        if digits.count < 8 {
            throw GatewayError(.invalidPhoneNumber, "The phone number is too short (reason: too_short).")
        }
        if digits.count > 15 {
            throw GatewayError(.invalidPhoneNumber, "The phone number is too long (reason: too_long).")
        }
        self.e164 = "+" + digits
    }

    /// The digits without the leading `+` (Vonage's form).
    public var digits: Substring { e164.dropFirst() }

    /// The number for logs: country code and first digits, then stars, then the last two digits
    /// (`+1650*****34`).
    public var masked: String { Self.mask(e164) }

    public var description: String { masked }

    public static func mask(_ value: String) -> String {
        let chars = Array(value)
        guard chars.count > 7 else { return String(repeating: "*", count: chars.count) }
        let head = 5
        let tail = 2
        return String(chars[0..<head]) + String(repeating: "*", count: chars.count - head - tail)
            + String(chars[(chars.count - tail)...])
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode(String.self)
        do {
            self = try PhoneNumber(parsing: raw)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.message)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(e164)
    }
}
