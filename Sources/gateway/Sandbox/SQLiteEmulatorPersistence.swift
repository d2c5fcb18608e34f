import Foundation
import GatewayCore
import Logging

/// The sandbox emulators' state in `sandbox/emulators.sqlite`: each emulator's tables (`emulator_rows`,
/// ``SQLiteEmulatorTable``), read and written per call, and the entities earlier versions saved one per
/// plugin and key (`emulator_state`), which emulators move into their tables when they are built. The state
/// survives a restart.
struct SQLiteEmulatorPersistence: EmulatorPersistence {
    let database: SQLiteDatabase
    let pluginID: String
    let logger: Logger

    /// Opens (or creates) the file shared by every plugin's emulator.
    static func open(_ file: URL, logger: Logger) -> SQLiteDatabase? {
        do {
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            // The emulators stand in for vendors: their state survives a restart, not a power loss.
            let database = try SQLiteDatabase(path: file.path, synchronous: .normal)
            try database.performSync { (connection) throws(SQLiteError) in
                try connection.execute(
                    """
                    CREATE TABLE IF NOT EXISTS emulator_state (
                        plugin TEXT NOT NULL,
                        key TEXT NOT NULL,
                        value BLOB NOT NULL,
                        PRIMARY KEY (plugin, key)
                    ) WITHOUT ROWID
                    """)
                try SQLiteEmulatorTable.createSchema(connection)
            }
            return database
        } catch {
            logger.warning("sandbox state file not opened; emulators start empty", metadata: ["file": "\(file.path)"])
            return nil
        }
    }

    func load() -> [String: Data] {
        do {
            let rows = try database.performSync { (connection) throws(SQLiteError) in
                try connection.query(
                    "SELECT key, value FROM emulator_state WHERE plugin = ?", [.text(pluginID)]
                ) { (row) throws(SQLiteError) in (row.text(0) ?? "", row.blob(1) ?? Data()) }
            }
            return Dictionary(rows, uniquingKeysWith: { _, last in last })
        } catch {
            logger.warning("sandbox state not restored", metadata: ["plugin.id": "\(pluginID)"])
            return [:]
        }
    }

    func table(_ name: String) -> any EmulatorTable {
        SQLiteEmulatorTable(database: database, plugin: pluginID, name: name)
    }

    /// Written at once, on the file's queue (an emulator deleting the entities it moved into its tables
    /// while it is built).
    func save(_ changes: [String: Data?]) {
        do {
            try database.performSync(Self.write(changes, plugin: pluginID))
        } catch {
            logger.warning("sandbox state not saved", metadata: ["plugin.id": "\(pluginID)"])
        }
    }

    private static func write(
        _ changes: [String: Data?], plugin: String
    ) -> @Sendable (SQLiteConnection) throws(SQLiteError) -> Void {
        { (connection) throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) in
                for (key, value) in changes {
                    if let value {
                        try connection.run(
                            "INSERT INTO emulator_state (plugin, key, value) VALUES (?, ?, ?) "
                                + "ON CONFLICT (plugin, key) DO UPDATE SET value = excluded.value",
                            [.text(plugin), .text(key), .blob(value)])
                    } else {
                        try connection.run(
                            "DELETE FROM emulator_state WHERE plugin = ? AND key = ?", [.text(plugin), .text(key)])
                    }
                }
            }
        }
    }
}
