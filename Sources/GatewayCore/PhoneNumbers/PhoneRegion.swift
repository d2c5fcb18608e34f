/// A region of libphonenumber's metadata: its calling code, its prefixes, and its name in the gateway's
/// languages. What `GET /v1/countries` lists.
public struct PhoneRegion: Sendable, Hashable, Identifiable {
    /// ISO 3166-1 alpha-2 code (`"GB"`), or libphonenumber's own `"AC"`, `"TA"`, `"XK"`.
    public let code: String
    /// The country calling code (`44`).
    public let callingCode: Int
    /// Whether this is the region libphonenumber formats the calling code's numbers by (GB for +44, US
    /// for +1), as opposed to a region that shares it (JE, CA).
    public let isMainRegionForCallingCode: Bool
    /// The international prefix dialled from this region, where it is a single one (`"00"`, `"011"`).
    public let internationalPrefix: String?
    /// The national (trunk) prefix dialled before national numbers (`"0"`, `"1"`), if any.
    public let nationalPrefix: String?

    /// The region's code, ``code``.
    public var id: String { code }

    /// Every region libphonenumber has metadata for, by code.
    public static var all: [PhoneRegion] {
        let store = PhoneMetadataStore.shared
        return store.regions.keys.sorted().compactMap { named($0, store: store) }
    }

    /// The region with this code (case-insensitive), or nil when libphonenumber has none.
    public static func named(_ code: String) -> PhoneRegion? {
        named(code.uppercased(), store: PhoneMetadataStore.shared)
    }

    private static func named(_ code: String, store: PhoneMetadataStore) -> PhoneRegion? {
        guard let metadata = store.regions[code] else { return nil }
        let prefix =
            metadata.preferredInternationalPrefix
            ?? metadata.internationalPrefix.flatMap {
                $0.source.allSatisfy(\.isNumber) ? $0.source : nil
            }
        return PhoneRegion(
            code: code,
            callingCode: metadata.countryCode,
            isMainRegionForCallingCode: store.regionsByCallingCode[metadata.countryCode]?.first == code,
            internationalPrefix: prefix,
            nationalPrefix: metadata.nationalPrefix
        )
    }

    /// The locales region names exist in (BCP 47: `en`, `zh-Hans`, `zh-Hant`, `es`, `fr`, `de`, `ja`,
    /// `pt`, `ar`).
    public static var nameLocales: [String] { PhoneRegionNames.shared.locales }

    /// The region's name in `locale` (a BCP 47 tag such as `"es-MX"`, `"zh-TW"`, `"zh-Hans-CN"`), falling
    /// back to English when the language is not one of ``nameLocales``.
    public func name(locale: String = "en") -> String {
        PhoneRegionNames.shared.name(of: code, locale: locale) ?? code
    }

    /// The regular expression (libphonenumber's syntax, anchored at both ends) that national significant
    /// numbers of a type match in this region, if the region has numbers of that type.
    public func nationalNumberPattern(type: PhoneNumberType = .mobile) -> String? {
        guard let metadata = PhoneMetadataStore.shared.regions[code], let slot = type.metadataSlot else { return nil }
        return metadata.description(slot)?.pattern?.source
    }

    /// libphonenumber's example number of a type in this region, if the region has numbers of that type.
    public func exampleNumber(type: PhoneNumberType = .mobile) -> ParsedPhoneNumber? {
        guard let metadata = PhoneMetadataStore.shared.regions[code], let slot = type.metadataSlot,
            let example = metadata.description(slot)?.example
        else { return nil }
        return ParsedPhoneNumber(countryCode: callingCode, nationalNumber: example)
    }
}

extension PhoneNumberType {
    /// Where the type's description sits in the metadata (fixed-line for ``fixedLineOrMobile``).
    var metadataSlot: PhoneNumberDescription.Slot? {
        switch self {
        case .fixedLine, .fixedLineOrMobile: return .fixedLine
        case .mobile: return .mobile
        case .tollFree: return .tollFree
        case .premiumRate: return .premiumRate
        case .sharedCost: return .sharedCost
        case .voip: return .voip
        case .personalNumber: return .personalNumber
        case .pager: return .pager
        case .uan: return .uan
        case .voicemail: return .voicemail
        case .unknown: return nil
        }
    }
}

/// Region names from CLDR, decoded from ``GeneratedPhoneMetadata/regionNames`` on first use.
struct PhoneRegionNames: Sendable {
    static let shared = PhoneRegionNames(text: GeneratedPhoneMetadata.regionNames)

    let locales: [String]
    /// Region code to its names, in the order of ``locales``.
    let names: [String: [String]]

    init(text: String) {
        var lines = text.split(separator: "\n").makeIterator()
        let header = lines.next().map { $0.split(separator: "\t").dropFirst().map(String.init) } ?? []
        var names: [String: [String]] = [:]
        while let line = lines.next() {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == header.count + 1 else { continue }
            names[fields[0]] = Array(fields.dropFirst())
        }
        self.locales = header
        self.names = names
    }

    func name(of region: String, locale: String) -> String? {
        guard let row = names[region] else { return nil }
        let index = localeIndex(locale) ?? 0
        return row.indices.contains(index) ? row[index] : nil
    }

    /// Matches a BCP 47 tag to one of ``locales``: Chinese by script, then by region (TW, HK, MO are
    /// Traditional), everything else by language.
    func localeIndex(_ tag: String) -> Int? {
        let parts = tag.split(whereSeparator: { $0 == "-" || $0 == "_" }).map { $0.lowercased() }
        guard let language = parts.first else { return nil }
        if language == "zh" {
            let traditional =
                parts.contains("hant")
                || (!parts.contains("hans") && parts.contains { ["tw", "hk", "mo"].contains($0) })
            return locales.firstIndex(of: traditional ? "zh-Hant" : "zh-Hans")
        }
        return locales.firstIndex { $0.lowercased() == language }
    }
}
