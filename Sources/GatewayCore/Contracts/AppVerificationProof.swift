/// Proof, obtained by the end user's app, that a start request comes from a real app and a real person.
///
/// Firebase refuses to send an SMS without one; IDaaS needs its slider captcha solved first. The
/// gateway carries the proof to the plugin that needs it and never stores it.
public struct AppVerificationProof: Sendable, Hashable {
    /// The kinds of proof a vendor can ask for; the raw value is the API's `app_verification.type`.
    public enum Kind: String, Sendable, Codable, CaseIterable, Hashable {
        /// A reCAPTCHA (v2 / classic) token.
        case recaptcha
        /// A reCAPTCHA Enterprise token.
        case recaptchaEnterprise = "recaptcha_enterprise"
        /// An APNs-delivered receipt and secret (Firebase iOS silent push flow).
        case iosReceipt = "ios_receipt"
        /// An Android Play Integrity token. (It replaced SafetyNet, which Google shut down: the API refuses
        /// `safety_net` and names this kind instead, ``retiredKinds``.)
        case playIntegrity = "play_integrity"
        /// A solved captcha token, for vendors whose captcha step precedes the SMS (IDaaS).
        case captcha
    }

    /// Proof kinds the gateway no longer takes, each with the kind that replaced it: Google shut SafetyNet
    /// Attestation down ("no longer available", Firebase's documentation), and Firebase's Android SDK proves
    /// the app with Play Integrity instead.
    public static let retiredKinds: [String: Kind] = ["safety_net": .playIntegrity]

    /// Which kind of proof ``token`` (and ``secret``) are.
    public var kind: Kind
    /// The token, or the receipt for `ios_receipt`.
    public var token: String
    /// The secret that comes with an `ios_receipt`.
    public var secret: String?

    /// A proof of `kind`; `secret` only for an `ios_receipt`.
    public init(kind: Kind, token: String, secret: String? = nil) {
        self.kind = kind
        self.token = token
        self.secret = secret
    }
}
