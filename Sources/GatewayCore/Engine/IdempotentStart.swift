import Foundation
import Synchronization

/// The idempotency claim a start runs under: the key, the claimant's own token, and whether a vendor may
/// have sent anything for it yet (so a failed start knows whether a retry may send again).
///
/// The start records in the claim, before it calls a vendor, the verification id it will create and that
/// a vendor call begins (``VerificationStore/recordIdempotencyProgress(_:token:progress:until:)``): a
/// request that takes the claim over after a crash then knows whether a send can have happened.
public final class IdempotentStart: Sendable {
    /// The idempotency key the start runs under.
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
    /// The fingerprint of a claim the start takes itself, just before it counts the start and calls a vendor,
    /// in one write that also records the call about to begin (``VerificationService/start(_:apiKeyID:apiKeyName:clientIP:keyCountries:keyLimit:idempotency:)``).
    /// It takes only a key nobody holds or held (``IdempotencyClaim/claimed``); on any other answer the start
    /// stops before anything is counted or sent, and ``claimFoundTaken`` has the answer (the caller then
    /// holds a claim it took over, or waits for its holder). `nil`: the caller claimed the key before the start.
    public let claimsAhead: String?
    private let maySend = Mutex(false)
    private let ahead = Mutex(AheadState.notYet)

    /// Where a claim taken ahead stands.
    enum AheadState {
        case notYet
        /// Taken as a new key, recording a call to `providerID` to begin within ``aheadCallWindow`` of `at`.
        case taken(providerID: String?, at: ContinuousClock.Instant)
        /// Taken and its recorded call begun, or the claim is held otherwise: progress is recorded as usual.
        case held
        /// Not a new key: the start stopped.
        case found(IdempotencyClaim)
    }

    /// How soon after a claim taken ahead its first vendor call must begin for the claim's write to stand for
    /// that call (counting the start comes between; 1 s unless given); the recorded `callBegunAt` is this much
    /// after the claim, no earlier than the call, so that a takeover waits at least as long for the call as it
    /// would have.
    public let aheadCallWindow: TimeInterval

    /// A start under `key`, with a fresh token; it takes the claim itself only when given the fingerprint to claim
    /// with.
    public init(
        key: IdempotencyKey, token: String = IdempotentStart.newToken(), resumingID: String? = nil,
        endsAtInsert: Bool = false, claimsAhead fingerprint: String? = nil, aheadCallWindow: TimeInterval = 1
    ) {
        self.aheadCallWindow = aheadCallWindow
        self.key = key
        self.token = token
        self.resumingID = resumingID
        self.endsAtInsert = endsAtInsert
        self.claimsAhead = fingerprint
    }

    /// Whether the start must take the claim itself before it counts or sends.
    var needsClaim: Bool {
        guard claimsAhead != nil else { return false }
        return ahead.withLock { if case .notYet = $0 { true } else { false } }
    }

    /// What the claim taken ahead found when it was not a new key (the start stopped, nothing counted or sent).
    public var claimFoundTaken: IdempotencyClaim? {
        ahead.withLock { if case .found(let claim) = $0 { claim } else { nil } }
    }

    /// Whether this start took its claim ahead (and so holds it, unless another request took it over since).
    public var tookClaimAhead: Bool {
        ahead.withLock {
            switch $0 {
            case .taken, .held: true
            case .notYet, .found: false
            }
        }
    }

    func claimedAhead(_ answer: IdempotencyClaim, providerID: String?, at instant: ContinuousClock.Instant) {
        ahead.withLock {
            if case .claimed = answer {
                $0 = .taken(providerID: providerID, at: instant)
            } else {
                $0 = .found(answer)
            }
        }
    }

    /// Whether the claim's own write stands for the vendor call about to begin to `providerID` (once: the first
    /// call, to the provider it named, within ``aheadCallWindow``); otherwise the call's progress is recorded.
    func aheadClaimCovers(callTo providerID: String, at instant: ContinuousClock.Instant) -> Bool {
        ahead.withLock { state in
            guard case .taken(let named, let at) = state else { return false }
            state = .held
            return named == providerID && instant < at.advanced(by: .seconds(aheadCallWindow))
        }
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
