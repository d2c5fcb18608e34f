/// One vendor error and the gateway code it becomes: a row of a plugin's one mapping table.
///
/// A row is keyed by the vendor's structured fields only (its code, the HTTP status, the operation), never by
/// message text, which can name the phone number. Its class and retryability follow from ``mapsTo`` unless
/// ``retryable`` says otherwise, so docs and tests can list what the router will do with each vendor answer.
public struct VendorErrorRow: Sendable, Equatable {
    /// How ``code`` is compared with the vendor's.
    public enum Match: Sendable, Equatable {
        case exact
        /// Any vendor code that starts with ``VendorErrorRow/code`` (a family such as `IDAAS.SDK.LOGIN.`).
        case prefix
    }

    /// Which of the vendor's vocabularies the row belongs to, when it has several (Vonage's `v2` problem types,
    /// `v1` status codes and the retired iOS SDK's `sdk` cases); `""` when it has one.
    public var vocabulary: String
    /// The vendor's code (`60202`, `invalid-code`, `INVALID_CODE`); `nil` for a row that covers an HTTP status.
    public var code: String?
    /// Whether ``code`` must equal the vendor's code or only begin it.
    public var match: Match
    /// The HTTP status the row applies to; `nil`: any (errors inside a 200, SDK codes).
    public var httpStatus: Int?
    /// The ``VendorOperation/name`` the row is limited to; `nil`: any operation.
    public var operation: String?
    /// The vendor's name or title for the error, for docs and messages (never shown as the vendor's text).
    public var name: String
    /// The gateway code the vendor error becomes.
    public var mapsTo: GatewayError.Code
    /// Overrides the code's own retryability where the vendor says otherwise; `nil`: the code's.
    public var retryable: Bool?
    /// Where the vendor documents the error (a section of the vendor notes, a spec's key).
    public var source: String
    /// Why this code, where the choice is ours.
    public var note: String
    /// The same error's codes in the vendor's other vocabularies, for docs (Firebase's iOS `AuthErrorCode` of a
    /// server string: `["ios": "17044"]`).
    public var related: [String: String]

    /// A row mapping the vendor's `code` to `mapsTo`; without a status or an operation it applies to any.
    public init(
        vocabulary: String = "", code: String?, match: Match = .exact, httpStatus: Int? = nil,
        operation: String? = nil, name: String, mapsTo: GatewayError.Code, retryable: Bool? = nil,
        source: String, note: String = "", related: [String: String] = [:]
    ) {
        self.related = related
        self.vocabulary = vocabulary
        self.code = code
        self.match = match
        self.httpStatus = httpStatus
        self.operation = operation
        self.name = name
        self.mapsTo = mapsTo
        self.retryable = retryable
        self.source = source
        self.note = note
    }

    /// What the router may do with the error (``GatewayError/ErrorClass``).
    public var errorClass: GatewayError.ErrorClass { mapsTo.errorClass }
    /// Whether the caller may simply try again later.
    public var isRetryable: Bool { retryable ?? mapsTo.isRetryable }

    func matches(code other: String) -> Bool {
        guard let code else { return false }
        switch match {
        case .exact: return code == other
        case .prefix: return other.hasPrefix(code)
        }
    }
}
