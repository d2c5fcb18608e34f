/// One kind of call a plugin makes to its vendor, by the vendor's own name for it (`start`,
/// `sendVerificationCode`, `sms_send`), and whether a send may have happened when it fails without a clear
/// answer (a timeout, a reset, a body the gateway cannot read).
///
/// Only the calls that can deliver a message say `sendMayHaveHappened`: the router must not fail such a call
/// over to another vendor, or the user could get two codes (`GatewayError.sendMayHaveHappened`). A plugin
/// declares its operations once, as static values, and passes them to ``VendorHTTPClient``.
public struct VendorOperation: Sendable, Hashable, CustomStringConvertible {
    /// The vendor's name for the call: bounded, used in log metadata, metric labels and error tables.
    public var name: String
    /// Whether an answerless failure of this call may hide an accepted send.
    public var sendMayHaveHappened: Bool

    /// An operation the vendor calls `name`; it cannot send unless `sendMayHaveHappened` says so.
    public init(_ name: String, sendMayHaveHappened: Bool = false) {
        self.name = name
        self.sendMayHaveHappened = sendMayHaveHappened
    }

    /// The vendor's name for the call, ``name``.
    public var description: String { name }
}
