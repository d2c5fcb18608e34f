import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Testing

@testable import GatewayVonage

/// The emulator on Vonage's wire: silent authentication as the v2 spec describes it (`check_url` redirects
/// to a `code` the backend checks once) and WhatsApp steps.
@Suite("Vonage emulator: silent auth and WhatsApp on the wire")
struct VonageEmulatorTests {
    static let number = "14155550100"

    /// One emulator with a manual clock, its callbacks kept.
    struct Rig {
        let harness: VonageHarness

        init() throws { harness = try VonageHarness() }

        var emulator: VonageEmulator { harness.emulator }

        func call(_ method: HTTPRequest.Method, _ path: String, json: String? = nil) async throws -> TransportResponse {
            var headers = HTTPFields()
            if path.hasPrefix("/v2/verify"), !path.contains("/silent-auth/") {
                let basic = Data("\(VonageSandbox.apiKey):\(VonageSandbox.apiSecret)".utf8).base64EncodedString()
                headers[.authorization] = "Basic " + basic
            }
            if json != nil { headers[.contentType] = "application/json" }
            let outcome = await emulator.handle(
                EmulatorRequest(
                    method: method, path: path, query: nil, headerFields: headers, body: Data((json ?? "").utf8)))
            guard case .response(let response) = outcome else { throw VonageTestFailure.reset }
            return response
        }

        /// Starts a v2 request with `workflow` (JSON array) and returns its id and `check_url`.
        func start(_ workflow: String) async throws -> (id: String, checkURL: String?) {
            let response = try await call(.post, "/v2/verify", json: #"{"brand": "Gateway", "workflow": \#(workflow)}"#)
            #expect(response.status.code == 202)
            let started = try JSONDecoder().decode(VonageWire.StartResponse.self, from: response.body)
            return (started.requestID, started.checkURL)
        }

        /// The emulator path of a URL it handed out (on the gateway's address, under the mount).
        static func path(of url: String) throws -> String {
            let path = try #require(URL(string: url)).path(percentEncoded: true)
            #expect(path.hasPrefix(VonageHarness.mount))
            return String(path.dropFirst(VonageHarness.mount.count))
        }

        /// Follows `check_url` as the device would: every 30x to the emulator, until an answer that is not one
        /// or a redirect that leaves the emulator. Returns the last response and the redirects taken.
        func follow(_ checkURL: String) async throws -> (TransportResponse, [String]) {
            var url = checkURL
            var hops: [String] = []
            for _ in 0..<5 {
                let response = try await call(.get, try Self.path(of: url))
                guard (300..<400).contains(response.status.code) else { return (response, hops) }
                let location = try #require(response.headerFields[.location])
                hops.append(location)
                guard location.hasPrefix("http://localhost:8080" + VonageHarness.mount) else { return (response, hops) }
                url = location
            }
            Issue.record("too many redirects")
            throw VonageTestFailure.reset
        }

        /// The code the device ends with after following `checkURL`.
        func deviceCode(_ checkURL: String?) async throws -> String {
            let url = try #require(checkURL)
            let (last, _) = try await follow(url)
            return try #require(VonageEmulatorTests.body(last)["code"])
        }

        /// The callbacks the gateway got, once those on their way have arrived.
        func callbacks() async throws -> [VonageWire.Callback] {
            await emulator.deliverPending()
            return try harness.callbacks.requests.map {
                try JSONDecoder().decode(VonageWire.Callback.self, from: $0.body)
            }
        }
    }

    static func body(_ response: TransportResponse) -> [String: String] {
        (try? JSONDecoder().decode([String: String].self, from: response.body)) ?? [:]
    }

