/// A phone number the gateway may send to: parsed by libphonenumber's rules and metadata, kept in E.164
/// (`+` then the calling code and the national number), with its region, type and validity.
///
/// Input may be international (`+44 20 7946 0958`, `0044 ...`, IDaaS's `+86-13800000000`) or, given a
/// default region, national (`(650) 555-3434`, `07700 900123`) or dialled with that region's
/// international prefix (`011 44 ...` from the US). Spaces, dashes, dots, slashes, parentheses and
/// full-width digits are accepted; an extension (`ext. 12`, `x12`, `#12`, `;ext=12`) is kept apart in
/// ``extension`` and is never part of ``e164`` or of anything sent to a vendor.
///
/// Parsing is lenient about validity on purpose: a number that parses may still be ``isValid`` false
/// (possible but unassigned, `+1 555 ...`) or of a type that cannot receive an SMS. Callers decide, before
/// spending money, with ``isValid`` and ``type``.
///
/// Two numbers are equal when their E.164 forms are; the extension is not part of the identity (a
/// verification reaches the line, not the extension), and the Codable form is the E.164 string alone.
public struct PhoneNumber: Sendable, Hashable, Codable, CustomStringConvertible {
    /// E.164: `+`, the calling code and the national number (`+442079460958`). What vendors receive.
    public let e164: String
    /// The country calling code (`44`).
    public let countryCode: Int
    /// The national significant number (`2079460958`): no national prefix, but the leading zeros that
    /// belong to the number (Italy's `06...`).
    public let nationalNumber: String
    /// The extension's digits, if the input had one. Never sent to a vendor.
    public let `extension`: String?
    /// The region (`"GB"`, `"JE"`), `"001"` for non-geographic numbers (+800, +882, ...), or nil when no
    /// region of the calling code claims the number (an invalid number of a shared code such as +1).
    public let region: String?
    /// What kind of line it is by the region's metadata; ``PhoneNumberType/unknown`` when not valid.
    public let type: PhoneNumberType
    /// Whether the number has a length its calling code allows (a looser test than ``isValid``).
    public let isPossible: Bool

    /// Whether the number matches a pattern of its region's numbering plan (libphonenumber's
    /// `is_valid_number`). It does not prove the line exists.
    public var isValid: Bool { type != .unknown }

    /// ``region`` when the number has one, else the main region of its calling code (`GB` for an invalid
    /// +44 number): where a policy for numbers the metadata does not know applies.
    public var policyRegion: String {
        region ?? PhoneMetadataStore.shared.mainRegion(forCallingCode: countryCode)
    }

    /// Parses `input` as an international number (or one written with the `00` international prefix).
    /// - Throws: `invalid_phone_number` with a reason in the message: `no_digits`, `too_short`, `too_long`,
    ///   `invalid_country_code` or `not_a_number`.
    public init(parsing input: String) throws(GatewayError) {
        try self.init(parsing: input, defaultRegion: nil)
    }

    /// Parses `input`, which may be in the national form of `defaultRegion` or dialled from it.
    ///
    /// - Parameters:
    ///   - input: what the user typed.
    ///   - defaultRegion: where the user is (ISO 3166-1 alpha-2, any case: `"GB"`, `"us"`); nil when the
    ///     number must be international (`+` or `00`).
    /// - Throws: `invalid_phone_number` with a reason in the message: `no_digits`, `too_short`, `too_long`,
    ///   `invalid_country_code` or `not_a_number`. The message never repeats the number.
    public init(parsing input: String, defaultRegion: String?) throws(GatewayError) {
        let region = defaultRegion?.uppercased()
        let text = try Self.admit(input, defaultRegion: region)
        let parsed: ParsedPhoneNumber
        do {
            parsed = try PhoneNumberParser.parse(text, defaultRegion: region)
        } catch {
            throw error.gatewayError
        }
        let national = parsed.nationalScalars
        // E.164 allows 15 digits at most; libphonenumber itself allows 17 national digits (German numbers).
        if String(parsed.countryCode).count + national.count > 15 {
            throw PhoneNumberParseError(.tooLong).gatewayError
        }
        if PhoneNumberValidation.isTooShort(countryCode: parsed.countryCode, national: national) {
            throw PhoneNumberParseError(.tooShortNSN).gatewayError
        }
        let (numberRegion, type) = PhoneNumberValidation.analyse(countryCode: parsed.countryCode, national: national)
        self.e164 = parsed.e164
        self.countryCode = parsed.countryCode
        self.nationalNumber = parsed.nationalNumber
        self.extension = parsed.extension.map(Self.asciiDigits)
        self.region = numberRegion
        self.type = type
        self.isPossible = PhoneNumberValidation.isPossible(countryCode: parsed.countryCode, national: national)
    }

    /// The digits without the leading `+` (Vonage's form).
    public var digits: Substring { e164.dropFirst() }

    /// E.164 with a dash after the calling code, `+86-13800000000` (the form BambooCloud IDaaS takes).
    public var dashedE164: String { "+\(countryCode)-\(nationalNumber)" }

