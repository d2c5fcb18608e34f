import Foundation
import GatewayCore

/// The Telnyx Verify (API v2) plugin, id `telnyx`: the one value `Sources/gateway` installs. Settings in
/// ``TelnyxConfiguration/settings``; the sandbox points it at a ``TelnyxEmulator`` with ``TelnyxSandbox``'s values.
public enum TelnyxPlugin {
    /// The plugin value, with id `telnyx`.
    public static let plugin = GatewayPlugin(
        id: "telnyx",
        displayName: "Telnyx Verify",
        settings: TelnyxConfiguration.settings,
        provider: TelnyxProvider.self,
        makeEmulator: { context in TelnyxEmulator(context: context) },
        sandboxSettings: { baseURL in
            [
                "api_key": TelnyxSandbox.apiKey,
                "verify_profile_id": TelnyxSandbox.verifyProfileID,
                "public_key": TelnyxSandbox.publicKey,
                // Telnyx's paths live under `/v2`, as on api.telnyx.com.
                "base_url": baseURL.appending(path: "v2").absoluteString,
            ]
        })
}
