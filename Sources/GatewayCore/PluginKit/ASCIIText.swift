import Foundation

/// The shape checks plugins run on short ASCII values: a setting's value, a vendor's error code before it is
/// kept, a header value taken from a client. Written once, so each plugin states only its limits.
public enum ASCIIText {
    /// Whether `value` is `length` characters long, each an ASCII letter or digit or one of `extra`
    /// (`IDAAS.SDK.LOGIN.1003` with `extra: "._"`, a header name with `"-_"`).
    public static func isToken(_ value: some StringProtocol, length: ClosedRange<Int> = 1...64, extra: String = "")
        -> Bool
    {
        length.contains(value.count)
            && value.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || extra.contains($0)) }
    }

    /// `value` when it is a token (``isToken(_:length:extra:)``), else `nil`: what a plugin may keep and log of a
    /// vendor's code, never free text that could carry a phone number.
    public static func token(_ value: String?, length: ClosedRange<Int> = 1...64, extra: String = "") -> String? {
        value.flatMap { isToken($0, length: length, extra: extra) ? $0 : nil }
    }

    /// Whether `value` is at most `max` characters of printable ASCII (space to `~`; without the space when
    /// `spaces` is false).
    public static func isPrintable(_ value: String, max: Int, spaces: Bool = true) -> Bool {
        value.count <= max && value.unicodeScalars.allSatisfy { $0.value >= (spaces ? 0x20 : 0x21) && $0.value < 0x7F }
    }

    /// `value` reduced to printable ASCII, at most `max` characters, trimmed of spaces: safe as an HTTP header
    /// value.
    public static func printable(_ value: String, max: Int) -> String {
        let kept = value.unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7F }.prefix(max)
        return String(String.UnicodeScalarView(kept)).trimmingCharacters(in: .whitespaces)
    }

    /// Whether `value` is a language tag such as `zh`, `en` or `zh-Hans`: a 2-3 letter language with optional
    /// subtags of 1-8 letters or digits.
    public static func isLanguageTag(_ value: String) -> Bool {
        let parts = value.split(separator: "-", omittingEmptySubsequences: false)
        guard let first = parts.first, isToken(first, length: 2...3), first.allSatisfy(\.isLetter) else { return false }
        return parts.dropFirst().allSatisfy { isToken($0, length: 1...8) }
    }
}
