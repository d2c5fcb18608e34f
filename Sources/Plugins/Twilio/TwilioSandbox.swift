/// The fixed, public credentials of the Twilio sandbox (``TwilioEmulator``), documented so the official `twilio`
/// client or `curl` can be pointed at it. They never work against Twilio.
public enum TwilioSandbox {
    /// The account SID the emulator accepts as the Basic-auth user (any `SK…` API key SID works too).
    public static let accountSID = "AC5a4db0c5a4db0c5a4db0c5a4db0c0001"
    /// The auth token (or API key secret) the emulator accepts as the Basic-auth password.
    public static let authToken = "5a4db0c0sandbox0auth0token000001"
    /// The only Verify service the emulator knows.
    public static let serviceSID = "VA5a4db0c5a4db0c5a4db0c5a4db0c0001"
}
