import Foundation
import GatewayCore

/// How a ``VerificationRecord`` maps to a `verifications` row: scalars in columns, maps and lists as
/// JSON text, dates as Unix seconds.
extension SQLiteVerificationStore {
    static let recordColumnNames = [
        "id", "destination_kind", "destination_value", "channel", "provider_id", "provider_reference",
        "provider_state", "status", "attempts", "max_attempts", "sends", "created_at", "updated_at", "expires_at",
        "content_language", "locales", "experiment_arm", "client_reference", "metadata", "api_key_id", "version",
        "route", "experiment", "failovers", "test_number", "next_action", "fallback_channels", "challenge_attempts",
        "token_pending", "pending_tokens", "check_lease_until", "status_reason", "check_lease_owner",
        "check_lease_attempt",
    ]
    static let recordColumns = recordColumnNames.joined(separator: ", ")
    static let recordPlaceholders = recordColumnNames.map { _ in "?" }.joined(separator: ", ")
    /// `column = ?n` for every column but the id: ?1 is the id, ?2 … ?N follow ``recordColumnNames``, so
    /// an UPDATE binds the same values as an INSERT, then the expected version as ?N+1.
    static let recordAssignments = recordColumnNames.enumerated().dropFirst()
        .map { "\($0.element) = ?\($0.offset + 1)" }
        .joined(separator: ", ")

    /// The statements a start or check runs, built once (the statement cache is keyed by their text).
    static let selectByID = "SELECT \(recordColumns) FROM verifications WHERE id = ?"
    static let updateByVersion =
        "UPDATE verifications SET \(recordAssignments) WHERE id = ?1 AND version = ?\(recordColumnNames.count + 1)"
    static let insertRecord = "INSERT INTO verifications (\(recordColumns)) VALUES (\(recordPlaceholders))"

    /// The record's column values, in ``recordColumnNames`` order.
    static func values(of record: VerificationRecord) throws(SQLiteError) -> [SQLiteValue] {
        let destinationKind: String
        switch record.destination {
        case .phone: destinationKind = "phone"
        case .email: destinationKind = "email"
        case .identity: destinationKind = "identity"
        }
        var nextAction = SQLiteValue.null
        if let action = record.nextAction { nextAction = .text(try json(action)) }
        return [
            .text(record.id),
            .text(destinationKind),
            .text(record.destination.value),
            .text(record.channel.rawValue),
            .text(record.providerID),
            .optionalText(record.providerReference),
            .text(try json(record.providerState)),
            .text(record.status.rawValue),
            .int(record.attempts),
            .int(record.maxAttempts),
            .int(record.sends),
            .date(record.createdAt),
            .date(record.updatedAt),
            .date(record.expiresAt),
            .optionalText(record.contentLanguage),
            .text(try json(record.locales)),
            .optionalText(record.experimentArm),
            .optionalText(record.clientReference),
            .text(try json(record.metadata)),
            .optionalText(record.apiKeyID),
            .int(record.version),
            .optionalText(record.route),
            .optionalText(record.experiment),
            .text(try json(record.failovers)),
            .int(record.isTestNumber ? 1 : 0),
            nextAction,
            .text(try json(record.fallbackChannels)),
            .int(record.challengeAttempts),
            .int(record.tokenPending ? 1 : 0),
            .text(try json(record.pendingTokens)),
            record.checkLeaseUntil.map(SQLiteValue.date) ?? .null,
            .optionalText(record.statusReason),
            .optionalText(record.checkLeaseOwner),
            .int(record.checkLeaseHoldsAttempt ? 1 : 0),
        ]
    }

    /// Reads a row selected with ``recordColumns``.
    static func record(from row: some StoreRow) throws(SQLiteError) -> VerificationRecord {
        guard let id = row.text(0) else { throw SQLiteError.undecodableRow("verification row without id") }
        func required(_ column: Int32) throws(SQLiteError) -> String {
            guard let value = row.text(column) else {
                throw SQLiteError.undecodableRow("verification \(id): \(recordColumnNames[Int(column)]) is NULL")
            }
            return value
        }
        func integer(_ column: Int32) throws(SQLiteError) -> Int {
            guard let value = row.int64(column) else {
                throw SQLiteError.undecodableRow("verification \(id): \(recordColumnNames[Int(column)]) is NULL")
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
                throw SQLiteError.undecodableRow("verification \(id): stored phone number does not parse")
            }
        case "email": destination = .email(destinationValue)
        case "identity": destination = .identity(destinationValue)
        default: throw SQLiteError.undecodableRow("verification \(id): unknown destination kind")
        }
        guard let channel = Channel(rawValue: try required(3)) else {
            throw SQLiteError.undecodableRow("verification \(id): unknown channel")
        }
        guard let status = VerificationStatus(rawValue: try required(7)) else {
            throw SQLiteError.undecodableRow("verification \(id): unknown status")
        }
        var record = VerificationRecord(
            id: id,
            destination: destination,
            channel: channel,
            providerID: try required(4),
            providerReference: row.text(5),
            providerState: try decodeJSON(ProviderState.self, row.text(6), what: "verification \(id) provider_state"),
            status: status,
            attempts: try integer(8),
            maxAttempts: try integer(9),
            sends: try integer(10),
            createdAt: try date(row.double(11), what: "verification \(id) created_at"),
            updatedAt: try date(row.double(12), what: "verification \(id) updated_at"),
            expiresAt: try date(row.double(13), what: "verification \(id) expires_at"),
            contentLanguage: row.text(14),
            locales: try decodeJSON([String].self, row.text(15), what: "verification \(id) locales"),
            experimentArm: row.text(16),
            clientReference: row.text(17),
            metadata: try decodeJSON([String: String].self, row.text(18), what: "verification \(id) metadata"),
            apiKeyID: row.text(19),
            version: try integer(20))
        record.route = row.text(21)
        record.experiment = row.text(22)
        record.failovers = try decodeJSON([String].self, row.text(23), what: "verification \(id) failovers")
        record.isTestNumber = (row.int64(24) ?? 0) != 0
        if let action = row.text(25) {
            record.nextAction = try decodeJSON(NextAction.self, action, what: "verification \(id) next_action")
        }
        record.fallbackChannels = try decodeJSON(
            [Channel].self, row.text(26), what: "verification \(id) fallback_channels")
        record.challengeAttempts = Int(row.int64(27) ?? 0)
        record.tokenPending = (row.int64(28) ?? 0) != 0
        record.pendingTokens = try decodeJSON(
            [String: JSONValue].self, row.text(29), what: "verification \(id) pending_tokens")
        record.checkLeaseUntil = row.double(30).map(Date.init(timeIntervalSince1970:))
        record.statusReason = row.text(31)
        record.checkLeaseOwner = row.text(32)
        record.checkLeaseHoldsAttempt = (row.int64(33) ?? 0) != 0
        return record
    }

