import Foundation
import GatewayCore

/// The Twilio Verify v2 plugin: the one value `Sources/gateway` installs.
///
/// Settings: `account_sid` (`AC…` or an API key SID `SK…`), `auth_token` (secret: the auth token or
/// the API key secret), `service_sid` (`VA…`), and an optional `base_url` (default
/// `https://verify.twilio.com`). The sandbox points it at a ``TwilioEmulator`` with the fixed
/// ``TwilioSandbox`` credentials.
public enum TwilioPlugin {
    /// The plugin value, with id `twilio`.
    public static let plugin = GatewayPlugin(
        id: "twilio",
        displayName: "Twilio Verify",
        settings: TwilioConfiguration.settings,
        makeProvider: { (context: ProviderContext) throws(ConfigurationError) -> any VerificationProvider in
            try TwilioProvider(context: context)
        },
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
