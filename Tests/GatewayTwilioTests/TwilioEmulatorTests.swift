import Foundation
import GatewayCore
import HTTPTypes
import Testing

@testable import GatewayTwilio

/// Decodes Twilio's error envelope and checks its status and code.
func expectEnvelope(
    _ response: TransportResponse, status: Int, code: Int, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    #expect(response.status.code == status, sourceLocation: sourceLocation)
    let envelope = try JSONDecoder().decode(TwilioWire.ErrorEnvelope.self, from: response.body)
    #expect(envelope.code == code, sourceLocation: sourceLocation)
    #expect(envelope.status == status, sourceLocation: sourceLocation)
    #expect(envelope.moreInfo == "https://www.twilio.com/docs/errors/\(code)", sourceLocation: sourceLocation)
}

@Suite("Twilio emulator")
struct TwilioEmulatorTests {
    let client = TwilioWireClient()

    @Test("without credentials the answer is Twilio's 401 body with 20003")
    func noCredentials() async throws {
        let response = try await client.send(
            .post, TwilioWireClient.service + "/Verifications", [("To", TwilioHarness.phone), ("Channel", "sms")],
            authorization: nil)
        try expectEnvelope(response, status: 401, code: 20003)
        let body = try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
        #expect(body["message"] as? String == "Authenticate")
        #expect(client.outbox.all.isEmpty)
    }

    @Test(
        "malformed or wrong credentials are 401/20003",
        arguments: [
            "Bearer abc", "Basic !!!", "Basic " + Data("nocolon".utf8).base64EncodedString(),
            "Basic " + Data("\(TwilioSandbox.accountSID):wrong".utf8).base64EncodedString(),
            "Basic " + Data("AC00000000000000000000000000000000:\(TwilioSandbox.authToken)".utf8).base64EncodedString(),
        ])
    func badCredentials(header: String) async throws {
        let response = try await client.send(
            .get, TwilioWireClient.service + "/Verifications/VE1", authorization: header)
        try expectEnvelope(response, status: 401, code: 20003)
    }

    @Test("an unknown service, an unknown path and a wrong method are 404/20404 and 405")
    func routing() async throws {
        let otherService = "/v2/Services/VA" + String(repeating: "0", count: 32) + "/Verifications"
        try expectEnvelope(try await client.send(.post, otherService), status: 404, code: 20404)
        try expectEnvelope(try await client.send(.get, "/v2/Nothing"), status: 404, code: 20404)
        try expectEnvelope(try await client.send(.get, TwilioWireClient.service + "/Other"), status: 404, code: 20404)
        let wrongMethod = try await client.send(.get, TwilioWireClient.service + "/Verifications")
        #expect(wrongMethod.status.code == 405)
        #expect(try await client.send(.delete, TwilioWireClient.service + "/VerificationCheck").status.code == 405)
    }

    @Test(
        "a bad or missing To or Channel is 400/60200 naming the parameter",
        arguments: [
            ([("Channel", "sms")], "To"),
            ([("To", "4155550100"), ("Channel", "sms")], "To"),
            ([("To", "+0155550100"), ("Channel", "sms")], "To"),
            ([("To", "not-an-email"), ("Channel", "email")], "To"),
            ([("To", TwilioHarness.phone)], "Channel"),
            ([("To", TwilioHarness.phone), ("Channel", "sna")], "Channel"),
            ([("To", TwilioHarness.phone), ("Channel", "fax")], "Channel"),
            ([("To", TwilioHarness.phone), ("Channel", "sms"), ("Locale", "xx")], "Locale"),
        ])
    func invalidStart(form: [(String, String)], parameter: String) async throws {
        let response = try await client.send(.post, TwilioWireClient.service + "/Verifications", form)
        try expectEnvelope(response, status: 400, code: 60200)
        let envelope = try JSONDecoder().decode(TwilioWire.ErrorEnvelope.self, from: response.body)
        #expect(envelope.message == "Invalid parameter: \(parameter)")
        #expect(client.outbox.all.isEmpty)
    }

