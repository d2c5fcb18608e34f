import Foundation
import HTTPTypes
import Logging

/// A provider made from its context that reaches its vendor through a ``VendorHTTPClient``: its id, clock and
/// logger are the client's (the context's), so the provider keeps the client and its configuration only.
public protocol VendorHTTPProvider: ContextProvider {
    /// The client every vendor call goes through.
    var client: VendorHTTPClient { get }
}

extension VendorHTTPProvider {
    /// The client's ``VendorHTTPClient/providerID``.
    public var id: String { client.providerID }
    /// The client's clock, the provider's context's.
    public var clock: any WallClock { client.clock }
    /// The client's logger, the provider's context's.
    public var logger: Logger { client.logger }
}
