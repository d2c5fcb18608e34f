import Foundation
import GatewayCore
import Testing

@testable import GatewayTwilio

/// The emulator's answers and saved rows are written without `JSONEncoder`; these compare the bytes with
/// what `JSONEncoder` writes (answers) or check that `JSONDecoder` reads the same value back (rows).
@Suite("Twilio wire JSON fast path")
struct TwilioWireJSONTests {
    static func encoded(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static let awkward = ["+447400000001", "a/b@example.com", "qu\"ote\\back", "tab\tnl\n\u{1}", "é日本🙂", ""]

    static func state(_ to: String, seconds: TimeInterval) -> TwilioEmulatorState.Verification {
        let at = Date(timeIntervalSinceReferenceDate: seconds)
        return TwilioEmulatorState.Verification(
            sid: "VE" + String(repeating: "a", count: 32), to: to, channel: "sms", code: "012345", status: "pending",
            checks: 2,
            sendAttempts: [
                .init(time: at, channel: "sms", attemptSID: "VL1"),
                .init(time: at.addingTimeInterval(0.001), channel: "whatsapp", attemptSID: "VL/2"),
            ],
            createdAt: at, updatedAt: at.addingTimeInterval(12.5), deleted: false)
    }

    @Test("the Verification resource is JSONEncoder's bytes, null fields included", arguments: awkward)
    func verification(_ to: String) throws {
        let full = TwilioEmulator.resource(Self.state(to, seconds: 785_123_456.789_012))
        #expect(full.jsonValue.sortedJSON == (try Self.encoded(full)))
        var sparse = full
        sparse.lookup = nil
        sparse.valid = nil
        sparse.sendCodeAttempts = [TwilioWire.SendCodeAttempt(time: nil, channel: to, attemptSID: nil)]
        sparse.sna = TwilioWire.SNA(url: to)
        #expect(sparse.jsonValue.sortedJSON == (try Self.encoded(sparse)))
        sparse.sna = TwilioWire.SNA(url: nil)
        sparse.sendCodeAttempts = []
        #expect(sparse.jsonValue.sortedJSON == (try Self.encoded(sparse)))
    }

    @Test("the VerificationCheck resource is JSONEncoder's bytes", arguments: awkward)
    func check(_ to: String) throws {
        var check = TwilioEmulator.checkResource(Self.state(to, seconds: 1))
        #expect(check.jsonValue.sortedJSON == (try Self.encoded(check)))
        check.valid = true
        check.snaAttemptsErrorCodes = [.init(attemptSID: to, code: 60_540), .init(attemptSID: nil, code: nil)]
        #expect(check.jsonValue.sortedJSON == (try Self.encoded(check)))
    }

    @Test("the error envelope is JSONEncoder's bytes", arguments: awkward)
    func envelope(_ message: String) throws {
        let envelope = TwilioWire.ErrorEnvelope(code: 60_200, message: message, status: 400)
        #expect(envelope.jsonValue.sortedJSON == (try Self.encoded(envelope)))
        var sparse = envelope
        sparse.moreInfo = nil
        sparse.code = nil
        #expect(sparse.jsonValue.sortedJSON == (try Self.encoded(sparse)))
    }

    @Test("an emulator answer is JSONEncoder's bytes")
    func answer() throws {
        let resource = TwilioEmulator.resource(Self.state("+447400000001", seconds: 800_000_000.25))
        let response = TwilioEmulator.json(201, resource)
        #expect(String(decoding: response.body, as: UTF8.self) == (try Self.encoded(resource)))
        #expect(response.headerFields[.contentType] == "application/json")
        #expect(response.status.code == 201)
    }

    @Test(
        "a saved verification reads back as the same value",
        arguments: [0, 1, -1.5, 785_123_456.789_012, 8e8 + 1.0 / 3, 1e16, 123.000_000_001])
    func savedRow(_ seconds: Double) throws {
        for to in Self.awkward {
            var verification = Self.state(to, seconds: seconds)
            verification.deleted = seconds < 0
            let saved = try #require(verification.saved)
            #expect(try JSONDecoder().decode(TwilioEmulatorState.Verification.self, from: saved) == verification)
            #expect(TwilioEmulatorState.Verification(saved: saved) == verification)
        }
    }

    @Test("JSONEncoder's own rows read the same; a row missing or mistyping a field is nil, as JSONDecoder refuses it")
    func savedRowFallback() throws {
        let verification = Self.state("+447400000001", seconds: 1.5)
        let encoded = try JSONEncoder().encode(verification)
        #expect(TwilioEmulatorState.Verification(saved: encoded) == verification)
        for broken in [
            #"{"sid":"VE1"}"#,
            #"{"sid":1,"to":"+1","channel":"sms","code":"1","status":"pending","checks":0,"sendAttempts":[],"createdAt":0,"updatedAt":0,"deleted":false}"#,
            #"{"sid":"VE1","to":"+1","channel":"sms","code":"1","status":"pending","checks":0.5,"sendAttempts":[],"createdAt":0,"updatedAt":0,"deleted":false}"#,
            #"{"sid":"VE1","to":"+1","channel":"sms","code":"1","status":"pending","checks":0,"sendAttempts":[{"time":0}],"createdAt":0,"updatedAt":0,"deleted":false}"#,
            "not json",
        ] {
            #expect(TwilioEmulatorState.Verification(saved: Data(broken.utf8)) == nil)
            #expect((try? JSONDecoder().decode(TwilioEmulatorState.Verification.self, from: Data(broken.utf8))) == nil)
        }
    }
}

@Suite("Twilio answer summary fast path")
struct TwilioResourceSummaryTests {
    static func slow(_ body: String) -> TwilioWire.ResourceSummary? {
        try? JSONDecoder().decode(TwilioWire.ResourceSummary.self, from: Data(body.utf8))
    }