    @Test("a start answers 201 with every field of the spec's verification, nulls included")
    func startShape() async throws {
        let response = try await client.send(
            .post, TwilioWireClient.service + "/Verifications", [("To", TwilioHarness.phone), ("Channel", "sms")])
        #expect(response.status.code == 201)
        #expect(response.headerFields[.contentType] == "application/json")
        let json = try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
        #expect(
            Set(json.keys) == [
                "sid", "service_sid", "account_sid", "to", "channel", "status", "valid", "lookup", "amount", "payee",
                "send_code_attempts", "date_created", "date_updated", "sna", "url",
            ])
        #expect(json["amount"] is NSNull && json["payee"] is NSNull && json["sna"] is NSNull)
        #expect((json["lookup"] as? [String: Any])?.isEmpty == true)
        let verification = try JSONDecoder().decode(TwilioWire.Verification.self, from: response.body)
        let sid = try #require(verification.sid)
        #expect(TwilioConfiguration.matches(sid, prefixes: ["VE"]))
        #expect(verification.serviceSID == TwilioSandbox.serviceSID)
        #expect(verification.accountSID == TwilioSandbox.accountSID)
        #expect(verification.status == "pending" && verification.valid == false)
        #expect(verification.dateCreated == "2027-01-15T08:00:00Z")
        #expect(verification.url == "https://verify.twilio.com" + TwilioWireClient.service + "/Verifications/" + sid)
        let attempt = try #require(verification.sendCodeAttempts?.first)
        #expect(attempt.channel == "SMS")
        #expect(attempt.attemptSID?.hasPrefix("VL") == true)
        let sent = try #require(client.outbox.all.first)
        #expect(sent.text == "Your verification code is: \(sent.code ?? "")")
        #expect(sent.sentAt == client.clock.now)
    }

    @Test("a call lands in the outbox as a voice message under Twilio's channel name", arguments: ["call", "sms"])
    func callKind(channel: String) async throws {
        _ = try await client.start(channel: channel)
        let sent = try #require(client.outbox.all.first)
        #expect(sent.kind == (channel == "call" ? .voice : .sms))
        #expect(sent.channel == channel)
    }

    @Test("starting again for the same To keeps the SID and code and adds a send attempt")
    func startAgain() async throws {
        let first = try await client.start()
        let second = try await client.start(channel: "whatsapp")
        #expect(second.sid == first.sid)
        #expect(second.channel == "whatsapp")
        #expect(second.sendCodeAttempts?.map(\.channel) == ["SMS", "whatsapp"])
        #expect(Set(client.outbox.all.map(\.code)).count == 1)
    }

    @Test("a check without To or VerificationSid is 400/60221")
    func noTarget() async throws {
        try expectEnvelope(try await client.check([("Code", "123456")]), status: 400, code: 60221)
    }

    @Test("a code shorter than 4 or longer than 10 characters is 400/60200", arguments: ["", "123", "12345678901"])
    func badCodeLength(code: String) async throws {
        let verification = try await client.start()
        let response = try await client.check([("VerificationSid", verification.sid ?? ""), ("Code", code)])
        try expectEnvelope(response, status: 400, code: 60200)
    }

    @Test("a check answers 200 with the spec's verification_check fields, by SID or by To")
    func checkShape() async throws {
        let verification = try await client.start()
        let code = try #require(client.outbox.all.first?.code)
        let wrong = try await client.check([("To", TwilioHarness.phone), ("Code", TwilioHarness.wrong(code))])
        #expect(wrong.status.code == 200)
        let json = try #require(try JSONSerialization.jsonObject(with: wrong.body) as? [String: Any])
        #expect(
            Set(json.keys) == [
                "sid", "service_sid", "account_sid", "to", "channel", "status", "valid", "amount", "payee",
                "date_created", "date_updated", "sna_attempts_error_codes",
            ])
        #expect(json["status"] as? String == "pending")
        #expect(json["valid"] as? Bool == false)
        let right = try await client.check([("VerificationSid", verification.sid ?? ""), ("Code", code)])
        let approved = try JSONDecoder().decode(TwilioWire.VerificationCheck.self, from: right.body)
        #expect(approved.status == "approved" && approved.valid == true)
        #expect(approved.sid == verification.sid)
    }

    @Test("an approved verification is soft-deleted: fetch and check are 404/20404")
    func approvedThenFetch() async throws {
        let verification = try await client.start()
        let sid = try #require(verification.sid)
        let code = try #require(client.outbox.all.first?.code)
        #expect(try await client.check([("VerificationSid", sid), ("Code", code)]).status.code == 200)
        try expectEnvelope(
            try await client.send(.get, TwilioWireClient.service + "/Verifications/" + sid), status: 404, code: 20404)
        try expectEnvelope(
            try await client.check([("VerificationSid", sid), ("Code", code)]), status: 404, code: 20404)
    }

    @Test("the sixth check is 429/60202, and the verification then reads max_attempts_reached")
    func maxChecks() async throws {
        let sid = try #require(try await client.start().sid)
        for _ in 0..<5 {
            #expect(try await client.check([("VerificationSid", sid), ("Code", "0000000")]).status.code == 200)
        }
        try expectEnvelope(
            try await client.check([("VerificationSid", sid), ("Code", "0000000")]), status: 429, code: 60202)
        let fetched = try await client.send(.get, TwilioWireClient.service + "/Verifications/" + sid)
        #expect(
            try JSONDecoder().decode(TwilioWire.Verification.self, from: fetched.body).status == "max_attempts_reached")
    }

    @Test("a canceled verification stays fetchable as canceled, and an unknown Status is 60200")
    func update() async throws {
        let sid = try #require(try await client.start().sid)
        let path = TwilioWireClient.service + "/Verifications/" + sid
        try expectEnvelope(try await client.send(.post, path, [("Status", "paused")]), status: 400, code: 60200)
        let canceled = try await client.send(.post, path, [("Status", "canceled")])
        #expect(canceled.status.code == 200)
        let fetched = try JSONDecoder().decode(
            TwilioWire.Verification.self, from: try await client.send(.get, path).body)
        #expect(fetched.status == "canceled")
        // The number is free again: the next start is a new verification.
        #expect(try await client.start().sid != sid)
    }

    @Test("a verification expires 10 minutes after creation and is then unknown")
    func expiry() async throws {
        let sid = try #require(try await client.start().sid)
        client.clock.advance(by: 600)
        try expectEnvelope(
            try await client.send(.get, TwilioWireClient.service + "/Verifications/" + sid), status: 404, code: 20404)
        try expectEnvelope(
            try await client.check([("To", TwilioHarness.phone), ("Code", "123456")]), status: 404, code: 20404)
    }

    @Test("an injected 5xx carries Twilio's envelope with 20500, or 20503 for 503", arguments: [500, 502, 503])
    func serverErrorBody(status: Int) async throws {
        client.emulator.faults.set(FaultSwitch.Faults(serverErrorStatus: status))
        let response = try await client.send(.get, TwilioWireClient.service + "/Verifications/VE1")
        try expectEnvelope(response, status: status, code: status == 503 ? 20503 : 20500)
    }

    @Test("a new emulator over the same persistence keeps pending verifications and their codes")
    func persistedRoundTrip() async throws {
        let persistence = InMemoryEmulatorPersistence()
        let first = TwilioWireClient(persistence: persistence)
        let sid = try #require(try await first.start().sid)
        let code = try #require(first.outbox.all.first?.code)
        let restored = TwilioWireClient(persistence: persistence)
        let response = try await restored.check([("VerificationSid", sid), ("Code", code)])
        #expect(try JSONDecoder().decode(TwilioWire.VerificationCheck.self, from: response.body).status == "approved")
        // Approved verifications are soft-deleted: they answer as an unknown SID does, so nothing of them is
        // kept, and a third emulator answers 404 for this one.
        #expect(try await persistence.table(TwilioEmulatorState.table).transaction { try $0.value(forKey: sid) } == nil)
        #expect(persistence.memoryTable(TwilioEmulatorState.table).count == 0)
        let third = TwilioWireClient(persistence: persistence)
        try expectEnvelope(
            try await third.check([("VerificationSid", sid), ("Code", code)]), status: 404, code: 20404)
    }

    @Test("a call writes only the verification it changed, however many the emulator holds")
    func writesStayConstant() async throws {
        let persistence = InMemoryEmulatorPersistence()
        let table = persistence.memoryTable(TwilioEmulatorState.table)
        let client = TwilioWireClient(persistence: persistence)
        for n in 0..<300 {
            _ = try await client.start(String(format: "+1415555%04d", n))
        }
        #expect(table.writeCount == 300, "one row per start")
        let before = table.writeCount
        _ = try await client.start("+14155559999")
        #expect(table.writeCount - before == 1)
        // Ten minutes later the 301 are expired. A call removes at most one batch of due rows (256), earliest
        // first, and the next call the rest, each once; the ones not yet removed already answer as expired.
        client.clock.advance(by: 601)
        let beforeSweep = table.writeCount
        _ = try await client.start("+14155559998")
        #expect(table.writeCount - beforeSweep == TwilioEmulatorState.sweepBatch + 1, "one batch, and the new one")
        try expectEnvelope(
            try await client.check([("To", "+14155559999"), ("Code", "123456")]), status: 404, code: 20404)
        #expect(table.count == 1, "the second call removed the other 45; the new one is left")
        let afterSweep = table.writeCount
        _ = try await client.start("+14155559997")
        #expect(table.writeCount - afterSweep == 1, "nothing is swept twice")
        #expect(table.count == 2)
        #expect(persistence.writeCount == 0, "verifications are rows of the table, not saved entities")
    }

    @Test("a canceled verification is forgotten a day after it was canceled, and its row with it")
    func canceledForgotten() async throws {
        let persistence = InMemoryEmulatorPersistence()
        let client = TwilioWireClient(persistence: persistence)
        let sid = try #require(try await client.start().sid)
        _ = try await client.send(.post, TwilioWireClient.service + "/Verifications/" + sid, [("Status", "canceled")])
        client.clock.advance(by: 23 * 3600)
        let fetched = try await client.send(.get, TwilioWireClient.service + "/Verifications/" + sid)
        #expect(fetched.status.code == 200)
        client.clock.advance(by: 3601)
        try expectEnvelope(
            try await client.send(.get, TwilioWireClient.service + "/Verifications/" + sid), status: 404, code: 20404)
        #expect(persistence.memoryTable(TwilioEmulatorState.table).count == 0)
    }

    @Test("verifications and push entities an earlier version saved become rows once; deleted ones are dropped")
    func movesEarlierRows() async throws {
        let persistence = InMemoryEmulatorPersistence()
        let clock = ManualClock()
        let pending = TwilioEmulatorState.Verification(
            sid: "VE" + String(repeating: "a", count: 32), to: TwilioHarness.phone, channel: "sms", code: "123456",
            status: "pending", checks: 1, sendAttempts: [.init(time: clock.now, channel: "sms", attemptSID: "VL1")],
            createdAt: clock.now, updatedAt: clock.now, deleted: false)
        var deleted = pending
        deleted.sid = "VE" + String(repeating: "b", count: 32)
        deleted.status = "approved"
        deleted.deleted = true
        // As the earlier version wrote them: JSONEncoder's rows, one entity per SID, beside Verify Push's.
        let entity = TwilioPushState.Entity(
            sid: "YE" + String(repeating: "c", count: 32), identity: "user-1", createdAt: clock.now)
        persistence.save([
            pending.sid: try JSONEncoder().encode(pending), deleted.sid: try JSONEncoder().encode(deleted),
            entity.sid: try JSONEncoder().encode(entity),
        ])
        let client = TwilioWireClient(persistence: persistence, clock: clock)
        #expect(persistence.load().isEmpty)
        #expect(persistence.memoryTable(TwilioEmulatorState.table).count == 1)
        let moved = try await persistence.table(TwilioPushState.table).transaction { rows in
            try TwilioPushState(rows: rows, now: clock.now).entity("user-1")
        }
        #expect(moved == entity)
        let checked = try await client.check([("To", TwilioHarness.phone), ("Code", "123456")])
        let check = try JSONDecoder().decode(TwilioWire.VerificationCheck.self, from: checked.body)
        #expect(check.sid == pending.sid)
        #expect(check.status == "approved")
        try expectEnvelope(
            try await client.send(.get, TwilioWireClient.service + "/Verifications/" + deleted.sid), status: 404,
            code: 20404)
    }

    @Test("starts racing for one To share one verification, and no more than five sends are accepted")
    func concurrentStartsForOneNumber() async throws {
        let client = TwilioWireClient(persistence: InMemoryEmulatorPersistence())
        let statuses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
            for _ in 0..<12 {
                group.addTask {
                    let response = try await client.send(
                        .post, TwilioWireClient.service + "/Verifications",
                        [("To", TwilioHarness.phone), ("Channel", "sms")])
                    let sid =
                        response.status.code == 201
                        ? try JSONDecoder().decode(TwilioWire.Verification.self, from: response.body).sid : nil
                    return (response.status.code, sid)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses.filter { $0.0 == 201 }.count == TwilioWire.maxSends)
        #expect(statuses.filter { $0.0 == 429 }.count == 12 - TwilioWire.maxSends)
        #expect(Set(statuses.compactMap(\.1)).count == 1, "one verification for the number")
        #expect(client.outbox.all.count == TwilioWire.maxSends)
    }

    @Test("a double-tapped right code approves once; the other tap finds nothing to check (404)")
    func doubleTappedCheck() async throws {
        let client = TwilioWireClient(persistence: InMemoryEmulatorPersistence())
        let sid = try #require(try await client.start().sid)
        let code = try #require(client.outbox.all.first?.code)
        let codes = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    try await client.check([("VerificationSid", sid), ("Code", code)]).status.code
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(codes.sorted() == [200, 404])
    }
}
