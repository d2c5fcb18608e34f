import Foundation

/// The fixed, public values of the Telnyx sandbox (``TelnyxEmulator``), documented so that the `telnyx` Python
/// package or `curl` can use it; they never work against the real Telnyx API.
public enum TelnyxSandbox {
    /// The API key the emulator accepts (`Authorization: Bearer …`).
    public static let apiKey = "KEYSANDBOX0TELNYX0000000000000001"
    /// The one Verify profile the emulator knows.
    public static let verifyProfileID = "4900017a-0000-4000-8000-7e1a7e1a0001"
    /// The messaging profile the sandbox's `telnyx_messaging` provider sends with (its alphanumeric senders need one).
    public static let messagingProfileID = "4000eba1-0000-4000-8000-7e1a7e1a0002"
    /// The public half of the emulator's webhook signing key, base64 of its 32 bytes as Mission Control shows
    /// an account's key: the sandbox provider's `public_key`.
    public static var publicKey: String { TelnyxEmulator.signingKey.publicKey.rawRepresentation.base64EncodedString() }
}
