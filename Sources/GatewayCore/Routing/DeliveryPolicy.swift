import Foundation

/// What a route of messaging providers does about the delivery of the gateway's own codes (docs/routing.md,
/// "Delivery failover"): when a message is reported undelivered, or no `delivered` receipt arrives within
/// ``deliverWithin``, the same code goes once more through the next messaging provider of the route that has
/// not failed the verification.
public struct DeliveryPolicy: Sendable, Equatable {
    /// How long a message may take to be reported delivered before the gateway sends it through another provider.
    public var deliverWithin: TimeInterval
    /// Whether a message that is not delivered is sent again through another provider.
    public var failover: Bool

    /// A policy that waits `deliverWithin` seconds (20 by default) and fails over when `failover` says so.
    public init(deliverWithin: TimeInterval = 20, failover: Bool = true) {
        self.deliverWithin = deliverWithin
        self.failover = failover
    }
}