    static func date(_ seconds: Double?, what: String) throws(SQLiteError) -> Date {
        guard let seconds else { throw SQLiteError.undecodableRow("\(what) is NULL") }
        return Date(timeIntervalSince1970: seconds)
    }

    static func json(_ value: some Encodable) throws(SQLiteError) -> String {
        try foundationJSON(value)
    }

    static func foundationJSON(_ value: some Encodable) throws(SQLiteError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(value), as: UTF8.self)
        } catch {
            throw SQLiteError.undecodableRow("value does not encode as JSON")
        }
    }

    // The JSON columns' own types, written and read without Foundation's coders (the same text: see
    // JSONFastPath.swift); anything the fast path leaves goes through JSONEncoder and JSONDecoder.

    static func json(_ value: [String]) throws(SQLiteError) -> String { JSONTextWriter.write(strings: value) }

    static func json(_ value: [String: String]) throws(SQLiteError) -> String { JSONTextWriter.write(stringMap: value) }

    static func json(_ value: [Channel]) throws(SQLiteError) -> String {
        JSONTextWriter.write(strings: value.map(\.rawValue))
    }

    static func json(_ value: ProviderState) throws(SQLiteError) -> String {
        if let text = value.json.sortedJSON { return text }
        return try foundationJSON(value)
    }

    static func json(_ value: [String: JSONValue]) throws(SQLiteError) -> String {
        if let text = JSONValue.object(value).sortedJSON { return text }
        return try foundationJSON(value)
    }

    /// Through the fast parser when it reads `text` and `convert` accepts the value, else ``decodeJSON(_:_:what:)``.
    static func decodeFast<T: Decodable>(
        _ type: T.Type, _ text: String?, what: String, _ convert: (JSONValue) -> T?
    ) throws(SQLiteError) -> T {
        if let text, let parsed = JSONValue.parse(text), let value = convert(parsed) { return value }
        return try decodeJSON(type, text, what: what)
    }

    static func decodeJSON(_ type: [String].Type, _ text: String?, what: String) throws(SQLiteError) -> [String] {
        try decodeFast(type, text, what: what) { value in
            guard case .array(let items) = value else { return nil }
            var strings: [String] = []
            strings.reserveCapacity(items.count)
            for item in items {
                guard case .string(let string) = item else { return nil }
                strings.append(string)
            }
            return strings
        }
    }

    static func decodeJSON(_ type: [String: String].Type, _ text: String?, what: String) throws(SQLiteError)
        -> [String: String]
    {
        try decodeFast(type, text, what: what) { value in
            guard case .object(let fields) = value else { return nil }
            var strings: [String: String] = [:]
            strings.reserveCapacity(fields.count)
            for (key, field) in fields {
                guard case .string(let string) = field else { return nil }
                strings[key] = string
            }
            return strings
        }
    }

    static func decodeJSON(_ type: ProviderState.Type, _ text: String?, what: String) throws(SQLiteError)
        -> ProviderState
    {
        try decodeFast(type, text, what: what) { ProviderState(json: $0) }
    }

    static func decodeJSON(_ type: [String: JSONValue].Type, _ text: String?, what: String) throws(SQLiteError)
        -> [String: JSONValue]
    {
        try decodeFast(type, text, what: what) { value in
            guard case .object(let fields) = value else { return nil }
            return fields
        }
    }

    static func decodeJSON<T: Decodable>(_ type: T.Type, _ text: String?, what: String) throws(SQLiteError) -> T {
        guard let text else { throw SQLiteError.undecodableRow("\(what) is NULL") }
        do {
            return try JSONDecoder().decode(type, from: Data(text.utf8))
        } catch {
            throw SQLiteError.undecodableRow("\(what) is not the expected JSON")
        }
    }
}
