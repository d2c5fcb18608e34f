import Foundation
import Logging
import PostgresNIO

/// Brings a PostgreSQL schema to the newest of the one schema's PostgreSQL versions
/// (``StoreSchema/versions(_:)``), each applied once and recorded in `schema_migrations`, under an advisory
/// lock so that instances starting together apply each version once.
enum PostgresMigration {
    /// Every version, oldest first.
    static let all = StoreSchema.versions(.postgres)

    /// The advisory lock that serializes migrations: several instances starting at once apply each step once.
    static let lockKey: Int64 = 0x6761_7465_7761_7901

    /// The migration lock of `schema`: ``lockKey`` for the connection's own search path (every gateway
    /// instance), one of its own for a named schema, so stores in separate schemas (the tests make one per
    /// store, dozens at once) do not queue behind each other's migrations, nor time out on the lock.
    static func lockKey(forSchema schema: String?) -> Int64 {
        guard let schema else { return lockKey }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a: stable across processes, unlike Hasher
        for byte in schema.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return lockKey ^ Int64(bitPattern: hash)
    }

    /// Brings the schema up to the newest version in one transaction under ``lockKey``. Returns the version.
    @discardableResult
    static func migrate(_ client: PostgresClient, schema: String? = nil, logger: Logger, at now: Date = Date())
        async throws -> Int
    {
        if let schema,
            schema.isEmpty || !schema.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "_") })
        {
            throw StoreError("schema name \(schema) is not lower-case letters, digits and _")
        }
        return try await client.withTransaction(logger: logger) { connection in
            // The rows are read, so a lock that timed out fails here rather than as the next statement's
            // "transaction is aborted".
            _ = try await connection.execute(
                "SELECT pg_advisory_xact_lock($1)", [.integer(lockKey(forSchema: schema))], logger: logger)
            if let schema { _ = try await connection.execute("CREATE SCHEMA IF NOT EXISTS \(schema)", logger: logger) }
            _ = try await connection.execute(StoreSchema.migrationsTable.create(.postgres), logger: logger)
            let applied =
                try await connection.rows(StoreSchema.appliedVersion.postgres, logger: logger) { $0.int(0) ?? 0 }
                .first ?? 0
            let pending = try StoreSchema.pending(after: applied, .postgres)
            for version in pending {
                for statement in version.statements { _ = try await connection.execute(statement, logger: logger) }
                _ = try await connection.execute(
                    StoreSchema.recordVersion.postgres, [.int(version.version), .text(version.name), .date(now)],
                    logger: logger)
                logger.notice(
                    "store migrated",
                    metadata: ["store.schema_version": "\(version.version)", "store.step": "\(version.name)"])
            }
            return pending.last?.version ?? applied
        }
    }
}