    /// The international form for people, `+44 20 7946 0958`, by the region's formatting rules. Without
    /// the extension.
    public var international: String { parsed.international }

    /// The national form for people, `020 7946 0958`, as dialled inside the region. Without the extension.
    public var national: String { parsed.national }

    private var parsed: ParsedPhoneNumber {
        ParsedPhoneNumber(countryCode: countryCode, nationalNumber: nationalNumber)
    }

    /// The number for logs: country code and first digits, then stars, then the last two digits
    /// (`+1650*****34`).
    public var masked: String { Self.mask(e164) }

    /// The masked form (``masked``), so a number interpolated into a log line never shows in full.
    public var description: String { masked }

    /// Masks any value for logs: the first five and last two characters stay, the rest become stars;
    /// values of seven characters or fewer are all stars.
    public static func mask(_ value: String) -> String {
        let chars = Array(value)
        guard chars.count > 7 else { return String(repeating: "*", count: chars.count) }
        let head = 5
        let tail = 2
        return String(chars[0..<head]) + String(repeating: "*", count: chars.count - head - tail)
            + String(chars[(chars.count - tail)...])
    }

    /// Whether the two numbers have the same E.164 form; extensions are ignored.
    public static func == (lhs: PhoneNumber, rhs: PhoneNumber) -> Bool { lhs.e164 == rhs.e164 }

    /// Hashes the E.164 form only, as ``==`` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(e164) }

    /// Reads an E.164 string, parsed as an international number; throws `DecodingError.dataCorrupted` when it is not
    /// one.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode(String.self)
        do {
            self = try PhoneNumber(parsing: raw)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.message)
        }
    }

    /// Writes the E.164 string alone, without the extension.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(e164)
    }
}

extension PhoneNumber {
    /// The gateway's input rules, stricter than libphonenumber's: digits (ASCII or full-width), one
    /// leading `+`, the usual separators, and an extension at the end. No letters (vanity numbers are not
    /// verifiable), no other scripts' digits, no text around the number. Returns the text to parse, with a
    /// leading `00` read as the international prefix when there is no default region.
    static func admit(_ input: String, defaultRegion: String?) throws(GatewayError) -> String {
        var scalars = input.unicodeScalars.map(\.value)
        if scalars.count > PhoneNumberParser.maxInputLength { throw PhoneNumberParseError(.tooLong).gatewayError }
        while let first = scalars.first, isBlank(first) { scalars.removeFirst() }
        while let last = scalars.last, isBlank(last) { scalars.removeLast() }
        let main = PhoneNumberParser.stripExtension(scalars).number
        var sawDigit = false
        for (index, scalar) in main.enumerated() {
            switch scalar {
            case 0x30...0x39, 0xFF10...0xFF19:
                sawDigit = true
            case 0x2B, 0xFF0B:
                if index != 0 { throw PhoneNumberParseError(.notANumber).gatewayError }
            default:
                if !isSeparator(scalar) { throw PhoneNumberParseError(.notANumber).gatewayError }
            }
        }
        if !sawDigit { throw PhoneNumberParseError(.notANumber, reason: .noDigits).gatewayError }
        // No region to read national forms by: take a leading 00 as the international prefix used
        // across most of the world (libphonenumber alone would answer invalid_country_code).
        if defaultRegion == nil, let first = main.first, !PhoneNumberParser.isPlus(first) {
            let digits = main.lazy.filter { !isSeparator($0) }.prefix(2).compactMap(PhoneNumberParser.digitValue)
            if Array(digits) == [0, 0] {
                var rest = scalars[...]
                var zeros = 0
                while zeros < 2, let next = rest.first {
                    if PhoneNumberParser.digitValue(next) == 0 { zeros += 1 }
                    rest = rest.dropFirst()
                }
                return "+" + PhoneNumberFormatting.string(Array(rest))
            }
        }
        return PhoneNumberFormatting.string(scalars)
    }

    private static func isBlank(_ scalar: UInt32) -> Bool {
        scalar == 0x20 || scalar == 0xA0 || scalar == 0x3000
    }

    /// Spaces, dashes (ASCII, Unicode, full-width, minus, katakana prolonged mark), dots, slashes and
    /// parentheses (ASCII and full-width).
    private static func isSeparator(_ scalar: UInt32) -> Bool {
        switch scalar {
        case 0x20, 0xA0, 0x3000, 0x2D, 0x2010...0x2015, 0x2212, 0x30FC, 0xFF0D, 0x2E, 0xFF0E, 0x2F, 0xFF0F, 0x28, 0x29,
            0xFF08, 0xFF09:
            return true
        default:
            return false
        }
    }

    /// The extension with full-width and other digits made ASCII.
    private static func asciiDigits(_ text: String) -> String {
        String(text.unicodeScalars.compactMap { PhoneNumberParser.digitValue($0.value) }.map { Character(String($0)) })
    }
}
