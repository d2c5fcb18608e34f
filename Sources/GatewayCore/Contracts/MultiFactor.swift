/// The multi-factor step a start belongs to, for vendors whose phone verification is also a user's second
/// factor (Firebase's `mfaSignIn` and `mfaEnrollment`, docs/firebase.md).
///
/// The client obtains the inputs from the vendor (a first-factor sign-in's pending credential and the id of
/// the enrolled factor, or a signed-in user's ID token) and the gateway carries them to the plugin, which keeps
/// what its check needs in the verification's provider state and never shows it to API clients. Routing only
/// considers providers whose ``ProviderCapabilities/multiFactorKinds`` contain the step's ``kind``.
public enum MultiFactor: Sendable, Hashable {
    /// The second factor of a sign-in: the user passed a first factor, and the vendor answered that the
    /// enrolled phone factor `enrollmentID` must be verified (Firebase's `mfaPendingCredential`,
    /// `mfaEnrollmentId`).
    case signIn(pendingCredential: String, enrollmentID: String)
    /// Enrolling the verification's number as a second factor of the signed-in user whose ID token this is,
    /// under an optional display name.
    case enroll(idToken: String, displayName: String?)

    /// The step's kind, as the API names it (`multi_factor.type`).
    public enum Kind: String, Sendable, Codable, CaseIterable, Hashable {
        case signIn = "sign_in"
        case enroll
    }

    /// The step's kind, for routing against ``ProviderCapabilities/multiFactorKinds``.
    public var kind: Kind {
        switch self {
        case .signIn: return .signIn
        case .enroll: return .enroll
        }
    }
}
