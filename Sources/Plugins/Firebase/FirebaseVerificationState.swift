import Foundation

/// What the Firebase provider keeps with a verification (as ``GatewayCore/ProviderState``), never shown to
/// API clients.
struct FirebaseVerificationState: Codable, Equatable, Sendable {
    /// The `sessionInfo` of the session; `nil` once the session is used.
    var sessionInfo: String?
    /// When the code was sent: a resend within ``FirebaseConfiguration/resendAfter`` keeps it.
    var sentAt: Date
    /// A configured test number: nothing was sent, and a resend sends nothing either.
    var testNumber: Bool

    init(sessionInfo: String?, sentAt: Date, testNumber: Bool = false) {
        self.sessionInfo = sessionInfo
        self.sentAt = sentAt
        self.testNumber = testNumber
    }

    enum CodingKeys: String, CodingKey {
        case sessionInfo = "session_info"
        case sentAt = "sent_at"
        case testNumber = "test_number"
    }

    /// Reads this shape, and the string map that records stored before typed state (`"sent_at": "1700…"`,
    /// `"test_number": "true"`), so verifications started before an upgrade can still be checked.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        sessionInfo = try container.decodeIfPresent(String.self, forKey: .sessionInfo)
        if let seconds = try? container.decode(Double.self, forKey: .sentAt) {
            sentAt = Date(timeIntervalSince1970: seconds)
        } else if let text = try? container.decode(String.self, forKey: .sentAt), let seconds = Double(text) {
            sentAt = Date(timeIntervalSince1970: seconds)
        } else {
            sentAt = .distantPast
        }
        if let flag = try? container.decode(Bool.self, forKey: .testNumber) {
            testNumber = flag
        } else {
            testNumber = (try? container.decode(String.self, forKey: .testNumber)) == "true"
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(sessionInfo, forKey: .sessionInfo)
        try container.encode(sentAt.timeIntervalSince1970, forKey: .sentAt)
        try container.encode(testNumber, forKey: .testNumber)
    }
}
