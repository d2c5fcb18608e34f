import Foundation
import GatewayCore

/// How a ``VerificationRecord`` maps to a `verifications` row, in both stores: scalars in columns, maps and
/// lists as JSON text (``StoreJSON``), dates as Unix seconds, flags as 0 and 1.
enum RecordRows {
    static let columnNames = [
        "id", "destination_kind", "destination_value", "channel", "provider_id", "provider_reference",
        "provider_state", "status", "attempts", "max_attempts", "sends", "created_at", "updated_at", "expires_at",
        "content_language", "locales", "experiment_arm", "client_reference", "metadata", "api_key_id", "version",
        "route", "experiment", "failovers", "test_number", "next_action", "fallback_channels", "challenge_attempts",
        "token_pending", "pending_tokens", "check_lease_until", "status_reason", "check_lease_owner",
        "check_lease_attempt", "client_secret_hash", "adaptive_context", "country", "destination_masked",
        "risk",
    ]
    static let columns = columnNames.joined(separator: ", ")
    /// `column = $n` for every column but the id: $1 is the id, $2 … $N follow ``columnNames``, so an
    /// UPDATE binds the same values as an INSERT, then the expected version as $N+1.
    static let assignments = columnNames.enumerated().dropFirst()
        .map { "\($0.element) = $\($0.offset + 1)" }
        .joined(separator: ", ")

    /// The statements a start or check runs.
    static let selectByID = StoreStatement("SELECT \(columns) FROM verifications WHERE id = $1")
    static let updateByVersion = StoreStatement(
        "UPDATE verifications SET \(assignments) WHERE id = $1 AND version = $\(columnNames.count + 1)")
    static let insert = StoreStatement(
        "INSERT INTO verifications (\(columns)) VALUES (\(StoreStatement.parameters(columnNames.count)))")

    /// The record's column values, in ``columnNames`` order.
    static func values(of record: VerificationRecord) throws(StoreError) -> [StoreValue] {
        let destinationKind: String
        switch record.destination {
        case .phone: destinationKind = "phone"
        case .email: destinationKind = "email"
        case .identity: destinationKind = "identity"
        case .anonymized: destinationKind = "anonymized"
        }
        var (stored, masked) = (record.destination.value, StoreValue.null)
        if case .anonymized(let form, let digest) = record.destination { (stored, masked) = (digest, .text(form)) }
        var nextAction = StoreValue.null
        if let action = record.nextAction { nextAction = .text(try StoreJSON.text(action)) }
        return [
            .text(record.id),
            .text(destinationKind),
            .text(stored),
            .text(record.channel.rawValue),
            .text(record.providerID),
            .optionalText(record.providerReference),
            .text(try StoreJSON.text(record.providerState)),
            .text(record.status.rawValue),
            .int(record.attempts),
            .int(record.maxAttempts),
            .int(record.sends),
            .date(record.createdAt),
            .date(record.updatedAt),
            .date(record.expiresAt),
            .optionalText(record.contentLanguage),
            .text(try StoreJSON.text(record.locales)),
            .optionalText(record.experimentArm),
            .optionalText(record.clientReference),
            .text(try StoreJSON.text(record.metadata)),
            .optionalText(record.apiKeyID),
            .int(record.version),
            .optionalText(record.route),
            .optionalText(record.experiment),
            .text(try StoreJSON.text(record.failovers)),
            .flag(record.isTestNumber),
            nextAction,
            .text(try StoreJSON.text(record.fallbackChannels)),
            .int(record.challengeAttempts),
            .flag(record.tokenPending),
            .text(try StoreJSON.text(record.pendingTokens)),
            .optionalDate(record.checkLeaseUntil),
            .optionalText(record.statusReason),
            .optionalText(record.checkLeaseOwner),
            .flag(record.checkLeaseHoldsAttempt),
            .optionalText(record.clientSecretHash),
            .optionalText(record.adaptiveContext),
            // Not read back: the record has its number. Kept so the console counts by country in SQL.
            .optionalText(record.destination.phoneNumber?.policyRegion),
            masked,
            // NULL for the verifications the risk step marked nothing on: nearly all of them.
            record.risk.isEmpty ? .null : .text(try StoreJSON.text(record.risk)),
        ]
    }

