import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

@testable import gateway

/// What a gateway of the first schema version wrote, for the SQL stores' upgrade tests: a database left at an
/// earlier version must open with every later version applied, and its rows must read back as before.
enum StoreUpgradeFixtures {
    static let record = StoreConformance.identityRecord()
    static let events = [
        VerificationEvent(verificationID: record.id, kind: .started, at: StoreConformance.epoch, detail: ["a": "1"]),
        VerificationEvent(verificationID: record.id, kind: .checked, at: StoreConformance.epoch + 1),
    ]
    static let completed = IdempotencyKey(scope: "key_old", key: "completed")
    /// Claimed before claims had a lease or a stage: taken as having called a vendor.
    static let running = IdempotencyKey(scope: "key_old", key: "running")

    /// The statements that write those rows with the first version's columns only.
    static func oldRows() throws -> [(StoreStatement, [StoreValue])] {
        let columns = RecordRows.columnNames.prefix(21)
        let insertRecord = StoreStatement(
            "INSERT INTO verifications (\(columns.joined(separator: ", "))) VALUES (\(StoreStatement.parameters(21)))")
        let insertKey = StoreStatement(
            """
            INSERT INTO idempotency_keys (scope, key, fingerprint, created_at, status, body)
            VALUES ($1, $2, $3, $4, $5, $6)
            """)
        let insertEvent = StoreStatement(
            "INSERT INTO verification_events (verification_id, kind, at, detail) VALUES ($1, $2, $3, $4)")
        let keyValues: (IdempotencyKey, StoreValue, StoreValue) -> [StoreValue] = { key, status, body in
            [.text(key.scope), .text(key.key), .text("fp"), .date(StoreConformance.epoch), status, body]
        }
        return [
            (insertRecord, Array(try RecordRows.values(of: record).prefix(columns.count))),
            (insertKey, keyValues(completed, .int(201), .blob(Data("done".utf8)))),
            (insertKey, keyValues(running, .null, .null)),
        ]
            + (try events.map { event in
                let values: [StoreValue] = [
                    .text(event.verificationID), .text(event.kind.rawValue), .date(event.at),
                    .text(try StoreJSON.text(event.detail)),
                ]
                return (insertEvent, values)
            })
    }

    /// What a store opened on the upgraded database must answer.
    static func expectUpgraded(_ store: any VerificationStore) async throws {
        #expect(try await store.record(id: record.id) == record)
        #expect(try await store.events(verificationID: record.id) == events)
        #expect(
            try await StoreConformance.claim(store, completed, "fp", token: "new")
                == .replay(StoredResponse(status: 201, body: Data("done".utf8))))
        #expect(
            try await StoreConformance.claim(store, running, "fp", token: "new")
                == .takenOver(IdempotencyProgress(stage: .vendorCallBegun)))
        let next = StoreConformance.nextVersion(of: record)
        #expect(try await store.update(next))
        #expect(try await store.record(id: record.id) == next)
    }
}
