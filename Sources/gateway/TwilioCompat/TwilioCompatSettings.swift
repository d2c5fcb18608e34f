import Foundation
import GatewayCore

/// The `twilio_compat` section: the account the Twilio-compatible front door answers as, the SIDs its clients
/// may authenticate with, and its Verify services, each with the routing profile its starts use
/// (docs/twilio-compat.md).
struct TwilioCompatSettings: Sendable, Equatable {
    /// One Verify service the facade serves: `VA` and 32 hex digits.
    struct Service: Sendable, Equatable {
        var sid: String
        var friendlyName: String
        /// Where the service's starts go: its providers or experiment, fallbacks and failover rule. The route's
        /// name (`twilio:<sid>`) is what the verification records as its `route`.
        var route: Route
        /// The code length asked of vendors that let a start choose it (`nil`: the vendor's own).
        var codeLength: Int?
        /// Whether `POST …/Verifications/{Sid}` may set `Status=approved` (off: refused with 60200).
        var allowsApproval = false
    }

    /// The `account_sid` of every answer; also accepted as the HTTP Basic user name.
    var accountSID: String
    /// API key SIDs (`SK…`) also accepted as the Basic user name.
    var apiKeySIDs: Set<String> = []
    var services: [String: Service] = [:]

    /// The route name a service's starts record.
    static func routeName(sid: String) -> String { "twilio:" + sid }

    /// Whether `sid` is `prefix` and 32 hex digits, Twilio's SID shape.
    static func isSID(_ sid: String, prefix: String) -> Bool {
        sid.utf8.count == 34 && sid.hasPrefix(prefix) && sid.utf8.dropFirst(2).allSatisfy(Self.isHexDigit)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }
}
