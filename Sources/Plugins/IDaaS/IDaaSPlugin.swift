import Foundation
import GatewayCore

/// The BambooCloud IDaaS SMS-login plugin: the one value `Sources/gateway` installs.
///
/// Settings: `base_url` (the tenant's domain) and `client_id` (sent as `X-client-id`), and optionally every
/// path (`*_path`), header name (`*_header`), `sms_type`, `mobile_format`, `default_os`, `default_agent`,
/// `language`, `area_codes_cache_seconds`, `area_codes_preload`, `jwks_cache_seconds`, `id_token_issuer` and
/// `challenge_seconds` (docs/idaas.md). A start answers a slider captcha to solve; the sandbox points the
/// provider at an ``IDaaSEmulator``.
public enum IDaaSPlugin {
    public static let plugin = GatewayPlugin(
        id: "idaas",
        displayName: "BambooCloud IDaaS (SMS login)",
        settings: IDaaSConfiguration.settings,
        makeProvider: { (context: ProviderContext) throws(ConfigurationError) -> any VerificationProvider in
            try IDaaSProvider(context: context)
        },
        makeEmulator: { context in IDaaSEmulator(context: context) },
        sandboxSettings: { baseURL in
            // The area codes are read at startup (``IDaaSProvider/warmUp()``), awaited before the gateway
            // serves, so no read outlives a gateway that tests start and stop.
            return [
                "base_url": baseURL.absoluteString, "client_id": IDaaSSandbox.clientID,
                "id_token_issuer": IDaaSSandbox.issuer,
            ]
        })
}
