import Foundation
import GatewayCore

/// The Sinch Verification plugin (REST v1; settings: ``SinchConfiguration/settings``); the sandbox points it at a
/// ``SinchEmulator`` with the ``SinchSandbox`` values.
public enum SinchPlugin {
    public static let plugin = GatewayPlugin(
        id: "sinch",
        displayName: "Sinch Verification",
        settings: SinchConfiguration.settings,
        provider: SinchProvider.self,
        makeEmulator: { context in SinchEmulator(context: context) },
        sandboxSettings: { baseURL in
            [
                "application_key": SinchSandbox.applicationKey,
                "application_secret": SinchSandbox.applicationSecret,
                "base_url": baseURL.absoluteString,
                // So the official SDKs, which start verifications without the gateway, work against the sandbox.
                "foreign_request_events": "allow",
            ]
        })
}
