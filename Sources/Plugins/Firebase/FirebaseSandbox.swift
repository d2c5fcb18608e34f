/// The fixed, public values of the Firebase sandbox (``FirebaseEmulator``).
///
/// They are test values, documented on purpose so that a newcomer can point `curl` or a Firebase
/// client at the sandbox. They never work against Google's servers: the key has the shape of a Web API
/// key (`AIza` and 35 more characters) but was never issued, and `demo-` project ids are the ones
/// Firebase reserves for emulators.
public enum FirebaseSandbox {
    /// The Web API key the emulator accepts as `?key=` or `x-goog-api-key`.
    public static let apiKey = "AIzaSyD-sandbox-verification-gateway001"
    /// The project the emulator serves; its ID tokens carry it as `aud`.
    public static let projectID = "demo-verification-gateway"
    /// The fictional test numbers of the sandbox project with their fixed codes (docs/vendors/firebase.md §5,
    /// [TESTNUM]): no SMS, no app-verification proof, no quota. `+1 650 555 01xx` is a range reserved
    /// for fiction.
    public static let testNumbers: [String: String] = ["+16505550100": "123456"]

    /// The app-verification token the emulator refuses (`CAPTCHA_CHECK_FAILED` for reCAPTCHA,
    /// `INVALID_APP_CREDENTIAL` for the others); any other non-empty token passes.
    public static let rejectedProofToken = "invalid"

    /// ``testNumbers`` in the `test_numbers` setting's syntax (`+16505550100=123456,…`).
    public static var testNumbersSetting: String {
        testNumbers.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
    }
}
