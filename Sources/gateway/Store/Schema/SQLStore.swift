import Foundation
import GatewayCore
import Synchronization

/// A store on the one schema: SQLite (``SQLiteVerificationStore``) or PostgreSQL
/// (``PostgresVerificationStore``). Every operation of the store protocols is written once, in the
/// extensions beside this file, as a ``StoreCall`` of the schema's statements; a store only runs calls
/// (``run(_:)``) and says how its database reports failures.
protocol SQLStore: VerificationStore, WebhookQueueStore, DeliveryDeadlineStore, DeliveryStatsStore, APIKeyStore,
    ConsoleSessionStore,
    VerificationStatsStore
{
    /// When expired rate counters are deleted next.
    var counterPurge: CounterPurge { get }

    /// The calls, statements and commits the store ran (``StoreCallCounts``), for `/metrics`.
    var callCounts: StoreCallCounts { get }

    /// Runs `call` and returns its value. Failures are logged and surface only as ``GatewayError``
    /// (`internal` "storage failure", `store_unavailable`, or the call's own ``StoreCall/duplicate``).
    func run<Value: Sendable>(_ call: StoreCall<Value>) async throws(GatewayError) -> Value

    /// Runs `call`, which only reads, where that is cheapest: SQLite on a read-only connection on the calling
    /// thread (``SQLiteDatabase/read(_:)``); otherwise as ``run(_:)``. It sees committed rows only.
    func read<Value: Sendable>(_ call: StoreCall<Value>) async throws(GatewayError) -> Value
}

extension SQLStore {
    func read<Value: Sendable>(_ call: StoreCall<Value>) async throws(GatewayError) -> Value {
        try await run(call)
    }

    /// One statement; `answer` makes the call's value of what it answered.
    func run<Value: Sendable>(
        _ operation: String, durability: StoreWriteDurability = .answered, _ statement: StoreStatement,
        _ values: [StoreValue] = [], answer: @escaping @Sendable (any StoreAnswer) throws -> Value
    ) async throws(GatewayError) -> Value {
        try await run(
            StoreCall(operation, durability: durability) { .run(statement, values) { .done(try answer($0)) } })
    }

    /// One statement whose answer is only whether it changed a row (the one row its key names).
    @discardableResult
    func change(
        _ operation: String, durability: StoreWriteDurability = .answered, _ statement: StoreStatement,
        _ values: [StoreValue]
    ) async throws(GatewayError) -> Bool {
        try await run(operation, durability: durability, statement, values) { $0.changed == 1 }
    }

    /// One query, every row read with `decode`.
    func rows<Row: Sendable>(
        _ operation: String, _ statement: StoreStatement, _ values: [StoreValue] = [],
        _ decode: @escaping @Sendable (any StoreRow) throws -> Row
    ) async throws(GatewayError) -> [Row] {
        try await run(operation, statement, values) { try $0.rows(decode) }
    }
}

/// Counts rate-counter hits, so that one in every ``interval`` also deletes the expired counters.
final class CounterPurge: Sendable {
    static let interval = 1000
    private let hits = Mutex(0)

    /// Counts a hit; `true` when this one should purge.
    func isDue() -> Bool {
        hits.withLock { count in
            count += 1
            guard count >= Self.interval else { return false }
            count = 0
            return true
        }
    }
}
