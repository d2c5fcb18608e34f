/// The data coding a text message goes out in: GSM 03.38's 7-bit alphabet when every character has a place in
/// it (or in its extension table), else UCS-2 (UTF-16) for the whole message.
public enum SMSEncoding: String, Sendable, Hashable, Codable {
    /// GSM 7-bit default alphabet: 160 septets in one segment, 153 per segment when concatenated; a character of
    /// the extension table (`^ { } \ [ ~ ] | €` and form feed) takes two septets, and is never split.
    case gsm7 = "gsm7"
    /// UCS-2 as carriers take it (UTF-16): 70 code units in one segment, 67 per segment when concatenated; a
    /// character outside the Basic Multilingual Plane takes two units, and is never split.
    case ucs2 = "ucs2"

    /// What one segment holds alone, and what each holds when the message is split (the user data header
    /// takes the rest).
    var capacity: (single: Int, concatenated: Int) {
        switch self {
        case .gsm7: return (160, 153)
        case .ucs2: return (70, 67)
        }
    }

    /// The GSM 03.38 default alphabet, one septet each.
    static let gsmBasic: Set<Unicode.Scalar> = Set(
        "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
            .unicodeScalars)

    /// The GSM 03.38 extension table, an escape septet and one more each.
    static let gsmExtension: Set<Unicode.Scalar> = Set("\u{0C}^{}\\[~]|€".unicodeScalars)
}

/// What a rendered message costs on the air: its encoding, its length in that encoding's units and the
/// segments a carrier sends it in.
public struct SMSMeasurement: Sendable, Hashable, Codable {
    /// The encoding the message needs.
    public var encoding: SMSEncoding
    /// The length in the encoding's units: septets for GSM-7 (two for an extension character), UTF-16 code
    /// units for UCS-2 (two for a character outside the Basic Multilingual Plane).
    public var units: Int
    /// The segments the message is sent and billed in; 0 for an empty message.
    public var segments: Int

    /// The measurement of `text` as a message body.
    ///
    /// One character outside GSM-7 makes the whole message UCS-2. A message within one segment's capacity is
    /// one segment; a longer one is split into segments of the concatenated capacity, with no two-unit character
    /// split across two segments (so the count can exceed `units / 153` by one where one would be).
    public init(measuring text: String) {
        let scalars = text.unicodeScalars
        let isGSM = scalars.allSatisfy { SMSEncoding.gsmBasic.contains($0) || SMSEncoding.gsmExtension.contains($0) }
        let encoding: SMSEncoding = isGSM ? .gsm7 : .ucs2
        let sizes: [Int] =
            isGSM
            ? scalars.map { SMSEncoding.gsmExtension.contains($0) ? 2 : 1 }
            : scalars.map { $0.value > 0xFFFF ? 2 : 1 }
        let units = sizes.reduce(0, +)
        let capacity = encoding.capacity
        var segments = 0
        if units > 0 && units <= capacity.single {
            segments = 1
        } else if units > capacity.single {
            var filled = capacity.concatenated
            for size in sizes {
                if filled + size > capacity.concatenated {
                    segments += 1
                    filled = 0
                }
                filled += size
            }
        }
        self.init(encoding: encoding, units: units, segments: segments)
    }

    /// A measurement from its parts.
    public init(encoding: SMSEncoding, units: Int, segments: Int) {
        self.encoding = encoding
        self.units = units
        self.segments = segments
    }
}
