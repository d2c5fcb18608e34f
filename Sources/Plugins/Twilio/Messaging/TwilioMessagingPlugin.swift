import Foundation
import GatewayCore

/// Twilio Programmable Messaging (settings: ``TwilioMessagingConfiguration/settings``): a messaging plugin, so
/// its providers send the gateway's own codes (docs/own-codes.md). The sandbox points it at a
/// ``TwilioMessagingEmulator`` with the ``TwilioSandbox`` credentials.
public enum TwilioMessagingPlugin {
    public static let plugin = GatewayPlugin(
        id: "twilio_messaging",
        displayName: "Twilio Programmable Messaging",
        settings: TwilioMessagingConfiguration.settings,
        sender: { (context) throws(ConfigurationError) -> any MessageSender in
            try TwilioMessagingSender(context: context)
        },
        makeEmulator: { context in TwilioMessagingEmulator(context: context) },
        sandboxSettings: { baseURL in
            [
                "account_sid": TwilioSandbox.accountSID,
                "auth_token": TwilioSandbox.authToken,
                "base_url": baseURL.absoluteString,
            ]
        })
}
