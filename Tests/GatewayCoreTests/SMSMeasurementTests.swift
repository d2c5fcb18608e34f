import GatewayCore
import Testing

/// Encoding, units and segments against the limits the vendors publish: GSM-7 160 single and 153 per part,
/// UCS-2 70 and 67, extension characters two septets, one non-GSM character makes the whole message UCS-2.
@Suite struct SMSMeasurementTests {
    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let text: String
        let encoding: SMSEncoding
        let units: Int
        let segments: Int
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "empty", text: "", encoding: .gsm7, units: 0, segments: 0),
        Row(
            name: "one GSM-7 segment full", text: String(repeating: "a", count: 160), encoding: .gsm7, units: 160,
            segments: 1),
        Row(
            name: "one septet over", text: String(repeating: "a", count: 161), encoding: .gsm7, units: 161, segments: 2),
        Row(name: "two parts full", text: String(repeating: "a", count: 306), encoding: .gsm7, units: 306, segments: 2),
        Row(name: "three parts", text: String(repeating: "a", count: 307), encoding: .gsm7, units: 307, segments: 3),
        Row(
            name: "basic accents", text: "Gültig für 10 Min. è é ù ì ò Ç Ø å Æ ß É Ä Ö Ñ Ü § ¿ ¡ £ ¥ Δ Ω",
            encoding: .gsm7, units: 62, segments: 1),
        Row(
            name: "extension characters take two", text: String(repeating: "€", count: 80), encoding: .gsm7, units: 160,
            segments: 1),
        Row(
            name: "extension over one segment", text: String(repeating: "€", count: 81), encoding: .gsm7, units: 162,
            segments: 2),
        Row(name: "every extension character", text: "^{}\\[~]|€\u{0C}", encoding: .gsm7, units: 20, segments: 1),
        // 152 + 2 + 152 = 306 septets, which 2 parts hold only if the euro sign is split: it is not.
        Row(
            name: "no escape split across parts",
            text: String(repeating: "a", count: 152) + "€" + String(repeating: "a", count: 152), encoding: .gsm7,
            units: 306, segments: 3),
        Row(name: "CR LF is two septets", text: "a\r\nb", encoding: .gsm7, units: 4, segments: 1),
        Row(name: "one lower-case c cedilla makes UCS-2", text: "reçu 123456", encoding: .ucs2, units: 11, segments: 1),
        Row(name: "an acute o makes UCS-2", text: "código", encoding: .ucs2, units: 6, segments: 1),
        Row(
            name: "UCS-2 segment full", text: String(repeating: "я", count: 70), encoding: .ucs2, units: 70, segments: 1
        ),
        Row(name: "UCS-2 one over", text: String(repeating: "я", count: 71), encoding: .ucs2, units: 71, segments: 2),
        Row(
            name: "UCS-2 two parts full", text: String(repeating: "验", count: 134), encoding: .ucs2, units: 134,
            segments: 2),
        Row(
            name: "UCS-2 three parts", text: String(repeating: "验", count: 135), encoding: .ucs2, units: 135,
            segments: 3),
        Row(
            name: "emoji are two units", text: String(repeating: "😀", count: 35), encoding: .ucs2, units: 70,
            segments: 1),
        Row(
            name: "no surrogate pair split", text: String(repeating: "😀", count: 36), encoding: .ucs2, units: 72,
            segments: 2),
        Row(name: "GSM text with one Arabic letter", text: "Code 123456 ر", encoding: .ucs2, units: 13, segments: 1),
    ]

    @Test(arguments: rows)
    func measures(_ row: Row) {
        let measurement = SMSMeasurement(measuring: row.text)
        #expect(measurement == SMSMeasurement(encoding: row.encoding, units: row.units, segments: row.segments))
    }
}
