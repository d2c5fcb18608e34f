import Foundation

/// What a takeover knows of a start that died at the vendor: what a plugin asks its vendor by
/// (``VerificationProvider/lookUpStart(_:)``).
public struct StartLookup: Sendable, Equatable {
    /// The gateway's id for the verification: what the dead start sent as the vendor's reference, where the
    /// vendor takes one.
    public var verificationID: String
    /// Where the dead start was sending.
    public var destination: Destination
    /// The channel the dead start used.
    public var channel: Channel
    /// When the dead start's call to this provider began.
    public var callBegunAt: Date

    /// What a takeover read from the dead start's stored progress.
    public init(verificationID: String, destination: Destination, channel: Channel, callBegunAt: Date) {
        self.verificationID = verificationID
        self.destination = destination
        self.channel = channel
        self.callBegunAt = callBegunAt
    }

    /// Whether the dead start's request can no longer reach the vendor at `now`: its call began more than
    /// `requestTimeout` (the provider's bound on one vendor call) ago, so the dead instance's client had
    /// given up on it by then. Until then a vendor that has nothing under the reference may still get it,
    /// and ``StartLookupResult/notYet`` is the true answer rather than ``StartLookupResult/notFound``.
    public func callSettled(at now: Date, requestTimeout: Duration) -> Bool {
        let seconds =
            TimeInterval(requestTimeout.components.seconds)
            + TimeInterval(requestTimeout.components.attoseconds) / 1e18
        return now >= callBegunAt.addingTimeInterval(seconds)
    }
}

/// What a vendor says of a start whose instance died (``VerificationProvider/lookUpStart(_:)``).
public enum StartLookupResult: Sendable, Equatable {
    /// The vendor has the verification: the start reached it. What a start would have returned.
    case found(ProviderStartResult)
    /// The vendor has nothing for it and the dead call can no longer reach it: nothing was sent.
    case notFound
    /// The vendor has nothing for it yet, but the dead call may still reach it (it began less than the
    /// provider's request timeout ago): ask again later.
    case notYet
    /// The vendor cannot say (no lookup, or an answer that does not settle it).
    case unknown
}
