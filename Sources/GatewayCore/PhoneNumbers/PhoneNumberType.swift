/// What kind of line a number is, by libphonenumber's metadata for its region.
///
/// The raw values are the snake_case names the API shows. Numbers that match no pattern of their region
/// (invalid numbers) are ``unknown``.
public enum PhoneNumberType: String, Sendable, Hashable, Codable, CaseIterable {
    case fixedLine = "fixed_line"
    case mobile
    /// The region's fixed-line and mobile numbers cannot be told apart (the NANP countries, for example).
    case fixedLineOrMobile = "fixed_line_or_mobile"
    case tollFree = "toll_free"
    case premiumRate = "premium_rate"
    /// The caller and the recipient share the cost.
    case sharedCost = "shared_cost"
    case voip
    /// A number that follows a person and may ring a mobile or a fixed line.
    case personalNumber = "personal_number"
    case pager
    /// Universal access number: one number for a company, routed to its offices.
    case uan
    case voicemail
    case unknown

    /// Whether an SMS to a number of this type can be expected to arrive: mobiles, and lines that may be
    /// mobiles. Fixed lines, toll-free, premium and the rest usually cannot receive one.
    public var canReceiveSMS: Bool {
        switch self {
        case .mobile, .fixedLineOrMobile: return true
        default: return false
        }
    }

    /// Whether the gateway refuses to send an SMS to a valid number of this type: lines that are known
    /// not to take text messages (fixed lines, toll-free, premium, shared-cost, UAN and voicemail numbers).
    /// VoIP, personal and pager numbers often can, and invalid numbers (``unknown``) are left to the vendor,
    /// whose numbering data may be newer than the metadata.
    public var refusesSMS: Bool {
        switch self {
        case .fixedLine, .tollFree, .premiumRate, .sharedCost, .uan, .voicemail: return true
        default: return false
        }
    }

    /// libphonenumber's name of the type (`FIXED_LINE_OR_MOBILE`).
    public var libphonenumberName: String { rawValue.uppercased() }
}
