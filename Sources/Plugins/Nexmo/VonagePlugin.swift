import Foundation
import GatewayCore

/// The Vonage (formerly Nexmo) Verify plugin (settings: ``VonageConfiguration/settings``); the sandbox points it at
/// a ``VonageEmulator`` with the ``VonageSandbox`` credentials.
public enum VonagePlugin {
    public static let plugin = GatewayPlugin(
        id: "vonage",
        displayName: "Vonage Verify",
        settings: VonageConfiguration.settings,
        provider: VonageProvider.self,
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
