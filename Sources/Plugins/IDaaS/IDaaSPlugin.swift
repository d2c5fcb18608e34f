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
            var base = baseURL.absoluteString
            while base.hasSuffix("/") { base.removeLast() }
            // No read at build time in the sandbox: its emulator's list is the default regions, and a read
            // running on its own could reach the gateway's port while it shuts down (tests start and stop many
            // gateways). The list is read on the first start instead.
            return [
                "base_url": base, "client_id": IDaaSSandbox.clientID, "id_token_issuer": IDaaSSandbox.issuer,
                "area_codes_preload": "false",
            ]
        })
}
