/// A phone number as libphonenumber parses it: a calling code, a national significant number and an
/// optional extension, with validation, type, region and formatting by libphonenumber's metadata.
///
/// ``PhoneNumberParser/parse(_:defaultRegion:)`` makes one; ``PhoneNumber`` wraps one with the gateway's
/// input rules.
public struct ParsedPhoneNumber: Sendable, Hashable {
    /// The country calling code (`44`), or a non-geographic one (`800`).
    public let countryCode: Int
    /// The national significant number: ASCII digits without the national prefix, keeping the leading
    /// zeros that belong to the number (Italy's `06...`).
    public let nationalNumber: String
    /// The extension's digits, as typed; it is never part of what a vendor receives.
    public let `extension`: String?

    /// Makes a number from its parts; the national number must be ASCII digits.
    public init(countryCode: Int, nationalNumber: String, extension: String? = nil) {
        self.countryCode = countryCode
        self.nationalNumber = nationalNumber
        self.extension = `extension`
    }

    var nationalScalars: [UInt32] { nationalNumber.utf8.map { UInt32($0) } }

    /// E.164: `+`, the calling code and the national number (`+442079460958`).
    public var e164: String { "+\(countryCode)\(nationalNumber)" }

    /// The region the number belongs to (`"GB"`, `"JE"`), `"001"` for non-geographic calling codes, nil
    /// when no region of its calling code claims it (some invalid numbers of shared codes such as +1).
    public var region: String? { PhoneNumberValidation.region(countryCode: countryCode, national: nationalScalars) }

    /// The number's type; ``PhoneNumberType/unknown`` when it is not valid.
    public var type: PhoneNumberType { analysis.type }

    /// Whether the number matches a pattern of its region: libphonenumber's `is_valid_number`.
    public var isValid: Bool { analysis.type != .unknown }

    /// Whether the number has a length its calling code allows, a looser test than ``isValid``
    /// (libphonenumber's `is_possible_number`).
    public var isPossible: Bool {
        PhoneNumberValidation.isPossible(countryCode: countryCode, national: nationalScalars)
    }

    /// Region and type together, matching the patterns once.
    public var analysis: (region: String?, type: PhoneNumberType) {
        PhoneNumberValidation.analyse(countryCode: countryCode, national: nationalScalars)
    }
}

/// libphonenumber's validation: region of a number, its type, whether it is possible.
enum PhoneNumberValidation {
    /// `region_code_for_number` and `number_type` in one pass.
    static func analyse(countryCode: Int, national: [UInt32]) -> (region: String?, type: PhoneNumberType) {
        let store = PhoneMetadataStore.shared
        guard let regions = store.regionsByCallingCode[countryCode] else { return (nil, .unknown) }
        if regions.count == 1 {
            let region = regions[0]
            guard let metadata = store.metadata(forCallingCode: countryCode, region: region) else {
                return (region, .unknown)
            }
            return (region, type(of: national, metadata: metadata))
        }
        for region in regions {
            guard let metadata = store.regions[region] else { continue }
            if let leading = metadata.leadingDigits {
                if leading.matchesPrefix(national) { return (region, type(of: national, metadata: metadata)) }
            } else {
                let found = type(of: national, metadata: metadata)
                if found != .unknown { return (region, found) }
            }
        }
        return (nil, .unknown)
    }

    static func region(countryCode: Int, national: [UInt32]) -> String? {
        analyse(countryCode: countryCode, national: national).region
    }

    /// `_number_type_helper`.
    /// The special types, in the order libphonenumber tries them before fixed line and mobile.
    private static let specialTypes: [(PhoneNumberDescription.Slot, PhoneNumberType)] = [
        (.premiumRate, .premiumRate), (.tollFree, .tollFree), (.sharedCost, .sharedCost), (.voip, .voip),
        (.personalNumber, .personalNumber), (.pager, .pager), (.uan, .uan), (.voicemail, .voicemail),
    ]

    static func type(of national: [UInt32], metadata: PhoneRegionMetadata) -> PhoneNumberType {
        guard let general = metadata.generalDescription, general.matches(national) else { return .unknown }
        for (slot, type) in specialTypes where metadata.description(slot)?.matches(national) == true {
            return type
        }
        if metadata.description(.fixedLine)?.matches(national) == true {
            if metadata.sameMobileAndFixedLinePattern || metadata.description(.mobile)?.matches(national) == true {
                return .fixedLineOrMobile
            }
            return .fixedLine
        }
        if !metadata.sameMobileAndFixedLinePattern && metadata.description(.mobile)?.matches(national) == true {
            return .mobile
        }
        return .unknown
    }

    /// `is_possible_number`: possible, or possible as a local number, by the main region's lengths.
    static func isPossible(countryCode: Int, national: [UInt32]) -> Bool {
        guard let metadata = PhoneMetadataStore.shared.mainMetadata(forCallingCode: countryCode) else { return false }
        switch PhoneNumberParser.testNumberLength(national, metadata: metadata) {
        case .isPossible, .isPossibleLocalOnly: return true
        case .tooShort, .tooLong, .invalidLength: return false
        }
    }

    /// `is_possible_number_with_reason` folded to the gateway's question: is it too short?
    static func isTooShort(countryCode: Int, national: [UInt32]) -> Bool {
        guard let metadata = PhoneMetadataStore.shared.mainMetadata(forCallingCode: countryCode) else { return false }
        return PhoneNumberParser.testNumberLength(national, metadata: metadata) == .tooShort
    }
}
