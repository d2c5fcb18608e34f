import Crypto
import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Synchronization
import Testing

@testable import GatewayTwilio

/// Keeps the webhooks the emulator sends, answering 200.
final class WebhookSink: HTTPTransport {
    private let log = Mutex<[TransportRequest]>([])
    var requests: [TransportRequest] { log.withLock { $0 } }

    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse {
        log.withLock { $0.append(request) }
        return TransportResponse(status: .ok)
    }
}

@Suite("Twilio emulator: Verify Push")
struct TwilioPushEmulatorTests {
    static let identity = "user-0001-abcd"
    static let hook = URL(string: "http://gateway.test/callbacks/twilio")!

    let clock = ManualClock()
    let outbox = SandboxOutbox()
    let sink = WebhookSink()
    let wire: PushWire

    init() {
        wire = PushWire(
            emulator: TwilioEmulator(
                context: EmulatorContext(
                    clock: clock, outbox: outbox, logger: .quiet,
                    callbacks: CallbackSender(baseURL: Self.hook, transport: sink))))
    }

    func enrolled(platform: String = "apn") async throws -> PushDevice {
        var device = PushDevice(identity: Self.identity)
        try await device.enrol(wire, platform: platform, now: clock.now)
        return device
    }

    func challenge(_ device: PushDevice, extra: [(String, String)] = []) async throws -> PushWire.Answer {
        try await wire.call(
            .post, "/Entities/\(device.identity)/Challenges",
            form: [
                ("FactorSid", device.factorSID), ("Details.Message", "Log in to Example?"),
                ("Details.Fields", #"{"label": "IP", "value": "203.0.113.9"}"#),
                ("Details.Fields", #"{"label": "City", "value": "Lisbon"}"#),
                ("HiddenDetails", #"{"session": "s-42"}"#),
            ] + extra)
    }

    @Test("enrol with an access token, verify with the signed SID; a wrong proof is 60311, then 60310")
    func enrolment() async throws {
        let device = try await enrolled()
        let factors = try await wire.call(.get, "/Entities/\(Self.identity)/Factors")
        guard case .array(let items) = factors.json["factors"] else {
            Issue.record("no factors")
            return
        }
        #expect(items.count == 1 && items[0]["status"] == "verified")
        #expect(items[0]["binding"] == nil)

        var other = PushDevice(identity: Self.identity)
        let token = try await wire.call(
            .post, "/AccessTokens", form: [("Identity", Self.identity), ("FactorType", "push")])
        let created = try await wire.call(
            .post, "/Entities/\(Self.identity)/Factors", form: PushDevice.factorForm(publicKey: other.publicKey),
            auth: PushWire.device(try #require(token.json["token"]?.stringValue)))
        other.factorSID = try #require(created.json["sid"]?.stringValue)
        other.credentialSID = try #require(created.json["config"]?["credential_sid"]?.stringValue)
        let forged = try device.key.signature(for: Data(other.factorSID.utf8)).derRepresentation.base64EncodedString()
        for _ in 0..<5 {
            let wrong = try await wire.call(
                .post, "/Entities/\(Self.identity)/Factors/\(other.factorSID)", form: [("AuthPayload", forged)])
            #expect(wrong.status == 403 && wrong.code == 60311)
        }
        let locked = try await wire.call(
            .post, "/Entities/\(Self.identity)/Factors/\(other.factorSID)", form: [("AuthPayload", try other.proof())])
        #expect(locked.status == 429 && locked.code == 60310)
        #expect(sink.requests.count >= 2)
    }

    @Test("factor creation: another identity's token is 60313, a bad key 60314, the same key 60317, a bad JWT 20003")
    func factorRefusals() async throws {
        let device = try await enrolled()
        let token = try await wire.call(
            .post, "/AccessTokens", form: [("Identity", "someone-else-1"), ("FactorType", "push")])
        let auth = PushWire.device(try #require(token.json["token"]?.stringValue))
        let foreign = try await wire.call(
            .post, "/Entities/\(Self.identity)/Factors",
            form: PushDevice.factorForm(publicKey: PushDevice(identity: "x").publicKey),
            auth: auth)
        #expect(foreign.status == 403 && foreign.code == 60313)
        let badKey = try await wire.call(
            .post, "/Entities/\(Self.identity)/Factors", form: PushDevice.factorForm(publicKey: "bm90IGEga2V5"))
        #expect(badKey.status == 400 && badKey.code == 60314)
        let again = try await wire.call(
            .post, "/Entities/\(Self.identity)/Factors", form: PushDevice.factorForm(publicKey: device.publicKey))
        #expect(again.status == 409 && again.code == 60317)
        let badToken = try await wire.call(
            .post, "/AccessTokens", form: [("Identity", Self.identity), ("FactorType", "totp")])
        #expect(badToken.status == 400 && badToken.code == 60305)
        var impostor = PushDevice(identity: Self.identity)
        impostor.credentialSID = device.credentialSID
        let refused = try await wire.call(
            .get, "/Entities/\(Self.identity)/Challenges", auth: try impostor.authentication(now: clock.now))
        #expect(refused.status == 401 && refused.code == 20003)
        clock.advance(by: 120)
        let expiredToken = try await wire.call(
            .post, "/Entities/someone-else-1/Factors",
            form: PushDevice.factorForm(publicKey: PushDevice(identity: "y").publicKey),
            auth: auth)
        #expect(expiredToken.status == 401)
    }

    @Test(
        "a challenge carries its details and hidden details, its push reaches the outbox, and approval webhooks are signed"
    )
    func approve() async throws {
        let device = try await enrolled()
        let created = try await challenge(device)
        #expect(created.status == 201)
        let sid = try #require(created.json["sid"]?.stringValue)
        #expect(created.json["details"]?["message"] == "Log in to Example?")
        guard case .array(let fields) = created.json["details"]?["fields"] else {
            Issue.record("no fields")
            return
        }
        #expect(fields == [["label": "IP", "value": "203.0.113.9"], ["label": "City", "value": "Lisbon"]])
        #expect(created.json["hidden_details"] == ["session": "s-42"])
        let push = try #require(outbox.last(to: Self.identity))
        #expect(push.kind == .push && push.channel == "apn" && push.code == nil)
        let payload = try JSONDecoder().decode(JSONValue.self, from: Data(push.text.utf8))
        #expect(payload["type"] == "verify_push_challenge")
        #expect(payload["challenge_sid"]?.stringValue == sid && payload["factor_sid"]?.stringValue == device.factorSID)

        let answered = try await device.answer(wire, challenge: sid, status: "approved", now: clock.now)
        #expect(answered.status == 200 && answered.json["status"] == "approved")
        let hook = try #require(sink.requests.last)
        let form = TwilioEmulator.formPairs(hook.body)
        #expect(form.contains { $0 == ("type", "challenge.approved") })
        #expect(form.contains { $0 == ("challenge_sid", sid) })
        #expect(hook.url == Self.hook)
        let signature = hook.headerFields[TwilioPushCrypto.signatureHeader]
        #expect(
            TwilioPushCrypto.isValidWebhook(
                signature: signature, url: Self.hook.absoluteString, parameters: form,
                authToken: TwilioSandbox.authToken))
        #expect(
            !TwilioPushCrypto.isValidWebhook(
                signature: signature, url: Self.hook.absoluteString + "x", parameters: form,
                authToken: TwilioSandbox.authToken))

        let twice = try await device.answer(wire, challenge: sid, status: "denied", now: clock.now)
        #expect(twice.status == 403 && twice.code == 60322)
        let fetched = try await wire.call(.get, "/Entities/\(Self.identity)/Challenges/\(sid)")
        #expect(fetched.json["status"] == "approved")
        #expect(fetched.headers[TwilioEmulator.signatureFieldsHeader] == nil)
    }

    @Test("a device answering one challenge twice at once: one answer counts, the other is 60322; one webhook")
    func racingAnswers() async throws {
        let device = try await enrolled()
        let sid = try #require(try await challenge(device).json["sid"]?.stringValue)
        let before = sink.requests.count
        let (wire, now) = (wire, clock.now)
        // The device's key is an immutable value; the two answers only read it.
        struct Shared: @unchecked Sendable { let device: PushDevice }
        let shared = Shared(device: device)
        let answers = try await withThrowingTaskGroup(of: (Int, Int?).self) { group in
            for status in ["approved", "denied"] {
                group.addTask {
                    let answer = try await shared.device.answer(wire, challenge: sid, status: status, now: now)
                    return (answer.status, answer.code)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.filter { $0.0 == 200 }.count == 1)
        #expect(answers.filter { $0.0 == 403 && $0.1 == 60322 }.count == 1)
        #expect(sink.requests.count == before + 1)
    }

    @Test("a denial is signed and reported as challenge.denied")
    func deny() async throws {
        let device = try await enrolled()
        let sid = try #require(try await challenge(device).json["sid"]?.stringValue)
        let answered = try await device.answer(wire, challenge: sid, status: "denied", now: clock.now)
        #expect(answered.json["status"] == "denied")
        #expect(
            TwilioEmulator.formPairs(try #require(sink.requests.last).body).contains {
                $0 == ("type", "challenge.denied")
            })
    }

    @Test("an answer signed by another factor's key, or with changed fields, is 60324 and changes nothing")
    func wrongSignature() async throws {
        let device = try await enrolled()
        let sid = try #require(try await challenge(device).json["sid"]?.stringValue)
        let hooks = sink.requests.count
        let other = P256.Signing.PrivateKey()
        let forged = try await device.answer(wire, challenge: sid, status: "approved", now: clock.now, signer: other)
        #expect(forged.status == 403 && forged.code == 60324)
        let tampered = try TwilioPushCrypto.signJWT(
            claims: ["sid": .string(sid), "status": "approved"], key: device.key)
        let partial = try await wire.call(
            .post, "/Entities/\(Self.identity)/Challenges/\(sid)", form: [("AuthPayload", tampered)],
            auth: try device.authentication(now: clock.now))
        #expect(partial.status == 403 && partial.code == 60324)
        let sneaky = try await device.answer(wire, challenge: sid, status: "maybe", now: clock.now)
        #expect(sneaky.code == 60324)
        #expect(try await wire.call(.get, "/Entities/\(Self.identity)/Challenges/\(sid)").json["status"] == "pending")
        #expect(sink.requests.count == hooks)
    }

    @Test("a challenge expires after five minutes by default (60323), and ExpirationDate is bounded")
    func expiry() async throws {
        let device = try await enrolled()
        let sid = try #require(try await challenge(device).json["sid"]?.stringValue)
        clock.advance(by: 301)
        #expect(try await wire.call(.get, "/Entities/\(Self.identity)/Challenges/\(sid)").json["status"] == "expired")
        let late = try await device.answer(wire, challenge: sid, status: "approved", now: clock.now)
        #expect(late.status == 403 && late.code == 60323)
        let tooLong = try await challenge(
            device, extra: [("ExpirationDate", TwilioWire.format(clock.now.addingTimeInterval(3700)))])
        #expect(tooLong.status == 400 && tooLong.code == 60300)
        let custom = try await challenge(
            device, extra: [("ExpirationDate", TwilioWire.format(clock.now.addingTimeInterval(1800)))])
        #expect(custom.json["expiration_date"]?.stringValue == TwilioWire.format(clock.now.addingTimeInterval(1800)))
    }

    @Test("challenge refusals: unverified factor 60318, no message 60300, unknown factor 20404")
    func challengeRefusals() async throws {
        let device = try await enrolled()
        let pending = PushDevice(identity: Self.identity)
        let created = try await wire.call(
            .post, "/Entities/\(Self.identity)/Factors", form: PushDevice.factorForm(publicKey: pending.publicKey))
        let unverified = try await wire.call(
            .post, "/Entities/\(Self.identity)/Challenges",
            form: [("FactorSid", try #require(created.json["sid"]?.stringValue)), ("Details.Message", "Hi")])
        #expect(unverified.status == 403 && unverified.code == 60318)
        let noMessage = try await wire.call(
            .post, "/Entities/\(Self.identity)/Challenges", form: [("FactorSid", device.factorSID)])
        #expect(noMessage.status == 400 && noMessage.code == 60300)
        let unknown = try await wire.call(
            .post, "/Entities/\(Self.identity)/Challenges",
            form: [("FactorSid", "YF" + String(repeating: "0", count: 32)), ("Details.Message", "Hi")])
        #expect(unknown.status == 404 && unknown.code == 20404)
        let longLabel = try await challenge(
            device, extra: [("Details.Fields", #"{"label": "\#(String(repeating: "L", count: 37))", "value": "v"}"#)])
        #expect(longLabel.code == 60300)
    }

    @Test("notifications: three resends then 60309; platform none gets no push and 60307; limits on pending challenges")
    func notifications() async throws {
        let device = try await enrolled()
        let sid = try #require(try await challenge(device).json["sid"]?.stringValue)
        for _ in 0..<3 {
            let sent = try await wire.call(.post, "/Entities/\(Self.identity)/Challenges/\(sid)/Notifications")
            #expect(sent.status == 201)
        }
        let fourth = try await wire.call(.post, "/Entities/\(Self.identity)/Challenges/\(sid)/Notifications")
        #expect(fourth.status == 429 && fourth.code == 60309)
        #expect(outbox.messages(to: Self.identity).count == 4)
        for _ in 0..<(TwilioEmulator.maxPendingChallenges - 1) { _ = try await challenge(device) }
        let capped = try await challenge(device)
        #expect(capped.status == 429 && capped.code == 60312)

        var silent = PushDevice(identity: "silent-user-01")
        try await silent.enrol(wire, platform: "none", now: clock.now)
        let quiet = try await challenge(silent)
        let quietSID = try #require(quiet.json["sid"]?.stringValue)
        #expect(outbox.messages(to: "silent-user-01").isEmpty)
        let none = try await wire.call(.post, "/Entities/silent-user-01/Challenges/\(quietSID)/Notifications")
        #expect(none.status == 400 && none.code == 60307)
    }

    @Test("deleting a factor removes it; a device sees only its own entity; state survives a restart")
    func deletionAndPersistence() async throws {
        let persistence = InMemoryEmulatorPersistence()
        let first = TwilioEmulator(
            context: EmulatorContext(clock: clock, outbox: outbox, logger: .quiet, persistence: persistence))
        var device = PushDevice(identity: Self.identity)
        try await device.enrol(PushWire(emulator: first), now: clock.now)
        let second = PushWire(
            emulator: TwilioEmulator(
                context: EmulatorContext(clock: clock, outbox: outbox, logger: .quiet, persistence: persistence)))
        let fetched = try await second.call(.get, "/Entities/\(Self.identity)/Factors/\(device.factorSID)")
        #expect(fetched.json["status"] == "verified")
        let elsewhere = try await second.call(
            .get, "/Entities/another-user-1/Challenges", auth: try device.authentication(now: clock.now))
        #expect(elsewhere.status == 404)
        let deleted = try await second.call(.delete, "/Entities/\(Self.identity)/Factors/\(device.factorSID)")
        #expect(deleted.status == 204)
        #expect(try await second.call(.get, "/Entities/\(Self.identity)/Factors/\(device.factorSID)").status == 404)
    }
}
