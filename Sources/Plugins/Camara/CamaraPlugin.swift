import Foundation
import GatewayCore

/// CAMARA (GSMA Open Gateway) network APIs of one operator or aggregator: SIM Swap as the engine's risk signal,
/// Number Verification as a `silent_auth` provider (docs/network-signals.md).
public enum CamaraPlugin {
    public static let plugin = GatewayPlugin(
        id: "camara", displayName: "CAMARA (SIM Swap, Number Verification)", settings: CamaraConfiguration.settings,
        provider: CamaraProvider.self, makeEmulator: { context in CamaraEmulator(context: context) },
        sandboxSettings: { baseURL in
            [
                "client_id": CamaraSandbox.clientID, "private_key": CamaraSandbox.privateKeyDER,
                "api_root": baseURL.absoluteString, "token_url": baseURL.appending(path: "token").absoluteString,
                "authorize_url": baseURL.appending(path: "authorize").absoluteString,
            ]
        })
}
