import Foundation
import GatewayCore
import GatewayFirebase
import GatewayTestSupport
import GatewayTwilio
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Synchronization
import Testing

@testable import gateway

/// No full phone number, code, token or vendor secret in any log line at info level and above (issue 14,
/// item 5): whole flows through both vendors run with every log line kept, and the lines are searched.
@Suite("Privacy of the logs")
struct PrivacyLogTests {
    @Test("whole flows through both vendors log no number, code, token or secret at info and above")
    func logsKeepNothingPersonal() async throws {
        let logs = CapturedLogs()
        let harness = GatewayHarness()
        var options = harness.options()
        options.logger = logs.logger(label: "gateway")
        let (app, runtime) = try await buildApplication(options)
        let (secrets, codes) = try await app.test(.router) { client in
            var secrets: [String: String] = [
                "the API key": GatewayHarness.apiKey,
                "Twilio's auth token": TwilioSandbox.authToken,
                "Firebase's API key": FirebaseSandbox.apiKey,
            ]
            var codes: [String] = []
            // Twilio: start, wrong code, resend by voice, right code, timeline.
            let twilio = "+447400123457"
            let started = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "\#(twilio)", "provider": "twilio", "locales": ["de"]}"#)
            let id = try #require(started.body["id"] as? String)
            _ = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "000000"}"#)
            _ = try await client.call(.post, "/v1/verifications/\(id)/resend", json: #"{"channel": "voice"}"#)
            let code = try sandboxCode(runtime, to: twilio)
            codes.append(code)
            let approved = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
            secrets["the verification token"] = approved.body["token"] as? String
            _ = try await client.call(.get, "/v1/verifications/\(id)?include=timeline")

            // Firebase: start with a proof, right code; its tokens come back.
            let firebase = "+447400123458"
            let proof = #""app_verification": {"type": "recaptcha", "token": "sandbox-recaptcha-token-7"}"#
            let fStarted = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "\#(firebase)", "provider": "firebase", \#(proof)}"#)
            let fID = try #require(fStarted.body["id"] as? String)
            let fCode = try sandboxCode(runtime, to: firebase)
            codes.append(fCode)
            let fApproved = try await client.call(
                .post, "/v1/verifications/\(fID)/check", json: #"{"code": "\#(fCode)"}"#)
            let tokens = try #require(fApproved.body["provider_tokens"] as? [String: Any])
            secrets["Firebase's ID token"] = tokens["idToken"] as? String
            secrets["Firebase's refresh token"] = tokens["refreshToken"] as? String
            secrets["the app verification proof"] = "sandbox-recaptcha-token-7"

            // A vendor outage and a bad request, which log errors.
            _ = try await client.call(
                .put, "/sandbox/faults/twilio", json: #"{"server_error_status": 503, "remaining": 1}"#)
            _ = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+447400123459", "provider": "twilio"}"#)
            _ = try await client.call(.post, "/v1/verifications", json: #"{"to": "+447400123460", "colour": "red"}"#)
            for number in [twilio, firebase, "+447400123459", "+447400123460"] {
                secrets["the number \(number)"] = number
                secrets["the digits of \(number)"] = String(number.dropFirst())
            }
            return (secrets, codes)
        }
        let lines = logs.lines(atLeast: .info)
        #expect(lines.count > 10, "the flows logged")
        // The lines that name a number are in the scan, masked: the search below could find a leak.
        #expect(lines.contains { $0.contains(PhoneNumber.mask("+447400123457")) })
        #expect(lines.contains { $0.contains(PhoneNumber.mask("+447400123459")) })
        for (what, value) in secrets {
            let found = lines.filter { $0.contains(value) }
            #expect(found.isEmpty, "\(what) is in the log: \(found.first ?? "")")
        }
        // The sandbox shows the codes it "sends" in its own line, by design (docs/design.md §7): they are the
        // emulator's, never a real user's. No other line may carry one.
        for code in codes {
            let found = lines.filter { $0.contains(code) && !$0.hasPrefix("sandbox message sent") }
            #expect(found.isEmpty, "a code is in the log: \(found.first ?? "")")
        }
    }
}
