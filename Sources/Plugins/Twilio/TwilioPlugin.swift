import Foundation
import GatewayCore

/// The Twilio Verify v2 plugin (settings: ``TwilioConfiguration/settings``); the sandbox points it at a
/// ``TwilioEmulator`` with the ``TwilioSandbox`` credentials.
public enum TwilioPlugin {
    public static let plugin = GatewayPlugin(
        id: "twilio",
        displayName: "Twilio Verify",
        settings: TwilioConfiguration.settings,
        provider: TwilioProvider.self,
        makeEmulator: { context in TwilioEmulator(context: context) },
        sandboxSettings: { baseURL in
            [
                "account_sid": TwilioSandbox.accountSID,
                "auth_token": TwilioSandbox.authToken,
                "service_sid": TwilioSandbox.serviceSID,
                "base_url": baseURL.absoluteString,
            ]
        })
}
