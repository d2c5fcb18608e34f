import Foundation

/// A row read back from a SQL store, by column index: what the record and delivery decoders need, so
/// SQLite and PostgreSQL share one mapping (``SQLiteVerificationStore/record(from:)``).
protocol StoreRow {
    func isNull(_ column: Int32) -> Bool
    func text(_ column: Int32) -> String?
    func int64(_ column: Int32) -> Int64?
    func double(_ column: Int32) -> Double?
    func blob(_ column: Int32) -> Data?
}

extension SQLiteStatement: StoreRow {}
