import Foundation
import GatewayCore
import Logging

/// The sandbox emulators' state as rows of `sandbox/emulators.sqlite` (one per plugin and key): a call
/// writes only the entities it changed, so it costs the same however many verifications the emulator
/// holds, and the state survives a restart.
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

    /// Written at once, outside the queue's groups and ahead of any save still queued: for changes that no
    /// queued save touches (an emulator's clean-up of its rows while it is built). Calls use ``enqueue(_:)``.
    func save(_ changes: [String: Data?]) {
        do {
            try database.performSync(Self.write(changes, plugin: pluginID))
        } catch {
            logger.warning("sandbox state not saved", metadata: ["plugin.id": "\(pluginID)"])
        }
    }

    /// Queued on the file's queue (in the order of the calls), so saves that wait together are committed
    /// together; the emulator awaits the answer outside its lock.
    func enqueue(_ changes: [String: Data?]) -> EmulatorSave {
        let submission = database.submit(Self.write(changes, plugin: pluginID))
        let logger = logger
        let plugin = pluginID
        return EmulatorSave {
            if case .failure = await submission.result() {
                logger.warning("sandbox state not saved", metadata: ["plugin.id": "\(plugin)"])
            }
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
