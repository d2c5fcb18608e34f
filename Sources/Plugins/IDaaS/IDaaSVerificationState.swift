import Foundation

/// What the IDaaS provider keeps with a verification (as ``GatewayCore/ProviderState``), never shown to API
/// clients: the open slider's token while a challenge waits, the `mobile` string sent, and the device
/// headers, so every call of one verification sends the same ones.
struct IDaaSVerificationState: Codable, Sendable, Equatable {
    /// The `token` of the slider the app is solving; `nil` once the SMS is sent.
    var captchaToken: String?
    var mobile: String
    var device: IDaaSDevice
    var sentAt: Date?

    enum CodingKeys: String, CodingKey {
        case captchaToken = "captcha_token"
        case mobile, device
        case sentAt = "sent_at"
    }
}
