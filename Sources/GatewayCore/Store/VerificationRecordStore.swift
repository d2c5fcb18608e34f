import Foundation

/// Verification records and their event log: the part of ``VerificationStore`` the engine writes every state
/// change through. Methods throw only ``GatewayError`` (code `internal` for storage faults).
public protocol VerificationRecordStore: Sendable {
    /// Inserts a new record. Fails with `internal` if the id exists.
    func insert(_ record: VerificationRecord) async throws(GatewayError)

    /// The record with `id`, or `nil` when there is none.
    func record(id: String) async throws(GatewayError) -> VerificationRecord?

    /// The record a provider knows by `reference` (its vendor id), for callbacks that name only that.
    /// When a reference was reused, the newest record has it.
    func record(providerID: String, reference: String) async throws(GatewayError) -> VerificationRecord?

    /// The verifications to `destination` (its ``Destination/value``) still open at `at` (pending, code still
    /// valid), newest first, at most `limit`: how a caller that knows only the destination finds its pending
    /// verification (the Twilio front door's check by `To`). Served by the `(destination_value, created_at)`
    /// index.
    func openVerifications(destination: String, at: Date, limit: Int) async throws(GatewayError)
        -> [VerificationRecord]

    /// Replaces the record if its stored version is `record.version - 1`; returns `false` (and
    /// changes nothing) when another writer got there first.
    func update(_ record: VerificationRecord) async throws(GatewayError) -> Bool

    /// Appends one event to its verification's log.
    func append(_ event: VerificationEvent) async throws(GatewayError)

    /// Inserts a record together with its first events, in one write where the store can.
    func insert(_ record: VerificationRecord, events: [VerificationEvent]) async throws(GatewayError)

    /// Appends several events, in one write where the store can.
    func append(contentsOf events: [VerificationEvent]) async throws(GatewayError)

    /// ``update(_:)`` and, only if it succeeded, the events, in one write where the store can.
    func update(_ record: VerificationRecord, events: [VerificationEvent]) async throws(GatewayError) -> Bool

    /// The events of a verification, oldest first.
    func events(verificationID: String) async throws(GatewayError) -> [VerificationEvent]

    /// The records an experiment assigned, created in `from ..< to` (either bound may be nil), oldest
    /// first: what the experiment report is computed from.
    func records(experiment: String, from: Date?, to: Date?) async throws(GatewayError) -> [VerificationRecord]

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

/// What ``VerificationRecordStore/modify(id:durability:_:)`` read and wrote.
public struct StoreModification: Sendable, Equatable {
    /// The record as read; `nil` for an unknown id.
    public var read: VerificationRecord?
    /// The record as written; `nil` when nothing was (the change said so, or another writer got there first).
    public var written: VerificationRecord?

    /// The outcome of a modification: what was read and what, if anything, was written.
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

extension VerificationRecordStore {
    /// Default: ``insert(_:)`` then ``append(contentsOf:)``, two writes.
    public func insert(_ record: VerificationRecord, events: [VerificationEvent]) async throws(GatewayError) {
        try await insert(record)
        try await append(contentsOf: events)
    }

    /// Default: each event appended on its own.
    public func append(contentsOf events: [VerificationEvent]) async throws(GatewayError) {
        for event in events { try await append(event) }
    }

    /// Default: ``update(_:)``, then the events only if it succeeded, two writes.
    public func update(_ record: VerificationRecord, events: [VerificationEvent]) async throws(GatewayError) -> Bool {
        guard try await update(record) else { return false }
        try await append(contentsOf: events)
        return true
    }

    /// Default: ``update(_:)``, at the store's configured durability.
    public func update(_ record: VerificationRecord, durability: StoreWriteDurability) async throws(GatewayError)
        -> Bool
    {
        try await update(record)
    }

    /// Default: ``append(contentsOf:)``, at the store's configured durability.
    public func append(contentsOf events: [VerificationEvent], durability: StoreWriteDurability)
        async throws(GatewayError)
    {
        try await append(contentsOf: events)
    }

    /// Default: ``record(id:)`` then ``update(_:durability:)``, not atomic: another writer may get in between, and the
    /// compare-and-set then fails.
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
