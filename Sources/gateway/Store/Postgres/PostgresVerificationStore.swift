import Foundation
import GatewayCore
import Logging
import NIOSSL
import PostgresNIO

/// The shared store for several gateway instances: PostgreSQL through postgres-nio's connection pool, on the
/// one schema (`Store/Schema`, whose ``SQLStore`` extensions write every operation). This type only runs the
/// calls: on a pooled connection, with a deadline, taking the event-log advisory lock where a call asks.
///
/// The server makes the schema's statements exact across instances: updates are compare-and-set on the
/// record's version, a record and its events are one transaction, idempotency claims and rate counters are
/// single statements, and event inserts take a transaction-level advisory lock so sequence numbers are
/// handed out in commit order (docs/architecture.md §9). Every operation has a deadline
/// (``PostgresStoreSettings/timeout``); a server that is down, refuses connections or does not answer in
/// time surfaces as `503 store_unavailable`, and the pool reconnects by itself when it is back.
final class PostgresVerificationStore: SQLStore {
    let client: PostgresClient
    let settings: PostgresStoreSettings
    let logger: Logger
    private let runner: Task<Void, Never>
    let reachability: PostgresReachability
    let counterPurge = CounterPurge()
    let callCounts = StoreCallCounts()

    /// Starts the pool (it runs until ``close()``) and applies pending migrations. `searchPath` puts every
    /// table in that schema, made when missing (tests give each store its own).
    init(settings: PostgresStoreSettings, searchPath: String? = nil, logger: Logger) async throws(GatewayError) {
        let tls: PostgresClient.Configuration.TLS
        switch settings.tls {
        case .disable: tls = .disable
        case .prefer: tls = .prefer(.makeClientConfiguration())
        case .require: tls = .require(.makeClientConfiguration())
        }
        var configuration = PostgresClient.Configuration(
            host: settings.host, port: settings.port, username: settings.username, password: settings.password,
            database: settings.database, tls: tls)
        configuration.options.maximumConnections = max(1, settings.poolSize)
        configuration.options.connectTimeout = settings.connectTimeout
        configuration.options.keepAliveBehavior = .init(frequency: .seconds(15))
        let milliseconds =
            settings.timeout.components.seconds * 1000 + settings.timeout.components.attoseconds / 1_000_000_000_000_000
        var parameters = [
            ("application_name", "verification-gateway"),
            // The server gives up too, so a stuck statement does not hold a connection past the deadline.
            ("statement_timeout", "\(milliseconds)"),
            ("lock_timeout", "\(milliseconds)"),
        ]
        if let searchPath { parameters.append(("search_path", searchPath)) }
        configuration.options.additionalStartupParameters = parameters
        var poolLogger = logger
        poolLogger[metadataKey: "store"] = .string(settings.displayURL)
        let client = PostgresClient(configuration: configuration, backgroundLogger: poolLogger)
        self.client = client
        reachability = PostgresReachability(host: settings.host, port: settings.port)
        self.settings = settings
        self.logger = logger
        runner = Task { await client.run() }
        let migrated = await withStoreDeadline(settings.timeout + settings.connectTimeout) {
            try await PostgresMigration.migrate(client, schema: searchPath, logger: logger)
        }
        if case .failure(let error) = migrated {
            runner.cancel()
            throw Self.failure(error, operation: "migrate", logger: logger)
        }
    }

    /// Stops the pool: its connections close and later calls fail with `store_unavailable`.
    func close() {
        runner.cancel()
    }

    // MARK: - Running statements

