import Foundation
import GatewayCore

/// The validated settings of one Telnyx provider (docs/telnyx.md, "Settings").
struct TelnyxConfiguration: Sendable {
    /// How a code is checked: by verification id, or by number and profile.
    enum VerifyBy: String, Sendable {
        case id
        case phoneNumber = "phone_number"
    }

    var apiKey: String
    /// The Verify profile of every channel without a profile of its own.
    var verifyProfileID: String
    /// Profiles by Telnyx channel (`sms`, `call`, `flashcall`, `whatsapp`), where one is set.
    var channelProfiles: [String: String]
    /// Where the API lives, without a trailing slash (`https://api.telnyx.com/v2`).
    var baseURL: String
    /// The account's Ed25519 public key (32 raw bytes): checks webhooks.
    var publicKey: Data?
    /// Seconds a code stays valid; `nil`: the profile's (Telnyx's default 300).
    var timeoutSecs: Int?
    var verifyBy: VerifyBy

    static let channels = ["sms", "call", "flashcall", "whatsapp"]

    static func profile(_ name: String, _ summary: String, required: Bool) -> SettingSpec {
        .text(name, summary, required: required, check: isUUID, reason: "must be a Verify profile id (a uuid)")
    }

    static let settings: [SettingSpec] =
        [
            .secret("api_key", "API key (V2), sent as `Authorization: Bearer`."),
            profile(
                "verify_profile_id", "The Verify profile (uuid) of every channel without one of its own.",
                required: true),
        ]
        + channels.map {
            profile("\($0)_profile_id", "The Verify profile (uuid) of \($0) verifications.", required: false)
        }
        + [
            .url("base_url", "API base URL including `/v2`; defaults to https://api.telnyx.com/v2."),
            .text(
                "public_key", "The account's Ed25519 public key (base64): checks webhooks (needed to take them).",
                required: false, check: { publicKey(from: $0) != nil }, reason: "must be the base64 of a 32-byte key"),
            .integer("timeout_secs", "Seconds a code stays valid (Telnyx's `timeout_secs`, 30–3600).", in: 30...3600),
            .choice(
                "verify_by", "`id` (default) or `phone_number` (with the profile): how codes are checked.",
                ["id", "phone_number"]),
        ]

    init(settings values: [String: String], providerID: String) throws(ConfigurationError) {
        let settings = PluginSettings(values, specs: Self.settings, providerID: providerID)
        apiKey = settings["api_key"] ?? ""
        verifyProfileID = settings["verify_profile_id"] ?? ""
        channelProfiles = Self.channels.reduce(into: [:]) { $0[$1] = settings["\($1)_profile_id"] }
        baseURL = settings.url("base_url", default: "https://api.telnyx.com/v2")
        publicKey = settings["public_key"].flatMap(Self.publicKey(from:))
        timeoutSecs = settings.int("timeout_secs")
        verifyBy = settings.choice("verify_by", default: .id)
        try settings.validate()
    }

    /// The profile a verification on Telnyx channel `channel` names.
    func profile(for channel: String) -> String { channelProfiles[channel] ?? verifyProfileID }

    @Sendable static func isUUID(_ value: String) -> Bool { value.count == 36 && UUID(uuidString: value) != nil }

    /// The 32 raw bytes of a base64 Ed25519 public key; `nil` when it is not one.
    @Sendable static func publicKey(from value: String) -> Data? {
        Data(base64Encoded: value.trimmingCharacters(in: .whitespaces)).flatMap { $0.count == 32 ? $0 : nil }
    }
}
