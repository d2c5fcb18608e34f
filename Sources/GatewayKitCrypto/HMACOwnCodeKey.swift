import Crypto
import GatewayCore

/// The key of the gateway's own codes: HMAC-SHA256 under a secret of at least 32 bytes (the configuration
/// reads it from an environment variable).
public struct HMACOwnCodeKey: OwnCodeKey {
    /// The shortest secret taken, in bytes: HMAC-SHA256's output size.
    public static let minimumSecretBytes = 32

    private let secret: [UInt8]

    /// A key over `secret`, or `nil` when it is shorter than ``minimumSecretBytes``.
    public init?(secret: some Collection<UInt8>) {
        guard secret.count >= Self.minimumSecretBytes else { return nil }
        self.secret = Array(secret)
    }

    /// HMAC-SHA256 of `message`.
    public func authenticationCode(for message: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: secret)))
    }
}
