import Foundation
import HTTPTypes

extension GatewayError {
    /// `unsupported_channel`: `vendor` does not offer `channel` (`Sinch does not offer the email channel.`).
    public static func unsupported(_ channel: Channel, by vendor: String) -> GatewayError {
        GatewayError(.unsupportedChannel, "\(vendor) does not offer the \(channel.rawValue) channel.")
    }
}
