import Foundation

/// Idempotency keys: the part of ``VerificationStore`` that makes a start with an `Idempotency-Key` run once
/// (docs/architecture.md §9.2). Methods throw only ``GatewayError``.
public protocol IdempotencyStore: Sendable {
    /// Atomically claims an idempotency key for a request fingerprint, under `token` (the claimant's own
    /// random value) for `lease` seconds from `at`, naming `owner` (the claimant's instance,
    /// ``LeaseOwners/instanceID``; `nil` when the store's users do not name instances) as its holder.
    ///
    /// A claim that was never completed or released is taken over when its lease ran out by `at` (its holder
    /// crashed or lost the store), or when its owner is `deadOwner` (an instance the caller found dead, after
    /// this call answered ``IdempotencyClaim/inProgress(owner:)`` with it): the caller then holds it under
    /// `token` and `owner`, and the answer says how far the dead start got (``IdempotencyClaim/takenOver(_:)``).
    /// Of concurrent claims of one key, at most one claims or takes it over; the others see it in progress.
    ///
    /// A new key starts with `progress` (a claim taken just before its holder's first vendor call records that
    /// call in the same write); a key taken over keeps the dead start's until its new holder records its own.
    /// A takeover counts as a new claim for ``pruneIdempotencyKeys(claimedBefore:limit:)``.
    func claimIdempotencyKey(
        _ key: IdempotencyKey, fingerprint: String, token: String, owner: String?, at: Date, lease: TimeInterval,
        deadOwner: String?, progress: IdempotencyProgress
    ) async throws(GatewayError) -> IdempotencyClaim

    /// Records how far the start holding `key` under `token` got (the verification id it will create and,
    /// with ``IdempotencyProgress/Stage/vendorCallBegun``, that it is about to call a vendor, which one and
    /// when) and renews its lease to `until`, in one write. `false`, and nothing changed, when the claim is no
    /// longer `token`'s: another request took it over, and this one must not call the vendor.
    func recordIdempotencyProgress(
        _ key: IdempotencyKey, token: String, progress: IdempotencyProgress, until: Date
    ) async throws(GatewayError) -> Bool

    /// Stores the response of a key claimed under `token`, so replays receive it; `false` (nothing stored)
    /// when the claim is no longer `token`'s.
    @discardableResult
    func completeIdempotencyKey(
        _ key: IdempotencyKey, token: String, response: StoredResponse
    ) async throws(GatewayError) -> Bool

    /// Gives up a claim held under `token` (the request failed before any vendor could have sent, in a way a
    /// retry may fix): the key is new again.
    func releaseIdempotencyKey(_ key: IdempotencyKey, token: String) async throws(GatewayError)

    /// Ends the lease of a claim held under `token` at `at`, keeping its progress: the start called a vendor
    /// and then failed without an answer to keep, so the next retry takes the claim over at once and is told
    /// what is known (the verification, if it was stored after all, or that the outcome is unknown).
    func abandonIdempotencyKey(_ key: IdempotencyKey, token: String, at: Date) async throws(GatewayError)

    /// Deletes at most `limit` keys claimed before `before` whose claim is not running (completed, or its
    /// lease over by then); returns how many it deleted.
    func pruneIdempotencyKeys(claimedBefore before: Date, limit: Int) async throws(GatewayError) -> Int
}

extension IdempotencyStore {
    /// ``claimIdempotencyKey(_:fingerprint:token:owner:at:lease:deadOwner:progress:)`` of a new key that no
    /// vendor call has begun for yet (``IdempotencyProgress/Stage/claimed``).
    public func claimIdempotencyKey(
        _ key: IdempotencyKey, fingerprint: String, token: String, owner: String?, at: Date, lease: TimeInterval,
        deadOwner: String?
    ) async throws(GatewayError) -> IdempotencyClaim {
        try await claimIdempotencyKey(
            key, fingerprint: fingerprint, token: token, owner: owner, at: at, lease: lease, deadOwner: deadOwner,
            progress: IdempotencyProgress(stage: .claimed))
    }

    /// ``claimIdempotencyKey(_:fingerprint:token:owner:at:lease:deadOwner:)`` naming no owner: a claim then
    /// passes to another request only when its lease runs out.
    public func claimIdempotencyKey(
        _ key: IdempotencyKey, fingerprint: String, token: String, at: Date, lease: TimeInterval
    ) async throws(GatewayError) -> IdempotencyClaim {
        try await claimIdempotencyKey(
            key, fingerprint: fingerprint, token: token, owner: nil, at: at, lease: lease, deadOwner: nil)
    }
}

/// An idempotency key, scoped to the API key that sent it.
public struct IdempotencyKey: Sendable, Hashable {
    /// What the key is unique within: the API key's id (`-` without one), or a front door's own namespace.
    public var scope: String
    /// The key the client sent (the `Idempotency-Key` header's value).
    public var key: String

    /// The key `key` within `scope`.
    public init(scope: String, key: String) {
        self.scope = scope
        self.key = key
    }
}

/// A response kept for idempotent replay.
public struct StoredResponse: Sendable, Equatable, Codable {
    /// The HTTP status of the kept response.
    public var status: Int
    /// The kept response body, byte for byte.
    public var body: Data

    /// A response of `status` with `body`.
    public init(status: Int, body: Data) {
        self.status = status
        self.body = body
    }
}

/// How far a start holding an idempotency key got, as recorded in the claim
/// (``IdempotencyStore/recordIdempotencyProgress(_:token:progress:until:)``).
public struct IdempotencyProgress: Sendable, Equatable {
    /// How far the start got, in the order it gets there.
    public enum Stage: Int, Sendable, Equatable {
        /// Claimed; no vendor has been called for it (a vendor may still be called only by the holder).
        case claimed = 0
        /// A vendor call for the start may have begun: a send may have happened.
        case vendorCallBegun = 1
    }

    /// How far the start got.
    public var stage: Stage
    /// The id the start gives (or gave) its verification, once known; the vendor knows it as the reference.
    public var verificationID: String?
    /// With ``Stage/vendorCallBegun``: the provider the start is calling, the one a takeover may ask by
    /// reference (``VerificationProvider/lookUpStart(_:)``). `nil` when no single provider can answer for the
    /// start: an earlier call to another provider may have sent too (a failover after an ambiguous failure).
    public var providerID: String?
    /// When the call to ``providerID`` began: a request to the vendor may still be on its way until the
    /// provider's request timeout after it.
    public var callBegunAt: Date?

    /// Progress at `stage`; the id, the provider and the call's start when known.
    public init(stage: Stage, verificationID: String? = nil, providerID: String? = nil, callBegunAt: Date? = nil) {
        self.stage = stage
        self.verificationID = verificationID
        self.providerID = providerID
        self.callBegunAt = callBegunAt
    }
}

/// The answer to ``IdempotencyStore/claimIdempotencyKey(_:fingerprint:token:at:lease:)``.
public enum IdempotencyClaim: Sendable, Equatable {
    /// The key is new; the caller owns it and must complete, release or abandon it.
    case claimed
    /// The key's previous claim lapsed unfinished; the caller owns it now, and here is how far the lapsed
    /// start got.
    case takenOver(IdempotencyProgress)
    /// A request with this key already finished; here is its response.
    case replay(StoredResponse)
    /// A request with this key is still running (its lease has not run out), held by the instance `owner`
    /// (`nil`: the claim names none). Should that instance be dead, claiming again with it as the
    /// `deadOwner` takes the claim over at once.
    case inProgress(owner: String?)
    /// The key was used for a different request body.
    case mismatch
}
