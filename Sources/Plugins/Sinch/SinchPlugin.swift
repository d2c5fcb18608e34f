import Foundation
import GatewayCore

/// The Sinch Verification plugin (REST v1): the one value `Sources/gateway` installs.
///
/// Settings: `application_key`, `application_secret` (secret, base64), and optionally `base_url` (default
/// `https://verification.api.sinch.com`), `auth` (`signed`, the default, or `basic`), `sms_expiry_seconds`,
/// `flash_call_interception_timeout`, `callback_tolerance_seconds` and `foreign_request_events`. Channels: `sms`, `voice` (callout),
/// `flashcall`, `silent_auth` (seamless) and `whatsapp`. Sinch's callbacks arrive at
/// `/callbacks/<provider id>`. The sandbox points it at a ``SinchEmulator`` with the ``SinchSandbox`` values.
public enum SinchPlugin {
    public static let plugin = GatewayPlugin(
        id: "sinch",
        displayName: "Sinch Verification",
        settings: SinchConfiguration.settings,
        makeProvider: { (context: ProviderContext) throws(ConfigurationError) -> any VerificationProvider in
            try SinchProvider(context: context)
        },
        makeEmulator: { context in SinchEmulator(context: context) },
        sandboxSettings: { baseURL in
            var base = baseURL.absoluteString
            while base.hasSuffix("/") { base.removeLast() }
            return [
                "application_key": SinchSandbox.applicationKey,
                "application_secret": SinchSandbox.applicationSecret,
                "base_url": base,
                // So the official SDKs, which start verifications without the gateway, work against the sandbox.
                "foreign_request_events": "allow",
            ]
        })
}