    /// Runs `body` on a pooled connection within the deadline, turning failures into the API's errors.
    @discardableResult
    func perform<T: Sendable>(
        _ operation: String, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws(GatewayError) -> T {
        if await reachability.refusesConnections() {
            logger.debug("store refuses connections", metadata: ["store.operation": "\(operation)"])
            throw GatewayError(.storeUnavailable, "The store is unavailable; retry shortly.")
        }
        let (client, reachability) = (client, reachability)
        // The first operation of an outage waits for the pool's retries: probe the server while it is slow.
        let giveUp: (after: Duration, failure: @Sendable () async -> (any Error)?) = (
            after: PostgresReachability.probeDelay,
            failure: { await reachability.refusedWhileWaiting() ? StoreRefusesConnections() : nil }
        )
        let outcome = await withStoreDeadline(settings.timeout, giveUp: giveUp) {
            try await client.withConnection { connection in try await body(connection) }
        }
        switch outcome {
        case .success(let value):
            reachability.noteSuccess()
            return value
        case .failure(let error):
            let failure = Self.failure(error, operation: operation, logger: logger)
            if failure.code == .storeUnavailable { reachability.noteUnavailable() }
            throw failure
        }
    }

    /// ``perform(_:_:)`` inside `BEGIN … COMMIT` (rolled back when `body` throws).
    @discardableResult
    func transaction<T: Sendable>(
        _ operation: String, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws(GatewayError) -> T {
        let logger = logger
        return try await perform(operation) { connection in
            try await connection.withTransaction(logger: logger) { connection in try await body(connection) }
        }
    }

    /// Runs `call` on one pooled connection, awaiting each statement; inside `BEGIN … COMMIT` when the call
    /// must commit together (a ``StoreAtomicity/transactionWhereFree`` call lets each statement commit).
    func run<Value: Sendable>(_ call: StoreCall<Value>) async throws(GatewayError) -> Value {
        try await StoreTracing.traced(call.operation, system: "postgresql") { () throws(GatewayError) in
            try await runUntraced(call)
        }
    }

    private func runUntraced<Value: Sendable>(_ call: StoreCall<Value>) async throws(GatewayError) -> Value {
        let (logger, counts) = (logger, callCounts)
        let inTransaction = call.atomicity == .transaction
        let body: @Sendable (PostgresConnection) async throws -> Value = { connection in
            var statements = 0
            defer {
                counts.record(call.operation, statements: statements)
                // Outside a transaction each statement commits by itself.
                if !inTransaction { counts.recordCommits(statements) }
            }
            return try await Self.run(call, on: connection, logger: logger, statements: &statements)
        }
        do {
            guard inTransaction else { return try await perform(call.operation, body) }
            let value = try await transaction(call.operation, body)
            counts.recordCommits()
            return value
        } catch  where error.message == Self.duplicateMessage {
            throw call.duplicate ?? error
        }
    }

    private static func run<Value>(
        _ call: StoreCall<Value>, on connection: PostgresConnection, logger: Logger, statements: inout Int
    ) async throws -> Value {
        var step = try call.start()
        while true {
            switch step {
            case .done(let value):
                return value
            case .exclusive(.eventLog, let next):
                statements += 1
                _ = try await connection.execute(lockEventLog, [.integer(eventLogLockKey)], logger: logger)
                step = next
            case .run(let statement, let values, let next):
                statements += 1
                step = try next(
                    PostgresAnswer(result: try await connection.execute(statement.postgres, values, logger: logger)))
            }
        }
    }

    /// The advisory lock every event insert takes (held to commit): event sequence numbers are then handed
    /// out in commit order, so a reader that saw sequence n never later finds a new event below n.
    static let eventLogLockKey: Int64 = 0x6761_7465_7761_7902
    private static let lockEventLog = "SELECT pg_advisory_xact_lock($1)"

    // MARK: - Failures

    static let duplicateMessage = "duplicate key"

    /// SQLSTATEs that mean "the server cannot serve now" rather than "this request is wrong": connection
    /// exceptions (class 08), shutdown and startup (57P01-57P03), too many connections, statement and
    /// lock timeouts (57014, 55P03), serialization failures and deadlocks (40001, 40P01).
    static func isUnavailable(sqlState: String) -> Bool {
        sqlState.hasPrefix("08") || sqlState.hasPrefix("53")
            || ["57P01", "57P02", "57P03", "57014", "55P03", "40001", "40P01"].contains(sqlState)
    }

    /// Logs what went wrong (for operators) and returns the error API clients may see: `store_unavailable`
    /// (503, retryable) when the server is unreachable or slow, `internal` for anything else.
    static func failure(_ error: any Error, operation: String, logger: Logger) -> GatewayError {
        if let error = error as? GatewayError { return error }
        // withTransaction wraps what failed (BEGIN, the body, COMMIT or ROLLBACK): judge the first cause.
        if let wrapped = error as? PostgresTransactionError,
            let cause = wrapped.beginError ?? wrapped.closureError ?? wrapped.commitError ?? wrapped.rollbackError
        {
            return failure(cause, operation: operation, logger: logger)
        }
        var unavailable = true
        var detail = String(describing: type(of: error))
        if let error = error as? PSQLError {
            detail = "\(error.code)"
            if let state = error.serverInfo?[.sqlState] {
                detail += " \(state): \(error.serverInfo?[.message] ?? "")"
                if state == "23505" {
                    logger.debug("duplicate key", metadata: ["store.operation": "\(operation)"])
                    return GatewayError(.internal, duplicateMessage)
                }
                unavailable = isUnavailable(sqlState: state)
            } else {
                unavailable = ![
                    .messageDecodingFailure, .unexpectedBackendMessage, .invalidCommandTag, .tooManyParameters,
                ]
                .contains(error.code)
            }
        } else if error is StoreDeadlineExceeded {
            detail = "no answer within the store deadline"
        } else if error is StoreRefusesConnections {
            detail = "the server refuses connections"
        } else if error is StoreError || error is PostgresDecodingError {
            detail = "\(error)"
            unavailable = false
        }
        logger.error(
            unavailable ? "store unavailable" : "storage failure",
            metadata: ["store.operation": "\(operation)", "store.error": "\(detail)"])
        return unavailable
            ? GatewayError(.storeUnavailable, "The store is unavailable; retry shortly.")
            : GatewayError(.internal, "storage failure")
    }
}
