import Foundation

/// A device factor enrolled with a vendor for a user identity: a phone holding a key the vendor knows
/// (Twilio Verify Push). The gateway lists and removes factors; enrolment and the device's proofs go
/// from the app's SDK to the vendor.
public struct DeviceFactor: Sendable, Equatable {
    /// Whether the device has proved it holds the factor's key.
    public enum Status: String, Sendable, Codable {
        /// Created, but the device has not proved it holds the key yet: it cannot be challenged.
        case unverified
        case verified
    }

    /// The vendor's id (Twilio `YF…`).
    public var id: String
    /// The user identity the factor is enrolled for, as the customer's backend names it.
    public var identity: String
    /// The kind of factor (`push`).
    public var type: String
    /// The name the user or app gave the device, if any.
    public var friendlyName: String?
    /// Whether the factor can be challenged yet.
    public var status: Status
    /// When the vendor created the factor, if it says.
    public var createdAt: Date?
    /// When the vendor last changed the factor, if it says.
    public var updatedAt: Date?
    /// Vendor facts worth showing (app id, notification platform), never secrets.
    public var details: [String: JSONValue]

    /// A factor as the vendor reported it.
    public init(
        id: String, identity: String, type: String, friendlyName: String? = nil, status: Status,
        createdAt: Date? = nil, updatedAt: Date? = nil, details: [String: JSONValue] = [:]
    ) {
        self.id = id
        self.identity = identity
        self.type = type
        self.friendlyName = friendlyName
        self.status = status
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.details = details
    }
}

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

/// A provider whose vendor keeps device factors (Twilio Verify Push), served by `/v1/factors`. A provider
/// adopts it beside ``VerificationProvider``; the API finds it with a cast, so nothing else changes.
public protocol FactorProvider: Sendable {
    /// The provider instance id.
    var id: String { get }

    /// A token the app's SDK enrols a factor with, for `identity`. `ttlSeconds` within the vendor's range.
    func createFactorAccessToken(identity: String, friendlyName: String?, ttlSeconds: Int?) async throws(GatewayError)
        -> FactorAccessToken

    /// The identity's factors, oldest first; none (not an error) for an identity the vendor does not know.
    func listFactors(identity: String) async throws(GatewayError) -> [DeviceFactor]

    /// One factor of the identity; `not_found` when it has no such factor.
    func fetchFactor(identity: String, id: String) async throws(GatewayError) -> DeviceFactor

    /// Removes a factor; `not_found` when the identity has no such factor.
    func deleteFactor(identity: String, id: String) async throws(GatewayError)
}
