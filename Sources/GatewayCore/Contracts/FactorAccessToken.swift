import Foundation

/// What the app's SDK needs to enrol a factor for an identity: a short-lived token the backend fetched.
public struct FactorAccessToken: Sendable, Equatable {
    /// The user identity the token enrols a factor for.
    public var identity: String
    /// The token the SDK enrols with.
    public var token: String
    /// The kind of factor the token enrols (`push`).
    public var factorType: String
    /// When the token stops working; the SDK must enrol before then.
    public var expiresAt: Date
    /// What else the SDK needs from the vendor (Twilio: `service_sid`, `base_url`).
    public var details: [String: JSONValue]

    /// A token the vendor issued for `identity`.
    public init(
        identity: String, token: String, factorType: String, expiresAt: Date, details: [String: JSONValue] = [:]
    ) {
        self.identity = identity
        self.token = token
        self.factorType = factorType
        self.expiresAt = expiresAt
        self.details = details
    }
}
