import Foundation
import GatewayCore

/// The BambooCloud IDaaS SMS-login plugin: the one value `Sources/gateway` installs. Its settings are
/// ``IDaaSConfiguration/settings`` (docs/idaas.md); the sandbox points the provider at an ``IDaaSEmulator``.
public enum IDaaSPlugin {
    public static let plugin = GatewayPlugin(
        id: "idaas",
        displayName: "BambooCloud IDaaS (SMS login)",
        settings: IDaaSConfiguration.settings,
        provider: IDaaSProvider.self,
        makeEmulator: { context in IDaaSEmulator(context: context) },
        sandboxSettings: { baseURL in
            // The area codes are read at startup (``IDaaSProvider/warmUp()``), awaited before the gateway
            // serves, so no read outlives a gateway that tests start and stop.
            [
                "base_url": baseURL.absoluteString, "client_id": IDaaSSandbox.clientID,
                "id_token_issuer": IDaaSSandbox.issuer,
            ]
        })
}
