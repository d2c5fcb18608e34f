/// Who a message comes from, as a messaging vendor takes it.
public enum SenderAddress: Sendable, Hashable, Codable {
    /// A long number in E.164 (`+14155550100`).
    case number(String)
    /// A short code: 3 to 8 digits (`72345`).
    case shortCode(String)
    /// An alphanumeric sender ID: 1 to 11 ASCII letters, digits and spaces, at least one letter (`Acme`).
    case alphanumeric(String)
    /// A Twilio Messaging Service (`MG` and 32 hex digits), which picks the sender from its pool.
    case messagingService(String)

    /// The countries whose carriers refuse alphanumeric sender IDs: the United States (Twilio's US guidelines)
    /// and Canada (Vonage's North America rule: a long number or short code is required).
    public static let alphanumericRefused: Set<String> = ["US", "CA"]

    /// The address `text` spells: `+` and digits a number, 3 to 8 digits a short code, `MG` and 32 hex digits a
    /// Messaging Service, anything else an alphanumeric sender ID, which must be well formed.
    public init(parsing text: String) throws(MessageTemplateError) {
        let digits = Set("0123456789")
        let hex = Set("0123456789abcdefABCDEF")
        if text.hasPrefix("+") {
            let rest = text.dropFirst()
            guard (7...15).contains(rest.count), rest.allSatisfy(digits.contains), rest.first != "0" else {
                throw MessageTemplateError(problems: ["sender `\(text)` is not an E.164 number (+ and 7 to 15 digits)"])
            }
            self = .number(text)
        } else if text.allSatisfy(digits.contains), (3...8).contains(text.count) {
            self = .shortCode(text)
        } else if text.hasPrefix("MG"), text.count == 34, text.dropFirst(2).allSatisfy(hex.contains) {
            self = .messagingService(text)
        } else {
            let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 ")
            guard (1...11).contains(text.count), text.allSatisfy(allowed.contains), text.contains(where: \.isLetter),
                text.first != " "
            else {
                throw MessageTemplateError(problems: [
                    "sender `\(text)` is neither a number (+E.164), a short code (3 to 8 digits), a Messaging "
                        + "Service SID (MG…) nor an alphanumeric sender ID (1 to 11 letters, digits and spaces, "
                        + "at least one letter)"
                ])
            }
            self = .alphanumeric(text)
        }
    }

    /// The address as the vendor's `From` takes it.
    public var value: String {
        switch self {
        case .number(let value), .shortCode(let value), .alphanumeric(let value), .messagingService(let value):
            return value
        }
    }

    /// Whether this is an alphanumeric sender ID.
    public var isAlphanumeric: Bool {
        if case .alphanumeric = self { return true }
        return false
    }
}

/// The senders of one messaging provider: a default and per-country overrides.
public struct SenderTable: Sendable, Hashable {
    /// The sender for a country with no override; `nil` sends only to the countries named.
    public var fallback: SenderAddress?
    /// Overrides by ISO 3166 region code (`US`).
    public var byCountry: [String: SenderAddress]

    /// A table of `fallback` and `byCountry`, or every problem with it: an alphanumeric sender named for a
    /// country in ``SenderAddress/alphanumericRefused``, or no sender at all.
    public init(fallback: SenderAddress?, byCountry: [String: SenderAddress] = [:]) throws(MessageTemplateError) {
        var problems: [String] = []
        if fallback == nil && byCountry.isEmpty { problems.append("senders: no default and no country") }
        for (country, sender) in byCountry.sorted(by: { $0.key < $1.key })
        where sender.isAlphanumeric && SenderAddress.alphanumericRefused.contains(country) {
            problems.append(
                "senders: \(country) refuses alphanumeric sender IDs (`\(sender.value)`); "
                    + "name a long number or a short code")
        }
        guard problems.isEmpty else { throw MessageTemplateError(problems: problems) }
        self.fallback = fallback
        self.byCountry = byCountry
    }

    /// The sender for a number of `region`: its override, else the default unless that is alphanumeric and the
    /// country refuses it; `nil` when the provider cannot send there.
    public func sender(for region: String?) -> SenderAddress? {
        if let region, let sender = byCountry[region] { return sender }
        guard let fallback else { return nil }
        if fallback.isAlphanumeric, let region, SenderAddress.alphanumericRefused.contains(region) { return nil }
        return fallback
    }

    /// The countries routing must not send this provider: those of ``SenderAddress/alphanumericRefused`` the
    /// alphanumeric default cannot serve and no override covers. With no default, ``servedRegions`` says where
    /// it may send instead.
    public var excludedRegions: Set<String> {
        guard let fallback, fallback.isAlphanumeric else { return [] }
        return SenderAddress.alphanumericRefused.subtracting(byCountry.keys)
    }

    /// The only countries the provider can send to, when it has no default sender; `nil` when it has one.
    public var servedRegions: Set<String>? {
        fallback == nil ? Set(byCountry.keys) : nil
    }
}
