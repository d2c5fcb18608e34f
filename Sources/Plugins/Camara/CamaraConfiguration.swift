import Crypto
import Foundation
import GatewayCore

/// The validated settings of one CAMARA provider (docs/network-signals.md, "Settings"): one operator or
/// aggregator, its OpenID Connect endpoints and the API root both APIs live under.
struct CamaraConfiguration: Sendable {
    /// The client id the operator registered the gateway under.
    var clientID: String
    /// The P-256 key the gateway signs its client assertions with (`private_key_jwt`), raw bytes.
    var privateKey: Data
    /// The `kid` the operator knows the key's public half by, if it asks for one.
    var keyID: String?
    /// `{apiRoot}`, without a trailing slash: the APIs are `{apiRoot}/sim-swap/v2` and
    /// `{apiRoot}/number-verification/v2`.
    var apiRoot: String
    /// The token endpoint (client credentials and authorization codes).
    var tokenURL: String
    /// The authorization endpoint the device opens for Number Verification; `nil`: no silent verification.
    var authorizeURL: String?
    /// The purpose scope (`dpv:` and a W3C DPV purpose) every token is asked for.
    var purpose: String
    /// The SIM Swap scope: `sim-swap:check` (default) or the umbrella `sim-swap`.
    var simSwapScope: String
    /// How long a silent step stays open at the operator, in seconds.
    var silentValidity: Int

    static let settings: [SettingSpec] = [
        .text("client_id", "The client id the operator or aggregator registered the gateway under."),
        .secret(
            "private_key",
            "The P-256 private key that signs the gateway's client assertions: PEM, or its DER in base64 on one line."),
        .text("key_id", "The key's `kid`, when the operator asks for one.", required: false),
        .url(
            "api_root", "The API root: the APIs are `{api_root}/sim-swap/v2` and `{api_root}/number-verification/v2`."),
        .url("token_url", "The operator's OpenID Connect token endpoint."),
        .url(
            "authorize_url",
            "The operator's authorization endpoint, which the device opens over mobile data (Number Verification)."),
        .text(
            "purpose", "The purpose scope, `dpv:` and a W3C DPV purpose; defaults to dpv:FraudPreventionAndDetection.",
            required: false, check: { $0.hasPrefix("dpv:") && $0.count > 4 && !$0.contains(" ") },
            reason: "must be `dpv:` and a purpose, such as dpv:FraudPreventionAndDetection"),
        .choice(
            "sim_swap_scope", "`sim-swap:check` (default) or the umbrella `sim-swap`, as the operator grants it.",
            ["sim-swap:check", "sim-swap"]),
        .integer(
            "silent_validity_seconds", "Seconds a silent verification stays open (30–600, default 120).", in: 30...600),
    ]

    init(settings values: [String: String], providerID: String) throws(ConfigurationError) {
        var settings = PluginSettings(values, specs: Self.settings, providerID: providerID)
        clientID = settings["client_id"] ?? ""
        keyID = settings["key_id"]
        apiRoot = Self.trimmed(settings["api_root"] ?? "")
        tokenURL = settings["token_url"] ?? ""
        authorizeURL = settings["authorize_url"]
        purpose = settings["purpose"] ?? "dpv:FraudPreventionAndDetection"
        simSwapScope = settings["sim_swap_scope"] ?? "sim-swap:check"
        silentValidity = settings.int("silent_validity_seconds") ?? 120
        for name in ["api_root", "token_url"] {
            settings.require(settings[name] != nil, "`\(name)` is required")
        }
        let key = settings["private_key"].flatMap(Self.privateKey(from:))
        privateKey = key?.rawRepresentation ?? Data()
        settings.require(
            settings["private_key"] == nil || key != nil,
            "`private_key` must be a P-256 private key: PEM, or its DER in base64")
        try settings.validate()
    }

    /// A P-256 private key from PEM (PKCS #8 or SEC 1) or from base64 DER; `nil` when it is neither.
    static func privateKey(from text: String) -> P256.Signing.PrivateKey? {
        if let key = try? P256.Signing.PrivateKey(pemRepresentation: text) { return key }
        guard let der = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)) else { return nil }
        return try? P256.Signing.PrivateKey(derRepresentation: der)
    }

    private static func trimmed(_ url: String) -> String {
        url.hasSuffix("/") ? String(url.dropLast()) : url
    }
}
