import Foundation
import GatewayCore

/// Telnyx Messaging (settings: ``TelnyxMessagingConfiguration/settings``): a messaging plugin, so its providers send
/// the gateway's own codes (docs/own-codes.md). The sandbox points it at a ``TelnyxMessagingEmulator`` with the
/// ``TelnyxSandbox`` key, messaging profile and public key.
public enum TelnyxMessagingPlugin {
    public static let plugin = GatewayPlugin(
        id: "telnyx_messaging",
        displayName: "Telnyx Messaging",
        settings: TelnyxMessagingConfiguration.settings,
        sender: { (context) throws(ConfigurationError) -> any MessageSender in
            try TelnyxMessagingSender(context: context)
        },
        makeEmulator: { context in TelnyxMessagingEmulator(context: context) },
        sandboxSettings: { baseURL in
            [
                "api_key": TelnyxSandbox.apiKey,
                "messaging_profile_id": TelnyxSandbox.messagingProfileID,
                "public_key": TelnyxSandbox.publicKey,
                // Telnyx's paths live under `/v2`, as on api.telnyx.com.
                "base_url": baseURL.appending(path: "v2").absoluteString,
            ]
        })
}
