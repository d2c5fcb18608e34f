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
