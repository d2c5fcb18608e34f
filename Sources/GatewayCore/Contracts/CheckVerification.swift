/// A normalized request to check a code against a verification.
public struct CheckVerification: Sendable {
    /// The gateway's id of the verification to check (`vf_…`).
    public var verificationID: String
    /// The code the user typed (for a flash call, the caller's number). A push is never completed by a
    /// check: its result arrives by callback or `refresh`.
    public var code: String
    /// The end user's device, for vendors that want it.
    public var clientContext: ClientContext

    /// A check of `code` against the verification `verificationID`.
    public init(verificationID: String, code: String, clientContext: ClientContext = ClientContext()) {
        self.verificationID = verificationID
        self.code = code
        self.clientContext = clientContext
    }
}