    static func same(_ left: TwilioWire.ResourceSummary?, _ right: TwilioWire.ResourceSummary?) -> Bool {
        left?.sid == right?.sid && left?.status == right?.status && left?.channel == right?.channel
            && left?.dateCreated == right?.dateCreated && (left == nil) == (right == nil)
    }

    @Test("the fast summary is JSONDecoder's, or left to it")
    func summary() throws {
        let resource = TwilioEmulator.resource(TwilioWireJSONTests.state("+447400000001", seconds: 1))
        let bodies = [
            try #require(resource.jsonValue.sortedJSON),
            #"{"sid":"VE1","status":null}"#,
            #"{"sid":"VE1","status":"pending","channel":"sms","date_created":"x","n":1.5}"#,
            "{}", #"{"sid":"a\u00e9\ud83d\ude42"}"#,
        ]
        for body in bodies {
            let fast = try #require(TwilioWire.ResourceSummary(fastJSON: Data(body.utf8)), "\(body)")
            #expect(Self.same(fast, Self.slow(body)), "\(body)")
        }
        // Left to JSONDecoder, which refuses them.
        for body in [#"{"sid":5}"#, #"{"status":true}"#, "[]", "\"VE1\"", "not json"] {
            #expect(TwilioWire.ResourceSummary(fastJSON: Data(body.utf8)) == nil, "\(body)")
            #expect(Self.slow(body) == nil, "\(body)")
        }
        // Repeated keys are left to JSONDecoder too.
        #expect(TwilioWire.ResourceSummary(fastJSON: Data(#"{"sid":"a","sid":"b"}"#.utf8)) == nil)
    }
}

@Suite("Twilio emulator credentials")
struct TwilioEmulatorCredentialTests {
    static func basic(_ user: String, _ password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    @Test("the sandbox account's header, its other spellings and API key SIDs are accepted; others are not")
    func authorization() {
        let sandbox = Self.basic(TwilioSandbox.accountSID, TwilioSandbox.authToken)
        #expect(sandbox == TwilioEmulator.sandboxAuthorization)
        #expect(TwilioEmulator.isAuthorized(sandbox))
        #expect(TwilioEmulator.isAuthorized("basic " + sandbox.dropFirst(6)))
        #expect(TwilioEmulator.isAuthorized(sandbox + " "))
        #expect(
            TwilioEmulator.isAuthorized(Self.basic("SK" + String(repeating: "0", count: 32), TwilioSandbox.authToken)))
        #expect(!TwilioEmulator.isAuthorized(nil))
        #expect(!TwilioEmulator.isAuthorized(Self.basic(TwilioSandbox.accountSID, "wrong")))
        #expect(!TwilioEmulator.isAuthorized(String(sandbox.dropLast())))
        #expect(
            !TwilioEmulator.isAuthorized(Self.basic("AC" + String(repeating: "0", count: 32), TwilioSandbox.authToken)))
    }
}
