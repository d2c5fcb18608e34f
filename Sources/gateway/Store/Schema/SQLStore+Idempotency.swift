import Foundation
import GatewayCore

/// Idempotency claims (``IdempotencyStore``) and the instance heartbeats that name lease owners
/// (``InstanceHeartbeatStore``).
extension SQLStore {
    /// A new key is one insert; a lapsed claim, or one whose owner the caller found dead, is taken over by one
    /// conditional update, which the row lock makes exact across instances and processes: of two takers the
    /// second finds the lease renewed under another owner and changes nothing. SQLite runs the statements in
    /// one transaction (one commit); PostgreSQL needs none.
    func claimIdempotencyKey(
        _ key: IdempotencyKey, fingerprint: String, token: String, owner: String?, at: Date, lease: TimeInterval,
        deadOwner: String?, progress: IdempotencyProgress
    ) async throws(GatewayError) -> IdempotencyClaim {
        let claim = ClaimRows.Claim(
            key: key, fingerprint: fingerprint, token: token, owner: owner, at: at, until: at.addingTimeInterval(lease),
            deadOwner: deadOwner, progress: progress)
        return try await run(
            StoreCall("claim_idempotency_key", atomicity: .transactionWhereFree) {
                ClaimRows.steps(of: claim, turns: 3)
            })
    }

    func recordIdempotencyProgress(
        _ key: IdempotencyKey, token: String, progress: IdempotencyProgress, until: Date
    ) async throws(GatewayError) -> Bool {
        try await change(
            "record_idempotency_progress", ClaimRows.progress,
            ClaimRows.progressValues(key, token: token, progress: progress, until: until))
    }

    @discardableResult
    func completeIdempotencyKey(
        _ key: IdempotencyKey, token: String, response: StoredResponse
    ) async throws(GatewayError) -> Bool {
        try await change(
            "complete_idempotency_key", ClaimRows.complete,
            [.int(response.status), .blob(response.body), .text(key.scope), .text(key.key), .text(token)])
    }

    func releaseIdempotencyKey(_ key: IdempotencyKey, token: String) async throws(GatewayError) {
        try await change(
            "release_idempotency_key", ClaimRows.release, [.text(key.scope), .text(key.key), .text(token)])
    }

    func abandonIdempotencyKey(_ key: IdempotencyKey, token: String, at: Date) async throws(GatewayError) {
        try await change(
            "abandon_idempotency_key", ClaimRows.abandon, [.date(at), .text(key.scope), .text(key.key), .text(token)])
    }

    /// Served by the `created_at` index; bounded, so one call never holds the file or many row locks for long.
    func pruneIdempotencyKeys(claimedBefore before: Date, limit: Int) async throws(GatewayError) -> Int {
        try await run("prune_idempotency_keys", ClaimRows.prune, [.date(before), .int(max(0, limit))]) { $0.changed }
    }

    /// SQLite writes a heartbeat without a sync of its own: one lost to a power loss only makes the instance
    /// look dead a little sooner, and every instance on the file died with it anyway.
    func heartbeat(_ instance: GatewayInstance) async throws(GatewayError) {
        try await change(
            "heartbeat", durability: .provisional, InstanceRows.heartbeat,
            [
                .text(instance.id), .text(instance.host), .int(instance.pid), .date(instance.startedAt),
                .date(instance.heartbeatAt),
            ])
    }

    func instances() async throws(GatewayError) -> [GatewayInstance] {
        try await rows("instances", InstanceRows.all) { (row) throws(StoreError) in
            GatewayInstance(
                id: row.text(0) ?? "", host: row.text(1) ?? "", pid: row.int(2) ?? 0,
                startedAt: try row.date(3, "instance started_at"), heartbeatAt: try row.date(4, "instance heartbeat_at")
            )
        }
    }

    func removeInstance(id: String) async throws(GatewayError) {
        try await change("remove_instance", InstanceRows.remove, [.text(id)])
    }
}

