import Foundation

/// Persistent state of the gateway: verification records, their event log, idempotency keys.
///
/// Every store (the embedded SQLite default, PostgreSQL later, the in-memory one for tests) passes
/// the same conformance suite. Methods throw only ``GatewayError`` (code `internal` for storage faults).
public protocol VerificationStore: Sendable {
    /// Inserts a new record. Fails with `internal` if the id exists.
    func insert(_ record: VerificationRecord) async throws(GatewayError)

    func record(id: String) async throws(GatewayError) -> VerificationRecord?

    /// The record a provider knows by `reference` (its vendor id), for callbacks that name only that.
    /// When a reference was reused, the newest record has it.
    func record(providerID: String, reference: String) async throws(GatewayError) -> VerificationRecord?

    /// Replaces the record if its stored version is `record.version - 1`; returns `false` (and
    /// changes nothing) when another writer got there first.
    func update(_ record: VerificationRecord) async throws(GatewayError) -> Bool

    func append(_ event: VerificationEvent) async throws(GatewayError)

    /// Inserts a record together with its first events, in one write where the store can.
    func insert(_ record: VerificationRecord, events: [VerificationEvent]) async throws(GatewayError)

    /// Appends several events, in one write where the store can.
    func append(contentsOf events: [VerificationEvent]) async throws(GatewayError)

    /// Counts one hit of `key` in the fixed window of `window` seconds that `at` falls in, atomically:
    /// allowed while the window has fewer than `limit` hits, refused (and not counted) after that.
    func hit(_ key: String, limit: Int, window: TimeInterval, at: Date) async throws(GatewayError) -> RateDecision

    /// Adds one to `key`'s count in the fixed window of `window` seconds that `at` falls in, and returns
    /// the count after it (a new window starts at one).
    func add(_ key: String, window: TimeInterval, at: Date) async throws(GatewayError) -> Int

    /// `key`'s count in the window `at` falls in (zero for a new window).
    func count(_ key: String, window: TimeInterval, at: Date) async throws(GatewayError) -> Int

    /// Records a prefix block (replacing one for the same prefix).
    func block(_ block: PrefixBlock) async throws(GatewayError)

    /// The block of `prefix` in force at `at`, if any.
    func activeBlock(prefix: String, at: Date) async throws(GatewayError) -> PrefixBlock?

    /// Every block in force at `at`, by prefix.
    func blocks(at: Date) async throws(GatewayError) -> [PrefixBlock]

    /// Ends the block of `prefix`; `false` when none was in force.
    func liftBlock(prefix: String, at: Date) async throws(GatewayError) -> Bool

    /// ``update(_:)`` and, only if it succeeded, the events, in one write where the store can.
    func update(_ record: VerificationRecord, events: [VerificationEvent]) async throws(GatewayError) -> Bool

    /// The events of a verification, oldest first.
    func events(verificationID: String) async throws(GatewayError) -> [VerificationEvent]

    /// The records an experiment assigned, created in `from ..< to` (either bound may be nil), oldest
    /// first: what the experiment report is computed from.
    func records(experiment: String, from: Date?, to: Date?) async throws(GatewayError) -> [VerificationRecord]

    /// Atomically claims an idempotency key for a request fingerprint, under `token` (the claimant's own
    /// random value) for `lease` seconds from `at`, naming `owner` (the claimant's instance,
    /// ``LeaseOwners/instanceID``; `nil` when the store's users do not name instances) as its holder.
    ///
    /// A claim that was never completed or released is taken over when its lease ran out by `at` (its holder
    /// crashed or lost the store), or when its owner is `deadOwner` (an instance the caller found dead, after
    /// this call answered ``IdempotencyClaim/inProgress(owner:)`` with it): the caller then holds it under
    /// `token` and `owner`, and the answer says how far the dead start got (``IdempotencyClaim/takenOver(_:)``).
    /// Of concurrent claims of one key, at most one claims or takes it over; the others see it in progress.
    func claimIdempotencyKey(
        _ key: IdempotencyKey, fingerprint: String, token: String, owner: String?, at: Date, lease: TimeInterval,
        deadOwner: String?
    ) async throws(GatewayError) -> IdempotencyClaim

    /// Records how far the start holding `key` under `token` got (the verification id it will create and,
    /// with ``IdempotencyProgress/Stage/vendorCallBegun``, that it is about to call a vendor, which one and
    /// when) and renews its lease to `until`, in one write. `false`, and nothing changed, when the claim is no longer `token`'s:
    /// another request took it over, and this one must not call the vendor.
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

    /// Writes `instance`'s heartbeat row: inserted, or replacing the row with its id.
    func heartbeat(_ instance: GatewayInstance) async throws(GatewayError)

    /// Every instance's heartbeat row, by id.
    func instances() async throws(GatewayError) -> [GatewayInstance]

    /// Deletes the heartbeat row of `id` (an instance found dead); its leases are then taken over at once.
    func removeInstance(id: String) async throws(GatewayError)

    /// Deletes at most `limit` keys claimed before `before` whose claim is not running (completed, or its
    /// lease over by then); returns how many it deleted.
    func pruneIdempotencyKeys(claimedBefore before: Date, limit: Int) async throws(GatewayError) -> Int

    /// ``update(_:)``, for a write that a later write of the same request always follows before anything is
    /// answered: with `.provisional` the store may leave making it durable to that later write. By default
    /// every write is `.answered` (the store's configured durability).
    func update(_ record: VerificationRecord, durability: StoreWriteDurability) async throws(GatewayError) -> Bool

