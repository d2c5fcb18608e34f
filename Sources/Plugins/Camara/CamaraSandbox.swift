import Crypto
import Foundation

/// The sandbox's fixed CAMARA client: public test values, never use them anywhere else.
public enum CamaraSandbox {
    /// The client id the emulator knows the gateway by.
    public static let clientID = "gateway-sandbox"
    /// The key the sandbox signs client assertions with, from fixed bytes.
    static var privateKey: P256.Signing.PrivateKey {
        // Thirty-two bytes below the curve's order always make a key.
        (try? P256.Signing.PrivateKey(rawRepresentation: Data((1...32).map { UInt8($0) })))
            ?? P256.Signing.PrivateKey()
    }
    /// ``privateKey``'s DER in base64, one line, as the `private_key` setting takes it.
    public static var privateKeyDER: String { privateKey.derRepresentation.base64EncodedString() }
}
