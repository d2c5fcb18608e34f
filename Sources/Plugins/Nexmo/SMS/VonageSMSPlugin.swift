import Foundation
import GatewayCore

/// The Vonage SMS API (settings: ``VonageSMSConfiguration/settings``): a messaging plugin, so its providers send
/// the gateway's own codes (docs/own-codes.md). The sandbox points it at a ``VonageSMSEmulator`` with the
/// ``VonageSandbox`` key and secret.
public enum VonageSMSPlugin {
    public static let plugin = GatewayPlugin(
        id: "vonage_sms",
        displayName: "Vonage SMS API",
        settings: VonageSMSConfiguration.settings,
        sender: { (context) throws(ConfigurationError) -> any MessageSender in try VonageSMSSender(context: context) },
        makeEmulator: { context in VonageSMSEmulator(context: context) },
        sandboxSettings: { baseURL in
            [
                "api_key": VonageSandbox.apiKey, "api_secret": VonageSandbox.apiSecret,
                "base_url": baseURL.absoluteString, "signature_secret": VonageSandbox.signatureSecret,
            ]
        })
}