    /// Reads a row selected with ``columns``.
    static func record(from row: any StoreRow) throws(StoreError) -> VerificationRecord {
        guard let id = row.text(0) else { throw StoreError.undecodableRow("verification row without id") }
        func required(_ column: Int32) throws(StoreError) -> String {
            guard let value = row.text(column) else {
                throw StoreError.undecodableRow("verification \(id): \(columnNames[Int(column)]) is NULL")
            }
            return value
        }
        func integer(_ column: Int32) throws(StoreError) -> Int {
            guard let value = row.int64(column) else {
                throw StoreError.undecodableRow("verification \(id): \(columnNames[Int(column)]) is NULL")
            }
            return Int(value)
        }
        let destinationValue = try required(2)
        let destination: Destination
        switch try required(1) {
        case "phone":
            do {
                destination = .phone(try PhoneNumber(parsing: destinationValue))
            } catch {
                throw StoreError.undecodableRow("verification \(id): stored phone number does not parse")
            }
        case "email": destination = .email(destinationValue)
        case "identity": destination = .identity(destinationValue)
        // destination_value holds the keyed hash (``RetentionRows``), destination_masked what is shown.
        case "anonymized": destination = .anonymized(masked: row.text(37) ?? "***", digest: destinationValue)
        default: throw StoreError.undecodableRow("verification \(id): unknown destination kind")
        }
        guard let channel = Channel(rawValue: try required(3)) else {
            throw StoreError.undecodableRow("verification \(id): unknown channel")
        }
        guard let status = VerificationStatus(rawValue: try required(7)) else {
            throw StoreError.undecodableRow("verification \(id): unknown status")
        }
        var record = VerificationRecord(
            id: id,
            destination: destination,
            channel: channel,
            providerID: try required(4),
            providerReference: row.text(5),
            providerState: try StoreJSON.decode(
                ProviderState.self, row.text(6), what: "verification \(id) provider_state"),
            status: status,
            attempts: try integer(8),
            maxAttempts: try integer(9),
            sends: try integer(10),
            createdAt: try row.date(11, "verification \(id) created_at"),
            updatedAt: try row.date(12, "verification \(id) updated_at"),
            expiresAt: try row.date(13, "verification \(id) expires_at"),
            contentLanguage: row.text(14),
            locales: try StoreJSON.decode([String].self, row.text(15), what: "verification \(id) locales"),
            experimentArm: row.text(16),
            clientReference: row.text(17),
            metadata: try StoreJSON.decode([String: String].self, row.text(18), what: "verification \(id) metadata"),
            apiKeyID: row.text(19),
            version: try integer(20))
        record.route = row.text(21)
        record.experiment = row.text(22)
        record.failovers = try StoreJSON.decode([String].self, row.text(23), what: "verification \(id) failovers")
        record.isTestNumber = row.flag(24)
        if let action = row.text(25) {
            record.nextAction = try StoreJSON.decode(NextAction.self, action, what: "verification \(id) next_action")
        }
        record.fallbackChannels = try StoreJSON.decode(
            [Channel].self, row.text(26), what: "verification \(id) fallback_channels")
        record.challengeAttempts = Int(row.int64(27) ?? 0)
        record.tokenPending = row.flag(28)
        record.pendingTokens = try StoreJSON.decode(
            [String: JSONValue].self, row.text(29), what: "verification \(id) pending_tokens")
        record.checkLeaseUntil = row.optionalDate(30)
        record.statusReason = row.text(31)
        record.checkLeaseOwner = row.text(32)
        record.checkLeaseHoldsAttempt = row.flag(33)
        record.clientSecretHash = row.text(34)
        record.adaptiveContext = row.text(35)
        if let risk = row.text(38) {
            record.risk = try StoreJSON.decode([String: String].self, risk, what: "verification \(id) risk")
        }
        return record
    }
}
