import Foundation
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// A PostgreSQL row read by column index (``StoreRow``), with the column types of ``PostgresMigration``:
/// `TEXT`, `BIGINT`, `DOUBLE PRECISION`, `BYTEA`.
struct PostgresStoreRow: StoreRow {
    let row: PostgresRandomAccessRow

    private func cell(_ column: Int32) -> PostgresCell? {
        let index = Int(column)
        guard index >= 0, index < row.count else { return nil }
        return row[index]
    }

    func isNull(_ column: Int32) -> Bool { cell(column)?.bytes == nil }

    func text(_ column: Int32) -> String? {
        guard let cell = cell(column), cell.bytes != nil else { return nil }
        return try? cell.decode(String.self)
    }

    func int64(_ column: Int32) -> Int64? {
        guard let cell = cell(column), cell.bytes != nil else { return nil }
        if let value = try? cell.decode(Int64.self) { return value }
        return (try? cell.decode(Int32.self)).map(Int64.init)
    }

    func double(_ column: Int32) -> Double? {
        guard let cell = cell(column), cell.bytes != nil else { return nil }
        return try? cell.decode(Double.self)
    }

    func blob(_ column: Int32) -> Data? {
        guard let cell = cell(column), cell.bytes != nil else { return nil }
        return try? cell.decode(Data.self)
    }
}

extension PostgresConnection {
    /// Runs `sql` (PostgreSQL's text of a statement, `$n` parameters) with `values` bound: its rows and the
    /// rows it changed (the command tag's count).
    func execute(_ sql: String, _ values: [StoreValue] = [], logger: Logger) async throws -> PostgresQueryResult {
        let query = PostgresQuery(unsafeSQL: sql, binds: try Self.bindings(values))
        let result: EventLoopFuture<PostgresQueryResult> = self.query(query, logger: logger)
        return try await result.get()
    }

    /// Runs `sql`, decoding each row.
    func rows<T>(
        _ sql: String, _ values: [StoreValue] = [], logger: Logger, _ decode: (PostgresStoreRow) throws -> T
    ) async throws -> [T] {
        try await execute(sql, values, logger: logger).rows.map {
            try decode(PostgresStoreRow(row: $0.makeRandomAccess()))
        }
    }

    static func bindings(_ values: [StoreValue]) throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values {
            switch value {
            case .text(let text): bindings.append(text)
            case .integer(let integer): bindings.append(integer)
            case .real(let real): bindings.append(real)
            case .blob(let data): try bindings.append(data)
            case .null: bindings.appendNull()
            }
        }
        return bindings
    }
}

/// A statement's answer, read in full before the next statement is sent.
struct PostgresAnswer: StoreAnswer {
    let result: PostgresQueryResult

    var changed: Int { result.metadata.rows ?? 0 }

    func rows<Row>(_ decode: (any StoreRow) throws -> Row) throws -> [Row] {
        try result.rows.map { try decode(PostgresStoreRow(row: $0.makeRandomAccess())) }
    }

    func first<Row>(_ decode: (any StoreRow) throws -> Row) throws -> Row? {
        try result.rows.first.map { try decode(PostgresStoreRow(row: $0.makeRandomAccess())) }
    }
}

/// A store operation that did not finish within its deadline.
struct StoreDeadlineExceeded: Error {}

/// The server refused a connection while an operation waited for the pool (``PostgresReachability``).
struct StoreRefusesConnections: Error {}

/// Runs `body` with a deadline without waiting for it past the deadline: a query stuck on a dead connection
/// is left to fail on its own (it is cancelled), and the caller gets ``StoreDeadlineExceeded`` at once.
/// With `giveUp`, a `body` still running after `giveUp.after` ends as soon as `giveUp.failure` names an error
/// (the server refuses connections), instead of at the deadline.
func withStoreDeadline<T: Sendable>(
    _ limit: Duration, giveUp: (after: Duration, failure: @Sendable () async -> (any Error)?)? = nil,
    _ body: @escaping @Sendable () async throws -> T
) async -> Result<T, any Error> {
    let deadline = ContinuousClock.now + limit
    return await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, any Error>, Never>) in
        let gate = ResumeOnce(continuation)
        let work = Task {
            do {
                gate.resume(.success(try await body()))
            } catch {
                gate.resume(.failure(error))
            }
        }
        let timer = Task {
            if let giveUp, giveUp.after < limit {
                try? await Task.sleep(for: giveUp.after)
                guard !Task.isCancelled else { return }
                if let error = await giveUp.failure() {
                    if gate.resume(.failure(error)) { work.cancel() }
                    return
                }
            }
            try? await Task.sleep(until: deadline, clock: .continuous)
            guard !Task.isCancelled else { return }
            if gate.resume(.failure(StoreDeadlineExceeded())) { work.cancel() }
        }
        gate.onFinish(timer)
    }
}

/// Resumes a continuation once, whoever comes first; then cancels the deadline's timer.
private final class ResumeOnce<T: Sendable>: Sendable {
    private let state:
        Mutex<(continuation: CheckedContinuation<Result<T, any Error>, Never>?, timer: Task<Void, Never>?, done: Bool)>

    init(_ continuation: CheckedContinuation<Result<T, any Error>, Never>) {
        state = Mutex((continuation, nil, false))
    }

    @discardableResult
    func resume(_ result: Result<T, any Error>) -> Bool {
        let (continuation, timer) = state.withLock {
            state -> (CheckedContinuation<Result<T, any Error>, Never>?, Task<Void, Never>?) in
            guard let continuation = state.continuation else { return (nil, nil) }
            state.continuation = nil
            state.done = true
            let timer = state.timer
            state.timer = nil
            return (continuation, timer)
        }
        guard let continuation else { return false }
        timer?.cancel()
        continuation.resume(returning: result)
        return true
    }

    func onFinish(_ timer: Task<Void, Never>) {
        let cancelNow = state.withLock { state -> Bool in
            if state.done { return true }
            state.timer = timer
            return false
        }
        if cancelNow { timer.cancel() }
    }
}
