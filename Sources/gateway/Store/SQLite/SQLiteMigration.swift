import CSQLite
import Foundation

/// Brings a SQLite file to the newest of the one schema's SQLite versions (``StoreSchema/versions(_:)``),
/// each applied once and recorded in `schema_migrations`.
enum SQLiteMigration {
    /// Every version, oldest first.
    static let all = StoreSchema.versions(.sqlite)

    /// Applies the pending versions in one `BEGIN IMMEDIATE` transaction, so two processes opening a new file
    /// at once apply each exactly once. Returns the schema version.
    @discardableResult
    static func migrate(_ connection: SQLiteConnection, at now: Date = Date()) throws(SQLiteError) -> Int {
        try connection.transaction { () throws(SQLiteError) -> Int in
            try connection.execute(StoreSchema.migrationsTable.create(.sqlite))
            let applied =
                try connection.query(StoreSchema.appliedVersion.sqlite) { (row) throws(SQLiteError) in row.int(0) ?? 0 }
                .first ?? 0
            let pending: [SchemaVersion]
            do throws(StoreError) {
                pending = try StoreSchema.pending(after: applied, .sqlite)
            } catch {
                throw SQLiteError(code: SQLITE_ERROR, message: error.message)
            }
            // Statements without parameters, run once: through sqlite3_exec, not the statement cache.
            for version in pending {
                for statement in version.statements { try connection.execute(statement) }
                try connection.run(
                    StoreSchema.recordVersion.sqlite, [.int(version.version), .text(version.name), .date(now)])
            }
            return pending.last?.version ?? applied
        }
    }
}
