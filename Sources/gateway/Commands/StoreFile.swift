import Foundation

/// The SQLite store of a `--data-dir`, for the commands that read one.
enum StoreFile {
    /// A `--data-dir` that holds no gateway store.
    struct Missing: Error, CustomStringConvertible, LocalizedError {
        let file: String
        let dataDirectory: String

        var description: String {
            "no gateway store at \(file) (is --data-dir \(dataDirectory) the gateway's data directory?)"
        }

        var errorDescription: String? { description }
    }

    /// `<data-dir>/gateway.sqlite` when it exists. Opening a store makes the directory and an empty store,
    /// so a command that only reads one checks first: a mistyped `--data-dir` is an error (exit 1), not an
    /// empty answer and a new directory.
    static func existing(dataDirectory: String) throws(Missing) -> String {
        let file = URL(fileURLWithPath: dataDirectory, isDirectory: true).appendingPathComponent("gateway.sqlite").path
        guard FileManager.default.fileExists(atPath: file) else {
            throw Missing(file: file, dataDirectory: dataDirectory)
        }
        return file
    }
}
