/// Proof, obtained by the end user's app, that a start request comes from a real app and a real person.
///
/// Firebase refuses to send an SMS without one; IDaaS needs its slider captcha solved first. The
/// gateway carries the proof to the plugin that needs it and never stores it.
public struct AppVerificationProof: Sendable, Hashable {
    public enum Kind: String, Sendable, Codable, CaseIterable, Hashable {
        /// A reCAPTCHA (v2 / classic) token.
        case recaptcha
        /// A reCAPTCHA Enterprise token.
        case recaptchaEnterprise = "recaptcha_enterprise"
        /// An APNs-delivered receipt and secret (Firebase iOS silent push flow).
        case iosReceipt = "ios_receipt"
        /// An Android Play Integrity token.
        case playIntegrity = "play_integrity"
        /// An Android SafetyNet token (deprecated by Google, still accepted).
        case safetyNet = "safety_net"
        /// A solved captcha token, for vendors whose captcha step precedes the SMS (IDaaS).
        case captcha
    }

    public var kind: Kind
    /// The token, or the receipt for `ios_receipt`.
    public var token: String
    /// The secret that comes with an `ios_receipt`.
    public var secret: String?

    public init(kind: Kind, token: String, secret: String? = nil) {
        self.kind = kind
        self.token = token
        self.secret = secret
    }
}