    @Test("check_url redirects (302) to the network's check, which answers {request_id, code}; nothing completes yet")
    func redirectsEndInACode() async throws {
        let rig = try Rig()
        let (id, checkURL) = try await rig.start(#"[{"channel": "silent_auth", "to": "\#(Self.number)"}]"#)
        let url = try #require(checkURL)
        #expect(url.hasSuffix("/v2/verify/\(id)/silent-auth/redirect"))
        let (last, hops) = try await rig.follow(url)
        #expect(hops.count == 1 && hops[0].hasSuffix("/v2/verify/\(id)/silent-auth/network"))
        #expect(last.status == .ok)
        let answer = Self.body(last)
        #expect(answer["request_id"] == id)
        let code = try #require(answer["code"])
        #expect((4...10).contains(code.count) && code.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) })
        // Not completed at redirect time: no callback, and the request is still live (a second start is 409).
        #expect(try await rig.callbacks().isEmpty)
        let again = try await rig.call(
            .post, "/v2/verify",
            json: #"{"brand": "Gateway", "workflow": [{"channel": "sms", "to": "\#(Self.number)"}]}"#)
        #expect(again.status.code == 409)
        // Following again gives the same code.
        #expect(Self.body(try await rig.follow(url).0)["code"] == code)
    }

    @Test("with a redirect_url the last redirect goes there with #request_id=…&code=…")
    func redirectURLCarriesTheCode() async throws {
        let rig = try Rig()
        let (id, checkURL) = try await rig.start(
            #"[{"channel": "silent_auth", "to": "\#(Self.number)", "redirect_url": "https://app.example/sa/done"}]"#)
        let url = try #require(checkURL)
        let (last, hops) = try await rig.follow(url)
        #expect(last.status == .found && hops.count == 2)
        let location = try #require(hops.last)
        let final = try #require(URLComponents(string: location))
        #expect(final.host == "app.example" && final.path == "/sa/done")
        var fragment = URLComponents()
        fragment.percentEncodedQuery = final.percentEncodedFragment
        let items = Dictionary(uniqueKeysWithValues: (fragment.queryItems ?? []).map { ($0.name, $0.value ?? "") })
        #expect(items["request_id"] == id)
        let code = try #require(items["code"])
        let checked = try await rig.call(.post, "/v2/verify/\(id)", json: #"{"code": "\#(code)"}"#)
        #expect(checked.status == .ok)
    }

    @Test("the code from the redirects completes the request only when checked; the callbacks say completed")
    func checkCompletes() async throws {
        let rig = try Rig()
        let (id, checkURL) = try await rig.start(
            #"[{"channel": "silent_auth", "to": "\#(Self.number)"}, {"channel": "sms", "to": "\#(Self.number)"}]"#)
        let early = try await rig.call(.post, "/v2/verify/\(id)", json: #"{"code": "1234"}"#)
        #expect(early.status.code == 409)
        #expect(String(decoding: early.body, as: UTF8.self).contains("#no-code"))
        let code = try await rig.deviceCode(checkURL)
        let checked = try await rig.call(.post, "/v2/verify/\(id)", json: #"{"code": "\#(code)"}"#)
        #expect(checked.status == .ok && Self.body(checked)["status"] == "completed")
        let callbacks = try await rig.callbacks()
        #expect(callbacks.map(\.type) == ["event", "summary"])
        #expect(callbacks.first?.channel == "silent_auth" && callbacks.allSatisfy { $0.status == "completed" })
        #expect(callbacks.last?.workflow?.map(\.status) == ["completed", "unused"])
        let after = try await rig.call(.post, "/v2/verify/\(id)", json: #"{"code": "\#(code)"}"#)
        #expect(after.status.code == 404)
    }

    @Test("silent auth has one attempt: a wrong code is 410 and ends the request; the 410 is the only word of it")
    func oneAttempt() async throws {
        let rig = try Rig()
        let (id, checkURL) = try await rig.start(
            #"[{"channel": "silent_auth", "to": "\#(Self.number)"}, {"channel": "sms", "to": "\#(Self.number)"}]"#)
        let code = try await rig.deviceCode(checkURL)
        let wrong = code == "zzzzzz" ? "yyyyyy" : "zzzzzz"
        let refused = try await rig.call(.post, "/v2/verify/\(id)", json: #"{"code": "\#(wrong)"}"#)
        #expect(refused.status.code == 410)
        #expect(try await rig.callbacks().isEmpty)
        let late = try await rig.call(.post, "/v2/verify/\(id)", json: #"{"code": "\#(code)"}"#)
        #expect(late.status.code == 404)
    }

    @Test("an sms check that completes sends the completed event and summary too")
    func smsCompletionCallbacks() async throws {
        let rig = try Rig()
        let (id, _) = try await rig.start(#"[{"channel": "sms", "to": "\#(Self.number)"}]"#)
        let code = try #require(rig.harness.code())
        #expect(try await rig.call(.post, "/v2/verify/\(id)", json: #"{"code": "\#(code)"}"#).status == .ok)
        #expect(
            try await rig.callbacks().map { "\($0.type) \($0.status)" } == ["event completed", "summary completed"])
    }

    @Test("check_url of an unknown request, or once the step is not silent auth, is 404")
    func redirectNotFound() async throws {
        let rig = try Rig()
        #expect(
            try await rig.call(.get, "/v2/verify/\(UUID().uuidString.lowercased())/silent-auth/redirect").status
                == .notFound)
        let (id, _) = try await rig.start(#"[{"channel": "sms", "to": "\#(Self.number)"}]"#)
        #expect(try await rig.call(.get, "/v2/verify/\(id)/silent-auth/network").status == .notFound)
    }

    @Test("a WhatsApp step needs a from number (422 without) and is a whatsapp message in the outbox")
    func whatsapp() async throws {
        let rig = try Rig()
        for from in ["", #", "from": "not-a-number""#] {
            let refused = try await rig.call(
                .post, "/v2/verify",
                json: #"{"brand": "Gateway", "workflow": [{"channel": "whatsapp", "to": "\#(Self.number)"\#(from)}]}"#)
            #expect(refused.status.code == 422)
            #expect(String(decoding: refused.body, as: UTF8.self).contains("workflow[0].from"))
        }
        let (id, _) = try await rig.start(
            #"[{"channel": "whatsapp", "to": "\#(Self.number)", "from": "\#(VonageSandbox.whatsappFrom)"}]"#)
        let message = try #require(rig.harness.outbox.last(to: "+" + Self.number))
        #expect(message.kind == .whatsapp && message.channel == "whatsapp" && message.provider == "vonage")
        let code = try #require(message.code)
        #expect(try await rig.call(.post, "/v2/verify/\(id)", json: #"{"code": "\#(code)"}"#).status == .ok)
    }
}
