import Foundation
import GatewayCore

/// `api_keys` rows: the keys `gateway keys` manages (``APIKeyStore``), shared by every instance on the store.
extension SQLStore {
    func apiKey(hash: String) async throws(GatewayError) -> APIKey? {
        try await rows("api keys", KeyRows.byHash, [.text(hash.lowercased())], KeyRows.key(from:)).first?.key
    }

    func insertAPIKey(_ stored: StoredAPIKey) async throws(GatewayError) {
        try await run(StoreCall("insert api key") { .run(KeyRows.insert, try KeyRows.values(stored), then: .done(())) })
    }

    func apiKeys() async throws(GatewayError) -> [StoredAPIKey] {
        try await rows("api keys", KeyRows.all, [], KeyRows.key(from:))
    }

    func revokeAPIKey(id: String, at: Date) async throws(GatewayError) -> Bool {
        try await change("revoke api key", KeyRows.revoke, [.date(at), .text(id)])
    }
}

/// The statements of `api_keys`, and how a ``StoredAPIKey`` maps to a row: scopes and countries as sorted
/// JSON lists.
enum KeyRows {
    private static let select =
        "SELECT id, hash, name, scopes, countries, created_at, revoked_at, starts_per_hour FROM api_keys"
    static let byHash = StoreStatement("\(select) WHERE hash = $1 AND revoked_at IS NULL ORDER BY created_at, id")
    static let all = StoreStatement("\(select) ORDER BY created_at, id")
    static let insert = StoreStatement(
        """
        INSERT INTO api_keys (id, hash, name, scopes, countries, created_at, revoked_at, starts_per_hour)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
        """)
    static let revoke = StoreStatement("UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL")

    static func values(_ stored: StoredAPIKey) throws(StoreError) -> [StoreValue] {
        var countries = StoreValue.null
        if let list = stored.key.countries { countries = .text(try StoreJSON.text(list.sorted())) }
        return [
            .text(stored.key.id), .text(stored.hash), .text(stored.key.name),
            .text(try StoreJSON.text(stored.key.scopes.map(\.rawValue).sorted())), countries,
            .date(stored.createdAt), .optionalDate(stored.revokedAt), .optionalInt(stored.key.startsPerHour),
        ]
    }

    static func key(from row: any StoreRow) throws(StoreError) -> StoredAPIKey {
        let scopes = try StoreJSON.decode([String].self, row.text(3), what: "api key scopes")
            .compactMap(APIKey.Scope.init(rawValue:))
        let countries = try row.text(4).map { (text) throws(StoreError) in
            Set(try StoreJSON.decode([String].self, text, what: "api key countries"))
        }
        return StoredAPIKey(
            key: APIKey(
                id: row.text(0) ?? "", name: row.text(2) ?? "", scopes: Set(scopes), countries: countries,
                startsPerHour: row.int(7)),
            hash: row.text(1) ?? "", createdAt: Date(timeIntervalSince1970: row.double(5) ?? 0),
            revokedAt: row.optionalDate(6))
    }
}