/// The statements of `idempotency_keys`.
enum ClaimRows {
    static let insert = StoreStatement(
        """
        INSERT INTO idempotency_keys
            (scope, key, fingerprint, created_at, token, owner, lease_until, stage, verification_id, provider_id,
            call_begun_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
        ON CONFLICT (scope, key) DO NOTHING
        """)
    static let takeOver = StoreStatement(
        """
        UPDATE idempotency_keys SET token = $3, owner = $7, lease_until = $4, created_at = $6
        WHERE scope = $1 AND key = $2 AND fingerprint = $5 AND status IS NULL
            AND (lease_until IS NULL OR lease_until <= $6 OR (CAST($8 AS TEXT) IS NOT NULL AND owner = $8))
        RETURNING stage, verification_id, provider_id, call_begun_at
        """)
    static let stored = StoreStatement(
        "SELECT fingerprint, status, body, owner FROM idempotency_keys WHERE scope = $1 AND key = $2")
    static let progress = StoreStatement(
        """
        UPDATE idempotency_keys
        SET stage = $1, verification_id = $2, provider_id = $7, call_begun_at = $8, lease_until = $3
        WHERE scope = $4 AND key = $5 AND token = $6 AND status IS NULL
        """)
    static func progressValues(
        _ key: IdempotencyKey, token: String, progress: IdempotencyProgress, until: Date
    ) -> [StoreValue] {
        [
            .int(progress.stage.rawValue), .optionalText(progress.verificationID), .date(until), .text(key.scope),
            .text(key.key), .text(token), .optionalText(progress.providerID), .optionalDate(progress.callBegunAt),
        ]
    }
    static let complete = StoreStatement(
        """
        UPDATE idempotency_keys SET status = $1, body = $2, lease_until = NULL
        WHERE scope = $3 AND key = $4 AND token = $5
        """)
    static let release = StoreStatement(
        "DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND token = $3 AND status IS NULL")
    static let abandon = StoreStatement(
        """
        UPDATE idempotency_keys SET lease_until = $1
        WHERE scope = $2 AND key = $3 AND token = $4 AND status IS NULL AND lease_until > $1
        """)
    static let prune = StoreStatement(
        """
        DELETE FROM idempotency_keys WHERE (scope, key) IN (
            SELECT scope, key FROM idempotency_keys
            WHERE created_at < $1 AND (status IS NOT NULL OR lease_until IS NULL OR lease_until < $1)
            LIMIT $2 \(SQLDialect.skipLockedRows))
        """)

    /// What a claim asks for.
    struct Claim: Sendable {
        var key: IdempotencyKey
        var fingerprint: String
        var token: String
        var owner: String?
        var at: Date
        var until: Date
        var deadOwner: String?
        var progress: IdempotencyProgress
    }

    /// Insert, else take over a lapsed claim (or a dead owner's), else read what is there. A key released
    /// between the insert and the read (possible only between instances) is claimed again on the next of
    /// `turns`.
    static func steps(of claim: Claim, turns: Int) -> StoreStep<IdempotencyClaim> {
        let (key, fingerprint) = (claim.key, claim.fingerprint)
        let insertValues: [StoreValue] = [
            .text(key.scope), .text(key.key), .text(fingerprint), .date(claim.at), .text(claim.token),
            .optionalText(claim.owner), .date(claim.until), .int(claim.progress.stage.rawValue),
            .optionalText(claim.progress.verificationID), .optionalText(claim.progress.providerID),
            .optionalDate(claim.progress.callBegunAt),
        ]
        let takeOverValues: [StoreValue] = [
            .text(key.scope), .text(key.key), .text(claim.token), .date(claim.until), .text(fingerprint),
            .date(claim.at), .optionalText(claim.owner), .optionalText(claim.deadOwner),
        ]
        return .run(insert, insertValues) { inserted in
            if inserted.changed == 1 { return .done(.claimed) }
            return .run(takeOver, takeOverValues) { takenOver in
                let progress = try takenOver.first { row in
                    IdempotencyProgress(
                        stage: IdempotencyProgress.Stage(rawValue: row.int(0) ?? 1) ?? .vendorCallBegun,
                        verificationID: row.text(1), providerID: row.text(2), callBegunAt: row.optionalDate(3))
                }
                if let progress { return .done(.takenOver(progress)) }
                return .run(stored, [.text(key.scope), .text(key.key)]) { answer in
                    let row = try answer.first {
                        (fingerprint: $0.text(0), status: $0.int(1), body: $0.blob(2), owner: $0.text(3))
                    }
                    guard let row else {
                        guard turns > 1 else { throw StoreError("idempotency key neither inserted nor found") }
                        return steps(of: claim, turns: turns - 1)
                    }
                    guard row.fingerprint == fingerprint else { return .done(.mismatch) }
                    guard let status = row.status else { return .done(.inProgress(owner: row.owner)) }
                    return .done(.replay(StoredResponse(status: status, body: row.body ?? Data())))
                }
            }
        }
    }
}

/// The statements of `gateway_instances`.
enum InstanceRows {
    static let heartbeat = StoreStatement(
        """
        INSERT INTO gateway_instances (id, host, pid, started_at, heartbeat_at) VALUES ($1, $2, $3, $4, $5)
        ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at
        """)
    static let all = StoreStatement("SELECT id, host, pid, started_at, heartbeat_at FROM gateway_instances ORDER BY id")
    static let remove = StoreStatement("DELETE FROM gateway_instances WHERE id = $1")
}
