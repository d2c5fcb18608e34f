import Crypto
import Foundation

/// Telnyx's webhook signatures (docs/vendors/telnyx.md §7.4): Ed25519 over `"{timestamp}|{body}"`, base64 in
/// `telnyx-signature-ed25519`, Unix seconds in `telnyx-timestamp`, refused more than 300 s from now.
enum TelnyxSignature {
    /// Why a delivery's signature is refused; `nil` when it holds.
    static func problem(signature: String?, timestamp: String?, body: Data, publicKey: Data, now: Date) -> String? {
        guard let signature, let timestamp else { return "missing signature headers" }
        guard let seconds = Int(timestamp) else { return "timestamp is not Unix seconds" }
        guard abs(now.timeIntervalSince1970 - TimeInterval(seconds)) <= TelnyxWire.timestampTolerance else {
            return "timestamp outside the 300 s tolerance"
        }
        guard let bytes = Data(base64Encoded: signature), bytes.count == 64,
            let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey),
            key.isValidSignature(bytes, for: TelnyxWire.signedBytes(timestamp: timestamp, body: body))
        else { return "signature does not verify" }
        return nil
    }
}
