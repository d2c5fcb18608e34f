/// A vendor's own list of the countries it serves, as its SDK shows them in a country picker (IDaaS's area
/// codes: display names per language, a mobile-number pattern, the preferred entry), for
/// `GET /v1/countries?provider=…`.
public struct ProviderCountryList: Sendable, Equatable {
    /// One country of the list, in the vendor's order.
    public struct Entry: Sendable, Equatable {
        /// ISO 3166-1 alpha-2 region, upper case; `nil` when the vendor names none.
        public var region: String?
        /// The international dialling code (`86`).
        public var callingCode: Int
        /// The vendor's display names by language tag (`en`, `zh-CN`, `zh-TW`).
        public var displayNames: [String: String]
        /// The vendor's regular expression for a mobile number of this country, in the form the vendor
        /// matches (IDaaS: `+86-13800138000`, ``mobilePatternInput``).
        public var mobilePattern: String?
        /// What ``mobilePattern`` is matched against, described for the app (`+<calling code>-<number>`).
        public var mobilePatternInput: String?
        /// Suffixes the vendor lists after the calling code (IDaaS `areaCodeSuffixes`).
        public var callingCodeSuffixes: [String]
        /// Whether this is the vendor's preferred (default) entry.
        public var preferred: Bool

        /// An entry for `callingCode`, with only what the vendor lists.
        public init(
            region: String?, callingCode: Int, displayNames: [String: String] = [:], mobilePattern: String? = nil,
            mobilePatternInput: String? = nil, callingCodeSuffixes: [String] = [], preferred: Bool = false
        ) {
            self.region = region
            self.callingCode = callingCode
            self.displayNames = displayNames
            self.mobilePattern = mobilePattern
            self.mobilePatternInput = mobilePatternInput
            self.callingCodeSuffixes = callingCodeSuffixes
            self.preferred = preferred
        }

        /// The display name for `language` (an IETF tag): the vendor's name under that tag (any case), under
        /// the same script (`zh-Hans` and `zh-SG` → `zh-CN`, `zh-Hant`, `zh-HK` and `zh-MO` → `zh-TW`), or under
        /// the bare language (`en-GB` → `en`); `nil` when the vendor has none of them.
        public func displayName(for language: String) -> String? {
            var byTag: [String: String] = [:]
            for (tag, name) in displayNames { byTag[tag.lowercased()] = name }
            let wanted = language.lowercased().replacingOccurrences(of: "_", with: "-")
            if let name = byTag[wanted] { return name }
            let parts = wanted.split(separator: "-").map(String.init)
            guard let base = parts.first else { return nil }
            if base == "zh" {
                let rest = Set(parts.dropFirst())
                let traditional = !rest.isDisjoint(with: ["hant", "tw", "hk", "mo"])
                if let name = byTag[traditional ? "zh-tw" : "zh-cn"] { return name }
            }
            return byTag[base]
        }
    }

    /// The countries, in the vendor's order.
    public var entries: [Entry]
    /// The region of the preferred entry, if the vendor names one.
    public var preferredRegion: String?

    /// A list of `entries`, naming the preferred region when the vendor does.
    public init(entries: [Entry], preferredRegion: String? = nil) {
        self.entries = entries
        self.preferredRegion = preferredRegion
    }
}
