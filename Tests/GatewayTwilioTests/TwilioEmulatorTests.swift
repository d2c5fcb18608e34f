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
        #expect(persistence.load()[sid] == nil)
        let third = TwilioWireClient(persistence: persistence)
        try expectEnvelope(
            try await third.check([("VerificationSid", sid), ("Code", code)]), status: 404, code: 20404)
    }

    @Test("a call writes only the verification it changed, however many the emulator holds")
    func writesStayConstant() async throws {
        let persistence = InMemoryEmulatorPersistence()
        let client = TwilioWireClient(persistence: persistence)
        for n in 0..<300 {
            _ = try await client.start(String(format: "+1415555%04d", n))
        }
        #expect(persistence.writeCount == 300, "one row per start")
        let before = persistence.writeCount
        _ = try await client.start("+14155559999")
        #expect(persistence.writeCount - before == 1)
        // Ten minutes later the next call expires the due verifications only, each once.
        client.clock.advance(by: 601)
        let beforeSweep = persistence.writeCount
        _ = try await client.start("+14155559998")
        #expect(persistence.writeCount - beforeSweep == 302, "301 expired once each, and the new one")
        let afterSweep = persistence.writeCount
        _ = try await client.start("+14155559997")
        #expect(persistence.writeCount - afterSweep == 1, "nothing is swept twice")
    }
}
