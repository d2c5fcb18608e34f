import Foundation
import GatewayCore

/// What the Firebase provider keeps with a verification (as ``GatewayCore/ProviderState``), never shown to
/// API clients.
struct FirebaseVerificationState: Codable, Equatable, Sendable {
    /// The `sessionInfo` of the session; `nil` once the session is used.
    var sessionInfo: String?
    /// When the code was sent: a resend within ``FirebaseConfiguration/resendAfter`` keeps it.
    var sentAt: Date
    /// A configured test number: nothing was sent, and a resend sends nothing either.
    var testNumber = false
    /// The multi-factor step, for a verification that is a second factor's sign-in or enrollment (`nil`: a
    /// phone sign-in).
    var multiFactor: FirebaseMultiFactorState?

    enum CodingKeys: String, CodingKey {
        case sessionInfo = "session_info"
        case sentAt = "sent_at"
        case testNumber = "test_number"
        case multiFactor = "multi_factor"
    }
}

extension FirebaseVerificationState {
    /// Reads this shape, and the string map that records stored before typed state (`"sent_at": "1700…"`,
    /// `"test_number": "true"`), so verifications started before an upgrade can still be checked.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        sessionInfo = try container.decodeIfPresent(String.self, forKey: .sessionInfo)
        let seconds =
            (try? container.decode(Double.self, forKey: .sentAt))
            ?? (try? container.decode(String.self, forKey: .sentAt)).flatMap { Double($0) }
        sentAt = seconds.map { Date(timeIntervalSince1970: $0) } ?? .distantPast
        testNumber =
            (try? container.decode(Bool.self, forKey: .testNumber))
            ?? ((try? container.decode(String.self, forKey: .testNumber)) == "true")
        multiFactor = try container.decodeIfPresent(FirebaseMultiFactorState.self, forKey: .multiFactor)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(sessionInfo, forKey: .sessionInfo)
        try container.encode(sentAt.timeIntervalSince1970, forKey: .sentAt)
        try container.encode(testNumber, forKey: .testNumber)
        try container.encodeIfPresent(multiFactor, forKey: .multiFactor)
    }
}

/// What a multi-factor verification needs for its check and its resends: the first factor's pending
/// credential and the factor's enrollment id (a sign-in), or the user's ID token and the factor's display name
/// (an enrollment). The credential and the token are bearer secrets: kept only until Firebase has finalized
/// the step (``spent``), never shown to API clients.
struct FirebaseMultiFactorState: Codable, Equatable, Sendable {
    var kind: MultiFactor.Kind
    var pendingCredential: String?
    var enrollmentID: String?
    var idToken: String?
    var displayName: String?

    init(_ step: MultiFactor) {
        kind = step.kind
        switch step {
        case .signIn(let credential, let enrollment):
            pendingCredential = credential
            enrollmentID = enrollment
        case .enroll(let token, let name):
            idToken = token
            displayName = name
        }
    }

    /// The step as the start gave it, while its secrets are kept.
    var step: MultiFactor? {
        switch kind {
        case .signIn:
            guard let pendingCredential, let enrollmentID else { return nil }
            return .signIn(pendingCredential: pendingCredential, enrollmentID: enrollmentID)
        case .enroll:
            guard let idToken else { return nil }
            return .enroll(idToken: idToken, displayName: displayName)
        }
    }

    /// The same step without its secrets, once Firebase has finalized it.
    var spent: FirebaseMultiFactorState {
        var copy = self
        copy.pendingCredential = nil
        copy.idToken = nil
        return copy
    }

    enum CodingKeys: String, CodingKey {
        case kind
        case pendingCredential = "pending_credential"
        case enrollmentID = "enrollment_id"
        case idToken = "id_token"
        case displayName = "display_name"
    }
}
