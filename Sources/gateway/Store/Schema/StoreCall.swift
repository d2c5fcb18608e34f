import GatewayCore

/// One store operation, written once for both stores: the statements it runs, in order, each one's answer
/// deciding what runs next. A store runs it (``SQLStore/run(_:)``): SQLite synchronously on its queue (so a
/// call is one queued unit of its group commit), PostgreSQL on one pooled connection, awaiting each
/// statement. Neither the operation nor its statements know which store runs them.
struct StoreCall<Value: Sendable>: Sendable {
    /// The operation's name in the logs (`store.operation`).
    var operation: String
    var atomicity: StoreAtomicity
    var durability: StoreWriteDurability
    /// What to answer when a statement breaks a uniqueness constraint, instead of the store's storage failure.
    var duplicate: GatewayError?
    /// The first step. It runs inside the store's error handling, so a value that cannot be encoded fails
    /// the call as a storage failure like any other.
    var start: @Sendable () throws -> StoreStep<Value>

    init(
        _ operation: String, atomicity: StoreAtomicity = .none, durability: StoreWriteDurability = .answered,
        duplicate: GatewayError? = nil, _ start: @escaping @Sendable () throws -> StoreStep<Value>
    ) {
        self.operation = operation
        self.atomicity = atomicity
        self.durability = durability
        self.duplicate = duplicate
        self.start = start
    }
}

/// Where a ``StoreCall`` stands: done, or about to run a statement.
indirect enum StoreStep<Value: Sendable>: Sendable {
    case done(Value)
    /// Runs `statement` with `values` bound to `$1 … $n`, then goes on with what `next` makes of its answer.
    case run(StoreStatement, [StoreValue], next: @Sendable (any StoreAnswer) throws -> StoreStep<Value>)
    /// Waits until no other transaction holds `lock`, then holds it to the end of the call's transaction.
    case exclusive(StoreLock, next: StoreStep<Value>)

    /// `statement`, then `next` whatever it answered.
    static func run(_ statement: StoreStatement, _ values: [StoreValue], then next: StoreStep<Value>) -> StoreStep<
        Value
    > {
        .run(statement, values) { _ in next }
    }

    /// Each of `statements` in order, then `next`.
    static func runEach(_ statements: [(StoreStatement, [StoreValue])], then next: StoreStep<Value>) -> StoreStep<Value>
    {
        statements.reversed().reduce(next) { next, statement in .run(statement.0, statement.1, then: next) }
    }
}

/// How much of a ``StoreCall`` must commit together.
enum StoreAtomicity: Sendable, Equatable {
    /// Each statement commits by itself: the call is right whatever other writers do between its statements
    /// (a single statement, or compare-and-set steps).
    case none
    /// Right as ``none``, but one commit where that is free: SQLite runs the statements in one transaction
    /// (one write lock, one sync, and no other process between them); PostgreSQL lets each statement commit,
    /// since a transaction there costs two round trips and would hold row locks across them.
    case transactionWhereFree
    /// All or nothing: one transaction in either store.
    case transaction
}

/// A lock a call's transaction takes, and holds to its end.
enum StoreLock: Sendable, Equatable {
    /// Taken before events are inserted, so that event sequence numbers are handed out in commit order
    /// (docs/architecture.md §9): PostgreSQL's transaction-level advisory lock; nothing in SQLite, which
    /// has one writer at a time.
    case eventLog
}

/// What one statement answered, read inside the step that ran it (SQLite's rows are readable only there).
protocol StoreAnswer {
    /// Rows an `INSERT`, `UPDATE` or `DELETE` without `RETURNING` changed (an upsert counts the row it
    /// inserted or updated; one its `WHERE` refused is not counted).
    var changed: Int { get }

    /// Every row, read with `decode`, in order.
    func rows<Row>(_ decode: (any StoreRow) throws -> Row) throws -> [Row]

    /// The first row, read with `decode`; `nil` when there is none.
    func first<Row>(_ decode: (any StoreRow) throws -> Row) throws -> Row?
}
