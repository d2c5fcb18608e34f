import Synchronization

/// The idle read-only connections of ``SQLiteDatabase/read(_:)``, opened as calls need them: as many as reads
/// ran at once, at most ``idleLimit`` kept.
final class SQLiteReaders: Sendable {
    /// A reader is used by one call at a time, taken from and given back to the pool.
    final class Reader: @unchecked Sendable {
        let connection: SQLiteConnection
        init(_ connection: SQLiteConnection) { self.connection = connection }
    }

    static let idleLimit = 8
    let path: String
    private let idle = Mutex<(readers: [Reader], closed: Bool)>(([], false))

    init(path: String) { self.path = path }

    /// An idle reader, or a new one; nil once closed or when none can be opened.
    func take() -> Reader? {
        let taken = idle.withLock { idle -> (reader: Reader?, closed: Bool) in
            (idle.readers.popLast(), idle.closed)
        }
        if taken.closed { return nil }
        if let reader = taken.reader { return reader }
        return try? Reader(SQLiteConnection(path: path, synchronous: .normal, reader: true))
    }

    func give(back reader: Reader) {
        let keep = idle.withLock { idle -> Bool in
            guard !idle.closed, idle.readers.count < Self.idleLimit else { return false }
            idle.readers.append(reader)
            return true
        }
        if !keep { reader.connection.close() }
    }

    var idleCount: Int { idle.withLock { $0.readers.count } }

    func close() {
        let readers = idle.withLock { idle -> [Reader] in
            idle.closed = true
            defer { idle.readers = [] }
            return idle.readers
        }
        for reader in readers { reader.connection.close() }
    }
}
