import Foundation
import GatewayCore

/// The Firebase phone sign-in plugin (Identity Toolkit v1): the one value `Sources/gateway` installs.
///
/// Settings: `api_key` (secret: the project's Web API key), `project_id`, and optionally `base_url`
/// (default `https://identitytoolkit.googleapis.com`; for the Auth Emulator
/// `http://HOST:9099/identitytoolkit.googleapis.com`), `test_numbers` (the project's fictional numbers,
/// `+15555550100=123456,…`, at most 10), `resend_after_seconds` (default 60) and `ios_bundle_id`. A start
/// needs an app-verification proof from the client (reCAPTCHA, reCAPTCHA Enterprise, iOS receipt, Play
/// Integrity, SafetyNet) except for a test number. The sandbox points it at a ``FirebaseEmulator`` with the
/// ``FirebaseSandbox`` values.
public enum FirebasePlugin {
    public static let plugin = GatewayPlugin(
        id: "firebase",
        displayName: "Firebase Authentication (phone)",
        settings: FirebaseConfiguration.settings,
        makeProvider: { (context: ProviderContext) throws(ConfigurationError) -> any VerificationProvider in
            try FirebaseProvider(context: context)
        },
        makeEmulator: { context in FirebaseEmulator(context: context) },
        sandboxSettings: { baseURL in
            var base = baseURL.absoluteString
            while base.hasSuffix("/") { base.removeLast() }
            return [
                "api_key": FirebaseSandbox.apiKey,
                "project_id": FirebaseSandbox.projectID,
                // The emulator's layout puts the production host first (docs/vendors/firebase.md §4).
                "base_url": base + "/" + FirebaseWire.identityToolkitHost,
                "test_numbers": FirebaseSandbox.testNumbersSetting,
            ]
        })
}
