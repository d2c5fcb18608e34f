import Foundation
import Synchronization

/// The idempotency claim a start runs under: the key, the claimant's own token, and whether a vendor may
/// have sent anything for it yet (so a failed start knows whether a retry may send again).
///
/// The start records in the claim, before it calls a vendor, the verification id it will create and that
/// a vendor call begins (``VerificationStore/recordIdempotencyProgress(_:token:progress:until:)``): a
/// request that takes the claim over after a crash then knows whether a send can have happened.
public final class IdempotentStart: Sendable {
    public let key: IdempotencyKey
    /// What the claim is held under: only this request's writes to the key count.
    public let token: String
    /// The verification id a start anew after a takeover keeps: the dead start's, which its vendor knows as
    /// the reference and found nothing under (``StartLookupResult/notFound``). `nil`: a new id.
    public let resumingID: String?
    /// Whether the commit that stores the started verification also ends the claim's lease, keeping the
    /// verification's id in it (``VerificationStore/insert(_:events:endingClaim:token:)``): for a claim that keeps
    /// no response to replay, as the Twilio front door's create claim. `false`: the caller completes, releases
    /// or abandons the claim itself, as the native API does with the response of an `Idempotency-Key`.
    public let endsAtInsert: Bool
    private let maySend = Mutex(false)

    public init(
        key: IdempotencyKey, token: String = IdempotentStart.newToken(), resumingID: String? = nil,
        endsAtInsert: Bool = false
    ) {
        self.key = key
        self.token = token
        self.resumingID = resumingID
        self.endsAtInsert = endsAtInsert
    }

    /// Whether a vendor call of this start may have sent something: set before each call, cleared after a
    /// call that failed before the vendor accepted when no earlier call may have sent.
    public var sendMayHaveHappened: Bool { maySend.withLock { $0 } }

    func setSendMayHaveHappened(_ value: Bool) {
        maySend.withLock { $0 = value }
    }

    /// 128 bits from the system's secure generator, as hex.
    public static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return Hex.lowercase(generator.next() as UInt64) + Hex.lowercase(generator.next() as UInt64)
    }
}
