import Foundation
import GatewayCore
import GatewayFirebase
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import gateway

/// Firebase multi-factor sign-in and enrollment through the API (`multi_factor`), against the sandbox's
/// Firebase: the first factor is the emulator's email and password sign-in, called the way an app would.
@Suite("Firebase second factors through the API")
struct FirebaseMultiFactorAPITests {
    static let proof = #""app_verification": {"type": "recaptcha", "token": "sandbox-recaptcha-token"}"#
    static let toolkit = "/sandbox/firebase/identitytoolkit.googleapis.com"
    static let key = "key=\(FirebaseSandbox.apiKey)"
    static let password = "correct horse battery"

    /// An admin sign-up (the Auth Emulator's `Bearer owner`) with a verified email and `phones` as factors.
    static func user(_ client: any TestClientProtocol, _ email: String, phones: [String] = []) async throws {
        let factors = phones.map { #"{"phoneInfo": "\#($0)"}"# }.joined(separator: ",")
        let created = try await client.call(
            .post, "\(toolkit)/v1/accounts:signUp",
            json:
                #"{"email": "\#(email)", "password": "\#(password)", "emailVerified": true, "mfaInfo": [\#(factors)]}"#,
            key: "owner")
        #expect(created.status == .ok, "\(created.body)")
    }

    /// The first factor's answer.
    static func passwordSignIn(_ client: any TestClientProtocol, _ email: String) async throws -> [String: Any] {
        let answer = try await client.call(
            .post, "\(toolkit)/v1/accounts:signInWithPassword?\(key)",
            json: #"{"email": "\#(email)", "password": "\#(password)", "returnSecureToken": true}"#, key: nil)
        #expect(answer.status == .ok, "\(answer.body)")
        return answer.body
    }

    /// The `multi_factor` object of a sign-in, from a first factor that answered a pending credential.
    static func signInStep(_ client: any TestClientProtocol, _ email: String) async throws -> String {
        let answer = try await passwordSignIn(client, email)
        let credential = try #require(answer["mfaPendingCredential"] as? String)
        let factor = try #require((answer["mfaInfo"] as? [[String: Any]])?.first?["mfaEnrollmentId"] as? String)
        return #"{"type": "sign_in", "pending_credential": "\#(credential)", "enrollment_id": "\#(factor)"}"#
    }

    static func start(_ client: any TestClientProtocol, to: String, step: String, proof: String = proof)
        async throws -> (status: HTTPResponse.Status, body: [String: Any], headers: HTTPFields)
    {
        try await client.call(
            .post, "/v1/verifications",
            json: #"{"to": "\#(to)", "provider": "firebase", "multi_factor": \#(step), \#(proof)}"#)
    }

    @Test("enroll a phone factor, then sign in with it: each approval carries the user's new Firebase tokens")
    func enrollThenSignIn() async throws {
        try await GatewayHarness().run { client, runtime in
            let to = "+447400123471"
            try await Self.user(client, "alice@example.com")
            let idToken = try #require(try await Self.passwordSignIn(client, "alice@example.com")["idToken"] as? String)
            let enroll = try await Self.start(
                client, to: to, step: #"{"type": "enroll", "id_token": "\#(idToken)", "display_name": "Work phone"}"#)
            #expect(enroll.status == .created, "\(enroll.body)")
            #expect(enroll.body["provider"] as? String == "firebase")
            #expect(enroll.body["sends"] as? Int == 1)
            let enrollID = try #require(enroll.body["id"] as? String)
            // Neither the ID token nor the session ever leaves the gateway.
            let read = try await client.call(.get, "/v1/verifications/\(enrollID)?include=timeline")
            let text = String(decoding: try JSONSerialization.data(withJSONObject: read.body), as: UTF8.self)
            #expect(!text.contains(idToken) && !text.lowercased().contains("session"))

            let enrolled = try await client.call(
                .post, "/v1/verifications/\(enrollID)/check", json: #"{"code": "\#(try sandboxCode(runtime, to: to))"}"#
            )
            #expect(enrolled.status == .ok)
            #expect(enrolled.body["status"] as? String == "approved")
            let enrolledTokens = try #require(enrolled.body["provider_tokens"] as? [String: String])
            #expect(Set(enrolledTokens.keys) == ["idToken", "refreshToken"])

            // The first factor now answers a pending credential; the second factor signs the user in.
            let step = try await Self.signInStep(client, "alice@example.com")
            let signIn = try await Self.start(client, to: to, step: step)
            #expect(signIn.status == .created, "\(signIn.body)")
            let id = try #require(signIn.body["id"] as? String)
            let code = try sandboxCode(runtime, to: to)
            let wrong = code == "000000" ? "111111" : "000000"
            let miss = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(wrong)"}"#)
            #expect(miss.status.code == 422)
            #expect(miss.body.errorCode == "incorrect_code")
            #expect(miss.body.error?["attempts_remaining"] as? Int == 4)
            let approved = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
            #expect(approved.body["status"] as? String == "approved")
            #expect(approved.body["token"] is String)
            let tokens = try #require(approved.body["provider_tokens"] as? [String: String])
            let payload = try #require(tokens["idToken"]?.split(separator: ".").dropFirst().first)
            let json = try #require(Base64URL.decode(payload))
            let claims = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
            #expect((claims["firebase"] as? [String: Any])?["sign_in_second_factor"] as? String == "phone")
            #expect(claims["email"] as? String == "alice@example.com")
        }
    }

    @Test("an expired pending credential: 422 invalid_token at the start, and at the check the verification expires")
    func expiredPendingCredential() async throws {
        let harness = GatewayHarness()
        let (app, runtime) = try await buildApplication(harness.options())
        try await app.test(.router) { client in
            let to = "+447400123472"
            try await Self.user(client, "bob@example.com", phones: [to])
            let stale = try await Self.signInStep(client, "bob@example.com")
            harness.clock.advance(by: FirebaseEmulator.defaultPendingCredentialLifetime + 1)
            let refused = try await Self.start(client, to: to, step: stale)
            #expect(refused.status.code == 422)
            #expect(refused.body.errorCode == "invalid_token")
            #expect(
                (refused.body.error?["provider"] as? [String: Any])?["code"] as? String
                    == "INVALID_MFA_PENDING_CREDENTIAL")
            #expect(runtime.sandbox?.outbox.all.isEmpty == true)

            // A credential that lapses between the start and the check.
            let step = try await Self.signInStep(client, "bob@example.com")
            harness.clock.advance(by: 120)
            let started = try await Self.start(client, to: to, step: step)
            let id = try #require(started.body["id"] as? String)
            harness.clock.advance(by: FirebaseEmulator.defaultPendingCredentialLifetime - 60)
            let check = try await client.call(
                .post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(try sandboxCode(runtime, to: to))"}"#)
            #expect(check.status.code == 410)
            #expect(check.body.errorCode == "expired")
            #expect(
                (check.body.error?["provider"] as? [String: Any])?["code"] as? String
                    == "INVALID_MFA_PENDING_CREDENTIAL")
            let read = try await client.call(.get, "/v1/verifications/\(id)")
            #expect(read.body["status"] as? String == "expired")
        }
    }

    @Test("two checks of the right code at once: one approves with the tokens, the other answers already_approved")
    func racingChecks() async throws {
        try await GatewayHarness().run { client, runtime in
            let to = "+447400123473"
            try await Self.user(client, "carol@example.com", phones: [to])
            for round in 0..<3 {
                let started = try await Self.start(
                    client, to: to, step: try await Self.signInStep(client, "carol@example.com"))
                let id = try #require(started.body["id"] as? String, "round \(round): \(started.body)")
                let code = try sandboxCode(runtime, to: to)
                let answers = try await withThrowingTaskGroup(of: (Int, String?, Bool).self) { group in
                    for _ in 0..<2 {
                        group.addTask {
                            let answer = try await client.call(
                                .post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
                            return (
                                Int(answer.status.code), answer.body.errorCode, answer.body["provider_tokens"] != nil
                            )
                        }
                    }
                    var all: [(Int, String?, Bool)] = []
                    for try await answer in group { all.append(answer) }
                    return all
                }
                #expect(answers.filter { $0.0 == 200 && $0.2 }.count == 1, "round \(round): \(answers)")
                #expect(
                    answers.filter { $0.0 == 409 && $0.1 == "already_approved" }.count == 1,
                    "round \(round): \(answers)")
                let read = try await client.call(.get, "/v1/verifications/\(id)")
                #expect(read.body["status"] as? String == "approved")
            }
        }
    }

    @Test("a wrong code racing the right one: the right one approves, the wrong one is counted or already_approved")
    func wrongAndRightRace() async throws {
        try await GatewayHarness().run { client, runtime in
            let to = "+447400123474"
            try await Self.user(client, "dan@example.com", phones: [to])
            let started = try await Self.start(
                client, to: to, step: try await Self.signInStep(client, "dan@example.com"))
            let id = try #require(started.body["id"] as? String)
            let code = try sandboxCode(runtime, to: to)
            let wrong = code == "000000" ? "111111" : "000000"
            let answers = try await withThrowingTaskGroup(of: (String, String?).self) { group in
                for attempt in [code, wrong] {
                    group.addTask {
                        let answer = try await client.call(
                            .post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(attempt)"}"#)
                        return (attempt, answer.body.errorCode ?? (answer.body["status"] as? String))
                    }
                }
                var all: [String: String?] = [:]
                for try await (attempt, outcome) in group { all[attempt] = outcome }
                return all
            }
            #expect(answers[code] == "approved", "\(answers)")
            #expect(["incorrect_code", "already_approved"].contains(answers[wrong] ?? nil), "\(answers)")
            let read = try await client.call(.get, "/v1/verifications/\(id)")
            #expect(read.body["status"] as? String == "approved")
        }
    }

    @Test("multi_factor goes only to a provider that runs it; a gateway test number or a bad object is refused")
    func routingAndValidation() async throws {
        let harness = GatewayHarness()
        let (app, runtime) = try await buildApplication(
            harness.options(
                config: """
                    sandbox: true
                    routing:
                      default: [twilio, firebase]
                    test_numbers: {"+447400123499": "424242"}
                    """))
        try await app.test(.router) { client in
            let to = "+447400123475"
            try await Self.user(client, "erin@example.com", phones: [to])
            let step = try await Self.signInStep(client, "erin@example.com")
            // Twilio comes first but runs no second factor: it is passed over.
            let routed = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "\#(to)", "multi_factor": \#(step), \#(Self.proof)}"#)
            #expect(routed.body["provider"] as? String == "firebase", "\(routed.body)")
            let forced = try await client.call(
                .post, "/v1/verifications",
                json: #"{"to": "\#(to)", "provider": "twilio", "multi_factor": \#(step), \#(Self.proof)}"#)
            #expect(forced.status == .badRequest)
            #expect(forced.body.errorCode == "invalid_request")
            #expect((forced.body.error?["message"] as? String)?.contains("multi-factor") == true)
            let test = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+447400123499", "multi_factor": \#(step)}"#)
            #expect(test.body.errorCode == "invalid_request")
            let dryRun = try await client.call(
                .post, "/v1/routing/dry-run",
                json:
                    #"{"to": "\#(to)", "multi_factor": {"type": "enroll"}, "app_verification": {"type": "recaptcha"}}"#)
            #expect(dryRun.body["provider"] as? String == "firebase")
            let skipped = try #require(dryRun.body["skipped"] as? [[String: String]])
            #expect(skipped.contains(["provider": "twilio", "reason": "multi_factor_not_supported"]))
            let providers = try await client.call(.get, "/v1/admin/providers")
            let firebase = (providers.body["providers"] as? [[String: Any]])?.first {
                $0["id"] as? String == "firebase"
            }
            #expect(firebase?["multi_factor_types"] as? [String] == ["enroll", "sign_in"])

            for bad in [
                #"{"type": "sign_in", "pending_credential": "x"}"#,
                #"{"type": "sign_in", "pending_credential": "x", "enrollment_id": "y", "id_token": "z"}"#,
                #"{"type": "enroll"}"#,
                #"{"type": "enroll", "id_token": "a b"}"#,
                #"{"type": "sign_in", "pending_credential": "a\u0001b", "enrollment_id": "y"}"#,
                #"{"type": "unlock", "id_token": "z"}"#,
                #"{"type": "enroll", "id_token": "z", "display_name": "two\nlines"}"#,
                #""sign_in""#,
            ] {
                let refused = try await client.call(
                    .post, "/v1/verifications",
                    json: #"{"to": "\#(to)", "provider": "firebase", "multi_factor": \#(bad), \#(Self.proof)}"#)
                #expect(refused.status == .badRequest, "\(bad)")
                #expect(refused.body.errorCode == "invalid_request", "\(bad)")
            }
            #expect(runtime.sandbox?.outbox.all.filter { $0.to == to }.count == 1)
        }
    }

    @Test("enrollment errors reach the caller in the one error shape, with Firebase's string")
    func enrollmentErrors() async throws {
        try await GatewayHarness().run { client, runtime in
            let created = try await client.call(
                .post, "\(Self.toolkit)/v1/accounts:signUp?\(Self.key)",
                json: #"{"email": "frank@example.com", "password": "\#(Self.password)", "returnSecureToken": true}"#,
                key: nil)
            let unverified = try #require(created.body["idToken"] as? String)
            let refused = try await Self.start(
                client, to: "+447400123476", step: #"{"type": "enroll", "id_token": "\#(unverified)"}"#)
            #expect(refused.status == .badRequest)
            #expect(refused.body.errorCode == "invalid_request")
            #expect((refused.body.error?["provider"] as? [String: Any])?["code"] as? String == "UNVERIFIED_EMAIL")
            let garbled = try await Self.start(
                client, to: "+447400123476", step: #"{"type": "enroll", "id_token": "not.a.token"}"#)
            #expect(garbled.status.code == 422)
            #expect(garbled.body.errorCode == "invalid_token")
            #expect(runtime.sandbox?.outbox.all.isEmpty == true)
        }
    }

    @Test("safety_net is refused with 400 naming play_integrity, at a start, a resend and a dry run")
    func safetyNetRetired() async throws {
        try await GatewayHarness().run { client, runtime in
            let proof = #""app_verification": {"type": "safety_net", "token": "sn-token"}"#
            let start = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+447400123477", "provider": "firebase", \#(proof)}"#)
            #expect(start.status == .badRequest)
            #expect(start.body.errorCode == "invalid_request")
            let message = start.body.error?["message"] as? String ?? ""
            #expect(message.contains("play_integrity") && message.contains("safety_net"), "\(message)")
            let dryRun = try await client.call(
                .post, "/v1/routing/dry-run", json: #"{"to": "+447400123477", \#(proof)}"#)
            #expect(dryRun.body.errorCode == "invalid_request")
            let started = try await client.call(
                .post, "/v1/verifications",
                json: #"{"to": "+447400123477", "provider": "firebase", \#(FirebaseMultiFactorAPITests.proof)}"#)
            let id = try #require(started.body["id"] as? String)
            let resend = try await client.call(.post, "/v1/verifications/\(id)/resend", json: "{\(proof)}")
            #expect(resend.status == .badRequest)
            #expect((resend.body.error?["message"] as? String)?.contains("play_integrity") == true)
            #expect(runtime.sandbox?.outbox.all.count == 1)
        }
    }
}
