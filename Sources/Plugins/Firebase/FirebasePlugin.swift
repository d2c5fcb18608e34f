import Foundation
import GatewayCore

/// The Firebase phone sign-in plugin (Identity Toolkit v1, and v2's phone second factors): the one value
/// `Sources/gateway` installs. Its settings are ``FirebaseConfiguration/settings`` (docs/firebase.md); the sandbox
/// points it at a ``FirebaseEmulator`` with the ``FirebaseSandbox`` values.
public enum FirebasePlugin {
    public static let plugin = GatewayPlugin(
        id: "firebase",
        displayName: "Firebase Authentication (phone)",
        settings: FirebaseConfiguration.settings,
        provider: FirebaseProvider.self,
        makeEmulator: { context in FirebaseEmulator(context: context) },
        sandboxSettings: { baseURL in
            [
                "api_key": FirebaseSandbox.apiKey, "project_id": FirebaseSandbox.projectID,
                // The emulator's layout puts the production host first (docs/vendors/firebase.md §4).
                "base_url": baseURL.appending(path: FirebaseWire.identityToolkitHost).absoluteString,
                "test_numbers": FirebaseSandbox.testNumbersSetting,
            ]
        })
}