    /// ``append(contentsOf:)`` with a ``StoreWriteDurability``, as for ``update(_:durability:)``.
    func append(contentsOf events: [VerificationEvent], durability: StoreWriteDurability) async throws(GatewayError)

    /// Reads the record `id` and writes what `change` makes of it, with ``update(_:durability:)``'s
    /// compare-and-set: a read followed by a write, in one store call where the store can (the SQLite store
    /// runs both in one transaction on its queue, so the write cannot lose to another writer). `change`
    /// returns `nil` to write nothing. It may run on the store's own thread while the store waits: it must
    /// decide from the record alone, quickly, without blocking or awaiting.
    ///
    /// By default ``record(id:)`` then ``update(_:durability:)``, whose compare-and-set may then fail: the
    /// answer says what was read and whether the write landed, and the caller tries again as after any
    /// lost compare-and-set.
    func modify(
        id: String, durability: StoreWriteDurability,
        _ change: @escaping @Sendable (VerificationRecord) -> VerificationRecord?
    ) async throws(GatewayError) -> StoreModification
}

/// What ``VerificationStore/modify(id:durability:_:)`` read and wrote.
public struct StoreModification: Sendable, Equatable {
    /// The record as read; `nil` for an unknown id.
    public var read: VerificationRecord?
    /// The record as written; `nil` when nothing was (the change said so, or another writer got there first).
    public var written: VerificationRecord?

    public init(read: VerificationRecord?, written: VerificationRecord?) {
        self.read = read
        self.written = written
    }
}

/// How far a store write must reach before it returns.
///
/// Other readers see a write at once either way; the difference is only what survives a power loss or an
/// operating-system crash. The SQLite store (WAL, `synchronous=FULL`) syncs an `.answered` commit to the
/// device and leaves a `.provisional` one to the next synced commit, whose sync of the WAL covers every
/// earlier frame, so commits still reach the device in order. A store that makes no such distinction
/// (PostgreSQL, in memory) treats both alike.
public enum StoreWriteDurability: Sendable, Equatable {
    /// Durable as the store is configured before the call returns: an answer may rely on it.
    case answered
    /// A step that nothing is answered from by itself (a check's lease): a power loss may undo it, and
    /// then also undoes everything after it, none of which was answered either.
    case provisional
}

extension VerificationStore {
    /// ``claimIdempotencyKey(_:fingerprint:token:owner:at:lease:deadOwner:)`` naming no owner: a claim then
    /// passes to another request only when its lease runs out.
    public func claimIdempotencyKey(
        _ key: IdempotencyKey, fingerprint: String, token: String, at: Date, lease: TimeInterval
    ) async throws(GatewayError) -> IdempotencyClaim {
        try await claimIdempotencyKey(
            key, fingerprint: fingerprint, token: token, owner: nil, at: at, lease: lease, deadOwner: nil)
    }

    public func insert(_ record: VerificationRecord, events: [VerificationEvent]) async throws(GatewayError) {
        try await insert(record)
        try await append(contentsOf: events)
    }

    public func append(contentsOf events: [VerificationEvent]) async throws(GatewayError) {
        for event in events { try await append(event) }
    }

    public func update(_ record: VerificationRecord, events: [VerificationEvent]) async throws(GatewayError) -> Bool {
        guard try await update(record) else { return false }
        try await append(contentsOf: events)
        return true
    }

    public func update(_ record: VerificationRecord, durability: StoreWriteDurability) async throws(GatewayError)
        -> Bool
    {
        try await update(record)
    }

    public func append(contentsOf events: [VerificationEvent], durability: StoreWriteDurability)
        async throws(GatewayError)
    {
        try await append(contentsOf: events)
    }

    public func modify(
        id: String, durability: StoreWriteDurability,
        _ change: @escaping @Sendable (VerificationRecord) -> VerificationRecord?
    ) async throws(GatewayError) -> StoreModification {
        guard let read = try await record(id: id) else { return StoreModification(read: nil, written: nil) }
        guard let next = change(read), try await update(next, durability: durability) else {
            return StoreModification(read: read, written: nil)
        }
        return StoreModification(read: read, written: next)
    }
}

/// An idempotency key, scoped to the API key that sent it.
public struct IdempotencyKey: Sendable, Hashable {
    public var scope: String
    public var key: String

    public init(scope: String, key: String) {
        self.scope = scope
        self.key = key
    }
}

/// A response kept for idempotent replay.
public struct StoredResponse: Sendable, Equatable, Codable {
    public var status: Int
    public var body: Data

    public init(status: Int, body: Data) {
        self.status = status
        self.body = body
    }
}

/// How far a start holding an idempotency key got, as recorded in the claim
/// (``VerificationStore/recordIdempotencyProgress(_:token:progress:until:)``).
public struct IdempotencyProgress: Sendable, Equatable {
    public enum Stage: Int, Sendable, Equatable {
        /// Claimed; no vendor has been called for it (a vendor may still be called only by the holder).
        case claimed = 0
        /// A vendor call for the start may have begun: a send may have happened.
        case vendorCallBegun = 1
    }

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

    public init(stage: Stage, verificationID: String? = nil, providerID: String? = nil, callBegunAt: Date? = nil) {
        self.stage = stage
        self.verificationID = verificationID
        self.providerID = providerID
        self.callBegunAt = callBegunAt
    }
}

/// The answer to ``VerificationStore/claimIdempotencyKey(_:fingerprint:token:at:lease:)``.
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
