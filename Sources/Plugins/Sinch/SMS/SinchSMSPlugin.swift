import Foundation
import GatewayCore

/// Sinch SMS (settings: ``SinchSMSConfiguration/settings``): a messaging plugin, so its providers send the gateway's
/// own codes (docs/own-codes.md). The sandbox points it at a ``SinchSMSEmulator`` with the ``SinchSandbox`` plan,
/// token and webhook secret.
public enum SinchSMSPlugin {
    public static let plugin = GatewayPlugin(
        id: "sinch_sms",
        displayName: "Sinch SMS",
        settings: SinchSMSConfiguration.settings,
        sender: { (context) throws(ConfigurationError) -> any MessageSender in try SinchSMSSender(context: context) },
        makeEmulator: { context in SinchSMSEmulator(context: context) },
        sandboxSettings: { baseURL in
            [
                "service_plan_id": SinchSandbox.servicePlanID, "api_token": SinchSandbox.smsAPIToken,
                "webhook_secret": SinchSandbox.smsWebhookSecret, "base_url": baseURL.absoluteString,
            ]
        })
}
