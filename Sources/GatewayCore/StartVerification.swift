/// A normalized request to start a verification, the same whatever vendor serves it.
public struct StartVerification: Sendable {
    public var destination: Destination
    public var channel: Channel
    /// Preferred content languages, most preferred first (IETF tags such as `es-ES`).
    public var locales: [String]
    public var appVerification: AppVerificationProof?
    /// Code length the caller asks for, where the vendor lets a request choose it.
    public var codeLength: Int?
    /// The caller's own reference, echoed back and stored.
    public var clientReference: String?
    /// Free-form metadata stored with the verification, never sent to a vendor.
    public var metadata: [String: String]
    /// A provider id that bypasses routing (tests and support).
    public var forcedProvider: String?

    public init(
        destination: Destination,
        channel: Channel,
        locales: [String] = [],
        appVerification: AppVerificationProof? = nil,
        codeLength: Int? = nil,
        clientReference: String? = nil,
        metadata: [String: String] = [:],
        forcedProvider: String? = nil
    ) {
        self.destination = destination
        self.channel = channel
        self.locales = locales
        self.appVerification = appVerification
        self.codeLength = codeLength
        self.clientReference = clientReference
        self.metadata = metadata
        self.forcedProvider = forcedProvider
    }
}

/// A normalized request to check a code against a verification.
public struct CheckVerification: Sendable {
    public var verificationID: String
    /// The code the user typed; `nil` polls a push approval.
    public var code: String?

    public init(verificationID: String, code: String?) {
        self.verificationID = verificationID
        self.code = code
    }
}
