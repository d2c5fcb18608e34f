import Foundation
import HTTPTypes

extension Destination {
    /// Throws `invalid_request` unless this is the kind of destination `channel` delivers to: an email address by
    /// email, a user identity by push, a phone number by the others.
    public func requireFits(_ channel: Channel) throws(GatewayError) {
        let fits =
            switch (channel, self) {
            case (.email, .email), (.push, .identity): true
            case (.email, _), (.push, _): false
            case (_, .phone): true
            default: false
            }
        guard fits else {
            throw GatewayError.invalidRequest("The destination does not fit the \(channel.rawValue) channel.")
        }
    }
}
