import Foundation
import GatewayCore

/// The settings of a Sinch SMS provider (docs/vendors/sinch-sms.md §1, §4.5): a service plan and its API token.
struct SinchSMSConfiguration: Sendable, Equatable {
    var servicePlanID: String
    var apiToken: String
    /// Where the API lives, without a trailing slash: `https://{region}.sms.api.sinch.com`, or `base_url`.
    var baseURL: String
    /// The HMAC secret Sinch signs the callbacks of this service plan with; `nil`: no delivery reports asked for.
    var webhookSecret: String?

    static let regions = ["us", "eu", "au", "br", "ca"]

    static let settings: [SettingSpec] = [
        .text(
            "service_plan_id", "The service plan id (dashboard: SMS → APIs), the path's `{service_plan_id}`.",
            check: { (1...64).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } },
            reason: "must be a service plan id (letters and digits)"),
        .secret("api_token", "The service plan's API token, sent as `Authorization: Bearer`."),
        .choice("region", "The plan's region: `us` (default), `eu`, `au`, `br` or `ca`.", regions),
        .url("base_url", "API base URL; overrides `region` (https://us.sms.api.sinch.com by default)."),
        .secret(
            "webhook_secret",
            "The HMAC secret Sinch signs this plan's callbacks with: checks delivery reports (needed to take them).",
            required: false),
    ]

    init(settings values: [String: String], providerID: String) throws(ConfigurationError) {
        let settings = PluginSettings(values, specs: Self.settings, providerID: providerID)
        try settings.validate()
        servicePlanID = settings["service_plan_id"] ?? ""
        apiToken = settings["api_token"] ?? ""
        let region = settings["region"] ?? "us"
        baseURL = settings.url("base_url", default: "https://\(region).sms.api.sinch.com")
        webhookSecret = settings["webhook_secret"].flatMap { $0.isEmpty ? nil : $0 }
    }
}
