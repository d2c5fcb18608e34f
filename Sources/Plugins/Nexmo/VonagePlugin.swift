import Foundation
import GatewayCore

/// The Vonage (formerly Nexmo) Verify plugin: the one value `Sources/gateway` installs.
///
/// Plugin id `vonage`; the configuration also accepts `plugin: nexmo`. Settings are listed in
/// ``VonageConfiguration/settings``: `api` (`v2` default, or `v1`), `api_key` + `api_secret` and/or
/// `application_id` + `private_key`, `brand`, `code_length`, `base_url`, `signature_secret`,
/// `channel_timeout`, `whatsapp_from`, `workflow_id`. The sandbox points it at a ``VonageEmulator`` with the
/// fixed ``VonageSandbox`` credentials.
public enum VonagePlugin {
    /// The plugin value, with id `vonage`.
    public static let plugin = GatewayPlugin(
        id: "vonage",
        displayName: "Vonage Verify",
        settings: VonageConfiguration.settings,
        makeProvider: { (context: ProviderContext) throws(ConfigurationError) -> any VerificationProvider in
            try VonageProvider(context: context)
        },
        makeEmulator: { context in VonageEmulator(context: context, settings: .sandbox()) },
        sandboxSettings: { baseURL in
            [
                "api_key": VonageSandbox.apiKey,
                "api_secret": VonageSandbox.apiSecret,
                "brand": VonageSandbox.brand,
                "signature_secret": VonageSandbox.signatureSecret,
                "whatsapp_from": VonageSandbox.whatsappFrom,
                "base_url": baseURL.absoluteString,
            ]
        })

    /// Nexmo is Vonage's former name: configurations may say `plugin: nexmo`.
    public static let aliases = ["nexmo"]
}
