import Foundation
import GatewayCore
import HTTPTypes
import Testing

@testable import GatewayFirebase

@Suite("Firebase emulator on the wire")
struct FirebaseEmulatorTests {
    static let send = FirebaseHarness.sendPath
    static let signIn = FirebaseHarness.signInPath
    static let proofBody = #"{"phoneNumber":"+16505553434","recaptchaToken":"ok"}"#

    func sessionInfo(_ h: FirebaseHarness, body: String = proofBody) async throws -> String {
        let response = try #require(await h.raw(.post, Self.send, json: body))
        #expect(response.status == .ok)
        return try #require(try jsonObject(response.body)["sessionInfo"] as? String)
    }

    @Test("sessionInfo is a new opaque URL-safe string of the Auth Emulator's length on every send")
    func sessionInfoShape() async throws {
        let h = try FirebaseHarness()
        let first = try await sessionInfo(h)
        let second = try await sessionInfo(h)
        #expect(first != second)
        #expect(first.count == 226)
        #expect(first.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_" })
        let codes = h.outbox.all.compactMap(\.code)
        #expect(codes.count == 2)
        #expect(codes.allSatisfy { $0.count == 6 && $0.allSatisfy(\.isNumber) })
    }

    @Test(
        "verificationCodes lists pending codes in the Auth Emulator's shape; used ones leave, other projects are empty")
    func verificationCodesListing() async throws {
        let h = try FirebaseHarness()
        let info = try await sessionInfo(h)
        let response = try #require(await h.raw(.get, FirebaseHarness.codesPath, query: nil))
        #expect(response.status == .ok)
        let object = try jsonObject(response.body)
        let entries = try #require(object["verificationCodes"] as? [[String: String]])
        #expect(entries == [["code": try h.code(), "phoneNumber": FirebaseHarness.number, "sessionInfo": info]])

        let body = #"{"sessionInfo":"\#(info)","code":"\#(try h.code())"}"#
        #expect(await h.raw(.post, Self.signIn, json: body)?.status == .ok)
        let after = try #require(await h.raw(.get, FirebaseHarness.codesPath, query: nil))
        #expect(try jsonObject(after.body)["verificationCodes"] as? [[String: String]] == [])
        let other = try #require(
            await h.raw(.get, "/emulator/v1/projects/another-project/verificationCodes", query: nil))
        #expect(try jsonObject(other.body)["verificationCodes"] as? [[String: String]] == [])
    }

    @Test("a business error is Google's envelope: 400, the server string as message, no status")
    func businessErrorShape() async throws {
        let h = try FirebaseHarness()
        let info = try await sessionInfo(h)
        let wrong = try h.code() == "000000" ? "111111" : "000000"
        let response = try #require(
            await h.raw(.post, Self.signIn, json: #"{"sessionInfo":"\#(info)","code":"\#(wrong)"}"#))
        #expect(response.status == .badRequest)
        let object = try jsonObject(response.body)
        let error = try #require(object["error"] as? [String: Any])
        #expect(error["code"] as? Int == 400)
        #expect(error["message"] as? String == "INVALID_CODE")
        #expect(error["status"] == nil)
        let items = try #require(error["errors"] as? [[String: String]])
        #expect(items == [["message": "INVALID_CODE", "domain": "global", "reason": "invalid"]])
    }

    @Test("a missing key is 403 PERMISSION_DENIED; a wrong one is 400 keyInvalid; the header form is accepted")
    func apiKey() async throws {
        let h = try FirebaseHarness()
        let missing = try envelope(await h.raw(.post, Self.send, query: nil, json: Self.proofBody))
        #expect(missing.error.code == 403)
        #expect(missing.error.status == "PERMISSION_DENIED")
        let wrong = try envelope(await h.raw(.post, Self.send, query: "key=nope", json: Self.proofBody))
        #expect(wrong.error.code == 400)
        #expect(wrong.error.errors?.first?.reason == "keyInvalid")
        #expect(wrong.error.status == "INVALID_ARGUMENT")
        let headers: HTTPFields = [try #require(HTTPField.Name("x-goog-api-key")): FirebaseSandbox.apiKey]
        let viaHeader = await h.raw(.post, Self.send, query: nil, json: Self.proofBody, headers: headers)
        #expect(viaHeader?.status == .ok)
        #expect(h.outbox.all.count == 1)
    }

    @Test(
        "sends without an acceptable proof are refused with Firebase's string",
        arguments: [
            (#"{"phoneNumber":"+16505553434"}"#, "MISSING_CLIENT_IDENTIFIER"),
            (#"{"phoneNumber":"+16505553434","recaptchaToken":""}"#, "MISSING_CLIENT_IDENTIFIER"),
            (#"{"phoneNumber":"+16505553434","iosReceipt":"r"}"#, "MISSING_APP_CREDENTIAL"),
            (#"{"phoneNumber":"+16505553434","captchaResponse":"t"}"#, "MISSING_CLIENT_TYPE"),
            (
                #"{"phoneNumber":"+16505553434","captchaResponse":"t","clientType":"CLIENT_TYPE_WEB"}"#,
                "MISSING_RECAPTCHA_VERSION"
            ),
            (
                #"{"phoneNumber":"+16505553434","captchaResponse":"t","clientType":"CLIENT_TYPE_WEB","recaptchaVersion":"V2"}"#,
                "INVALID_RECAPTCHA_VERSION"
            ),
            (#"{"phoneNumber":"+16505553434","recaptchaToken":"invalid"}"#, "CAPTCHA_CHECK_FAILED"),
            (#"{"phoneNumber":"+16505553434","playIntegrityToken":"invalid"}"#, "INVALID_APP_CREDENTIAL"),
            (#"{"phoneNumber":"16505553434","recaptchaToken":"ok"}"#, "INVALID_PHONE_NUMBER : Invalid format."),
            (#"{"recaptchaToken":"ok"}"#, "INVALID_PHONE_NUMBER : Invalid format."),
            (#"{"phoneNumber":"+1650","recaptchaToken":"ok"}"#, "INVALID_PHONE_NUMBER : Invalid format."),
        ])
    func sendRefusals(_ body: String, _ message: String) async throws {
        let h = try FirebaseHarness()
        let refusal = try envelope(await h.raw(.post, Self.send, json: body))
        #expect(refusal.error.code == 400)
        #expect(refusal.error.message == message)
        #expect(h.outbox.all.isEmpty)
    }

    @Test(
        "sign-ins the gateway never makes are answered as Firebase does",
        arguments: [
            (#"{"temporaryProof":"tp"}"#, "MISSING_PHONE_NUMBER"),
            (#"{"temporaryProof":"tp","phoneNumber":"+16505553434"}"#, "INVALID_TEMPORARY_PROOF"),
            (#"{"code":"123456"}"#, "MISSING_SESSION_INFO"),
            (#"{"sessionInfo":"abc"}"#, "MISSING_CODE"),
            (#"{"sessionInfo":"abc","code":"123456"}"#, "INVALID_SESSION_INFO"),
            ("not json", "Invalid JSON payload received."),
        ])
    func signInRefusals(_ body: String, _ message: String) async throws {
        let h = try FirebaseHarness()
        let refusal = try envelope(await h.raw(.post, Self.signIn, json: body))
        #expect(refusal.error.message == message)
    }

    @Test("a locked session stays locked even for the right code, and expires like any other")
    func lockedSession() async throws {
        let h = try FirebaseHarness()
        let info = try await sessionInfo(h)
        let code = try h.code()
        let wrong = code == "000000" ? "111111" : "000000"
        for _ in 0..<5 {
            let refusal = try envelope(
                await h.raw(.post, Self.signIn, json: #"{"sessionInfo":"\#(info)","code":"\#(wrong)"}"#))
            #expect(refusal.error.message == "INVALID_CODE")
        }
        let right = #"{"sessionInfo":"\#(info)","code":"\#(code)"}"#
        #expect(
            try envelope(await h.raw(.post, Self.signIn, json: right)).error.message
                == "TOO_MANY_ATTEMPTS_TRY_LATER : Too many unsuccessful login attempts. Please try again later.")
        h.clock.advance(by: 300)
        #expect(try envelope(await h.raw(.post, Self.signIn, json: right)).error.message == "SESSION_EXPIRED")
        h.clock.advance(by: 3600)
        #expect(try envelope(await h.raw(.post, Self.signIn, json: right)).error.message == "INVALID_SESSION_INFO")
    }

    @Test("test numbers need no proof, send nothing, use no quota and take their fixed code; at most 10 are kept")
    func emulatorTestNumbers() async throws {
        var numbers: [String: String] = [:]
        for index in 0..<12 { numbers["+1555555020\(index % 10)\(index / 10)"] = "65432\(index % 10)" }
        let h = try FirebaseHarness(emulatorTestNumbers: numbers, maxSendsPerNumberPerHour: 1)
        #expect(h.emulator.testNumbers.codes.count == 10)
        let number = try #require(h.emulator.testNumbers.codes.keys.sorted().first)
        let code = try #require(h.emulator.testNumbers.codes[number])
        for _ in 0..<3 {
            let info = try await sessionInfo(h, body: #"{"phoneNumber":"\#(number)"}"#)
            let response = await h.raw(.post, Self.signIn, json: #"{"sessionInfo":"\#(info)","code":"\#(code)"}"#)
            #expect(response?.status == .ok)
        }
        #expect(h.outbox.all.isEmpty)
    }

    @Test("the state survives in the persistence; the signing key is new, so only new tokens verify")
    func persistedRoundTrip() async throws {
        let persistence = InMemoryEmulatorPersistence()
        let h = try FirebaseHarness(persistence: persistence)
        let first = try await sessionInfo(h)
        let firstCode = try h.code()
        #expect(
            await h.raw(.post, Self.signIn, json: #"{"sessionInfo":"\#(first)","code":"\#(firstCode)"}"#)?.status == .ok
        )
        let pending = try await sessionInfo(h)
        let pendingCode = try h.code()

        let restored = try FirebaseHarness(persistence: persistence)
        let response = try #require(
            await restored.raw(.post, Self.signIn, json: #"{"sessionInfo":"\#(pending)","code":"\#(pendingCode)"}"#))
        #expect(response.status == .ok)
        let body = try jsonObject(response.body)
        #expect(body["isNewUser"] as? Bool == false, "the user created before the restart is known")
        let oldKeys = try #require(await h.raw(.get, FirebaseWire.jwksPath, query: nil)).body
        let newKeys = try #require(await restored.raw(.get, FirebaseWire.jwksPath, query: nil)).body
        #expect(oldKeys != newKeys)
        let spent = try #require(
            await restored.raw(.post, Self.signIn, json: #"{"sessionInfo":"\#(first)","code":"\#(firstCode)"}"#))
        #expect(spent.status.code == 400, "a session used before the restart stays used")
    }

    @Test("state an earlier version saved as entities becomes table rows once, and keeps working")
    func movesEarlierEntities() async throws {
        let persistence = InMemoryEmulatorPersistence()
        let now = ManualClock().now
        let session = FirebaseEmulatorState.Session(
            phoneNumber: FirebaseHarness.number, code: "654321", createdAt: now, expiresAt: now.addingTimeInterval(300),
            isTestNumber: false)
        let user = FirebaseEmulatorState.User(localID: "earlier-user-0000000000000000", createdAt: now)
        // As the earlier version wrote them: JSONEncoder, one entity per key.
        persistence.save([
            "session:old-session": try JSONEncoder().encode(session),
            "user:" + FirebaseHarness.number: try JSONEncoder().encode(user),
            "sends:" + FirebaseHarness.number: try JSONEncoder().encode([now]),
        ])
        let h = try FirebaseHarness(maxSendsPerNumberPerHour: 2, persistence: persistence)
        #expect(persistence.load().isEmpty)
        #expect(persistence.memoryTable(FirebaseEmulatorState.table).count == 3)
        // The earlier send still counts against the quota: one more is allowed, the next is refused.
        _ = try await sessionInfo(h)
        let refused = try #require(await h.raw(.post, Self.send, json: Self.proofBody))
        #expect(refused.status.code == 400)
        let signedIn = try #require(
            await h.raw(.post, Self.signIn, json: #"{"sessionInfo":"old-session","code":"654321"}"#))
        #expect(signedIn.status == .ok)
        let body = try jsonObject(signedIn.body)
        #expect(body["localId"] as? String == user.localID)
        #expect(body["isNewUser"] as? Bool == false)
    }

    @Test("a double-tapped right code signs in once; the other tap finds the session spent")
    func doubleTappedSignIn() async throws {
        let h = try FirebaseHarness(persistence: InMemoryEmulatorPersistence())
        let info = try await sessionInfo(h)
        let body = #"{"sessionInfo":"\#(info)","code":"\#(try h.code())"}"#
        let statuses = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<2 { group.addTask { await h.raw(.post, Self.signIn, json: body)?.status.code ?? 0 } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses.sorted() == [200, 400])
    }

    @Test("expired sessions and send times out of the quota window are cleared, a batch per call")
    func prunedInBatches() async throws {
        let persistence = InMemoryEmulatorPersistence()
        let table = persistence.memoryTable(FirebaseEmulatorState.table)
        let h = try FirebaseHarness(persistence: persistence)
        for n in 0..<300 {
            let body = #"{"phoneNumber":"+1650556\#(String(format: "%04d", n))","recaptchaToken":"ok"}"#
            #expect(await h.raw(.post, Self.send, json: body)?.status == .ok)
        }
        #expect(table.count == 600, "a session and a send list per number")
        // Past the code's hour of remembrance and the quota window: every row is due.
        h.clock.advance(by: FirebaseEmulator.defaultCodeLifetime + 3601)
        _ = try await sessionInfo(h)
        #expect(table.count == 600 - FirebaseEmulatorState.sweepBatch + 2)
        let listed = try #require(await h.raw(.get, FirebaseHarness.codesPath, query: nil))
        #expect((try jsonObject(listed.body)["verificationCodes"] as? [[String: String]])?.count == 1)
        _ = try await sessionInfo(h)
        _ = try await sessionInfo(h)
        #expect(table.count == 3 + 1, "the three new sessions and their number's send list")
    }

    @Test("faults hit the Identity Toolkit paths only; the inspection endpoint keeps answering")
    func faultsScope() async throws {
        let h = try FirebaseHarness()
        h.emulator.faults.set(FaultSwitch.Faults(serverErrorStatus: 503))
        let failed = try envelope(await h.raw(.post, Self.send, json: Self.proofBody))
        #expect(failed.error.code == 503)
        #expect(failed.error.status == "UNAVAILABLE")
        #expect(await h.raw(.get, FirebaseHarness.codesPath, query: nil)?.status == .ok)
        #expect(await h.raw(.get, FirebaseWire.jwksPath, query: nil)?.status == .ok)
    }

    @Test(
        "unknown paths and wrong methods are Google's 404",
        arguments: [
            (HTTPRequest.Method.get, send), (.post, "/identitytoolkit.googleapis.com/v1/accounts:lookup"),
            (.get, "/emulator/v1/projects"), (.post, FirebaseHarness.codesPath),
        ])
    func notFound(_ method: HTTPRequest.Method, _ path: String) async throws {
        let h = try FirebaseHarness()
        let refusal = try envelope(await h.raw(method, path, json: Self.proofBody))
        #expect(refusal.error.code == 404)
        #expect(refusal.error.status == "NOT_FOUND")
    }

    @Test("a percent-encoded colon in the path is the same method")
    func encodedColon() async throws {
        let h = try FirebaseHarness()
        let response = await h.raw(
            .post, "/identitytoolkit.googleapis.com/v1/accounts%3AsendVerificationCode", json: Self.proofBody)
        #expect(response?.status == .ok)
    }
}

@Suite("Firebase emulator: number validity")
struct FirebaseEmulatorValidityTests {
    @Test("a number no numbering plan knows is INVALID_PHONE_NUMBER, unless it is a test number")
    func unknownNumber() async throws {
        let h = try FirebaseHarness(emulatorTestNumbers: ["+44740090001": "123456"])
        let refused = try #require(
            await h.raw(
                .post, FirebaseEmulatorTests.send,
                json: #"{"phoneNumber": "+44740090002", "recaptchaToken": "sandbox-token"}"#))
        #expect(refused.status.code == 400)
        #expect(String(decoding: refused.body, as: UTF8.self).contains("INVALID_PHONE_NUMBER"))
        let test = try #require(
            await h.raw(.post, FirebaseEmulatorTests.send, json: #"{"phoneNumber": "+44740090001"}"#))
        #expect(test.status == .ok, "a fictional test number is the operator's choice")
        #expect(h.outbox.all.isEmpty)
    }
}
