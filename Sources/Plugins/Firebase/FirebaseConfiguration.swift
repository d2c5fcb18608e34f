import Foundation
import GatewayCore

/// The validated settings of one Firebase provider.
struct FirebaseConfiguration: Sendable, Equatable {
    /// The project's Web API key, sent as `?key=` (docs/vendors/firebase.md §1).
    var apiKey: String
    var projectID: String
    /// Where Identity Toolkit lives, without a trailing slash (`https://identitytoolkit.googleapis.com`).
    var baseURL: String
    var testNumbers: FirebaseTestNumbers
    /// How long after a send a resend is answered with "the code already sent is still on its way" instead
    /// of asking for a new proof (docs/vendors/firebase.md §5: FirebaseUI waits 60 s before offering "resend").
    var resendAfter: TimeInterval
    /// The iOS app's bundle id, sent as `X-Ios-Bundle-Identifier` with an `ios_receipt` proof, which
    /// Identity Toolkit requires alongside `iosReceipt` (docs/vendors/firebase.md §1, §2.1).
    var iosBundleID: String?

    static let defaultBaseURL = "https://identitytoolkit.googleapis.com"

    static let settings: [SettingSpec] = [
        SettingSpec(
            name: "api_key", summary: "The Firebase project's Web API key (sent as ?key=).", isSecret: true,
            validate: {
                ASCIIText.isPrintable($0, max: 200, spaces: false)
                    ? nil : "must be printable ASCII without spaces, at most 200 characters"
            }),
        .text(
            "project_id", "The Firebase project id (the `aud` of its ID tokens).", check: isProjectID,
            reason: "must be a Google Cloud project id (6-30 lowercase letters, digits or -, from a letter)"),
        .url(
            "base_url",
            "Identity Toolkit base URL; defaults to https://identitytoolkit.googleapis.com "
                + "(Auth Emulator: http://HOST:9099/identitytoolkit.googleapis.com)."),
        SettingSpec(
            name: "test_numbers",
            summary:
                "The project's fictional test numbers, `+15555550100=123456,…` (at most 10, 6-digit codes); "
                + "answered without calling Firebase.",
            isRequired: false,
            validate: { FirebaseTestNumbers.problem(in: $0) }),
        .integer(
            "resend_after_seconds",
            "Seconds after a send during which a resend sends nothing and keeps the code "
                + "(default 60, FirebaseUI's wait).",
            in: 0...3600, reason: "must be a whole number of seconds from 0 to 3600"),
        .text(
            "ios_bundle_id", "The iOS app's bundle id, sent with `ios_receipt` proofs as X-Ios-Bundle-Identifier.",
            required: false, check: { ASCIIText.isToken($0, length: 1...155, extra: ".-") },
            reason: "must be a bundle identifier (letters, digits, . and -)"),
    ]

    /// Reads and checks `settings`, reporting every problem at once.
    init(settings values: [String: String], providerID: String) throws(ConfigurationError) {
        let settings = PluginSettings(values, specs: Self.settings, providerID: providerID)
        try settings.validate()
        apiKey = settings["api_key"] ?? ""
        projectID = settings["project_id"] ?? ""
        baseURL = settings.url("base_url", default: Self.defaultBaseURL)
        testNumbers = (try? FirebaseTestNumbers(parsing: settings["test_numbers"] ?? "")) ?? .none
        resendAfter = settings.int("resend_after_seconds").map(TimeInterval.init) ?? 60
        iosBundleID = settings["ios_bundle_id"]
    }

    /// Google Cloud's project id rule: 6 to 30 lowercase letters, digits and hyphens, starting with a
    /// letter and not ending with a hyphen.
    static func isProjectID(_ value: String) -> Bool {
        ASCIIText.isToken(value, length: 6...30, extra: "-") && value == value.lowercased()
            && value.first?.isLetter == true && !value.hasSuffix("-")
    }
}
