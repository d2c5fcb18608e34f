import Foundation
import GatewayCore

/// `api_keys` rows (migration 6): the keys `gateway keys` manages.
extension SQLiteVerificationStore: APIKeyStore {
    func apiKey(hash: String) async throws(GatewayError) -> APIKey? {
        try await storedKeys(where: "hash = ? AND revoked_at IS NULL", [.text(hash.lowercased())]).first?.key
    }

    func insertAPIKey(_ stored: StoredAPIKey) async throws(GatewayError) {
        try await perform("insert api key") { (connection) throws(SQLiteError) in
            var countries = SQLiteValue.null
            if let list = stored.key.countries { countries = .text(try Self.json(list.sorted())) }
            try connection.run(
                """
                INSERT INTO api_keys (id, hash, name, scopes, countries, created_at, revoked_at, starts_per_hour)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .text(stored.key.id), .text(stored.hash), .text(stored.key.name),
                    .text(try Self.json(stored.key.scopes.map(\.rawValue).sorted())),
                    countries,
                    .date(stored.createdAt), stored.revokedAt.map(SQLiteValue.date) ?? .null,
                    stored.key.startsPerHour.map(SQLiteValue.int) ?? .null,
                ])
        }
    }

    func apiKeys() async throws(GatewayError) -> [StoredAPIKey] {
        try await storedKeys(where: "1 = 1", [])
    }

    func revokeAPIKey(id: String, at: Date) async throws(GatewayError) -> Bool {
        try await perform("revoke api key") { (connection) throws(SQLiteError) -> Bool in
            try connection.run(
                "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", [.date(at), .text(id)]) == 1
        }
    }

    private func storedKeys(where condition: String, _ values: [SQLiteValue]) async throws(GatewayError)
        -> [StoredAPIKey]
    {
        try await perform("api keys") { (connection) throws(SQLiteError) in
            try connection.query(
                """
                SELECT id, hash, name, scopes, countries, created_at, revoked_at, starts_per_hour FROM api_keys
                WHERE \(condition) ORDER BY created_at, id
                """, values
            ) { (row) throws(SQLiteError) -> StoredAPIKey in
                let scopes = try Self.decodeJSON([String].self, row.text(3), what: "api key scopes")
                    .compactMap(APIKey.Scope.init(rawValue:))
                let countries = try row.text(4).map { (text) throws(SQLiteError) in
                    Set(try Self.decodeJSON([String].self, text, what: "api key countries"))
                }
                return StoredAPIKey(
                    key: APIKey(
                        id: row.text(0) ?? "", name: row.text(2) ?? "", scopes: Set(scopes), countries: countries,
                        startsPerHour: row.int64(7).map { Int($0) }),
                    hash: row.text(1) ?? "", createdAt: Date(timeIntervalSince1970: row.double(5) ?? 0),
                    revokedAt: row.double(6).map(Date.init(timeIntervalSince1970:)))
            }
        }
    }
}
