/// The shape of the codes the gateway issues itself: how many characters, from which alphabet.
public struct OwnCodeFormat: Sendable, Hashable, Codable {
    /// The characters a code is made of.
    public enum Alphabet: String, Sendable, Hashable, Codable, CaseIterable {
        /// `0`–`9`.
        case digits
        /// Upper-case letters and digits without the look-alikes `0 O 1 I L` (31 characters); a check reads
        /// lower case as upper case.
        case alphanumeric

        /// The alphabet's characters, in the order a random value picks them.
        public var characters: [Character] {
            switch self {
            case .digits: return Array("0123456789")
            case .alphanumeric: return Array("23456789ABCDEFGHJKMNPQRSTUVWXYZ")
            }
        }
    }

    /// The shortest code the gateway issues.
    public static let minimumLength = 4
    /// The longest code the gateway issues.
    public static let maximumLength = 10
    /// The default: six digits.
    public static let standard = OwnCodeFormat(length: 6, alphabet: .digits)

    /// How many characters, 4 to 10.
    public var length: Int
    /// The characters it is made of.
    public var alphabet: Alphabet

    /// A format of `length` characters from `alphabet`; the length is clamped to 4...10.
    public init(length: Int, alphabet: Alphabet = .digits) {
        self.length = min(max(length, Self.minimumLength), Self.maximumLength)
        self.alphabet = alphabet
    }

    /// The code `randomBytes` picks, each character by rejection sampling so that every character of the
    /// alphabet is equally likely: a byte picks `characters[byte % count]` unless it falls in the last, partial
    /// run of the 256 values, which is passed over. `nil` when the bytes run out first (the caller draws more).
    public func code(from randomBytes: some Sequence<UInt8>) -> String? {
        let characters = alphabet.characters
        let limit = 256 - 256 % characters.count
        var code = ""
        for byte in randomBytes where Int(byte) < limit {
            code.append(characters[Int(byte) % characters.count])
            if code.count == length { return code }
        }
        return nil
    }

    /// The format of a code the caller chose (the Twilio front door's `CustomCode`): 4 to 10 digits, or 4 to 10
    /// characters of the alphanumeric alphabet (lower case read as upper case), so that a check reads it as it
    /// reads the gateway's own. `nil` for anything else.
    public static func custom(_ code: String) -> (code: String, format: OwnCodeFormat)? {
        guard (minimumLength...maximumLength).contains(code.count) else { return nil }
        for alphabet in Alphabet.allCases {
            let format = OwnCodeFormat(length: code.count, alphabet: alphabet)
            if let normalized = format.normalized(code), normalized.count == code.count {
                return (normalized, format)
            }
        }
        return nil
    }

    /// What the user typed, as it is compared: spaces and dashes removed, lower case read as upper case for
    /// the alphanumeric alphabet. `nil` when it cannot be a code of this format (wrong length or character),
    /// which the check counts as a wrong code.
    public func normalized(_ entered: String) -> String? {
        var code = entered.filter { $0 != " " && $0 != "-" }
        if alphabet == .alphanumeric { code = code.uppercased() }
        let characters = Set(alphabet.characters)
        guard code.count == length, code.allSatisfy(characters.contains) else { return nil }
        return code
    }
}
