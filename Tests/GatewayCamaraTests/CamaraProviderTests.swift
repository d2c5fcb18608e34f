import Crypto
import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Testing

@testable import GatewayCamara

@Suite("CAMARA: SIM Swap signal")
struct CamaraSimSwapTests {
    @Test("A SIM changed within the window is a swap; one changed before it, or never set, is not")
    func swapWindow() async throws {
        let h = try CamaraHarness()
        try await h.set("+447400100001", #"{"sim_changed_hours_ago": 1}"#)
        try await h.set("+447400100002", #"{"sim_changed_hours_ago": 100}"#)
        #expect(try await h.provider.simSwapped(try PhoneNumber(parsing: "+447400100001"), withinHours: 72))
        #expect(try await !h.provider.simSwapped(try PhoneNumber(parsing: "+447400100002"), withinHours: 72))
        #expect(try await h.provider.simSwapped(try PhoneNumber(parsing: "+447400100002"), withinHours: 240))
        #expect(try await !h.provider.simSwapped(try PhoneNumber(parsing: "+447400100003"), withinHours: 72))
    }

    @Test("The check sends the number and maxAge with a bearer token and an x-correlator")
    func checkOnTheWire() async throws {
        let h = try CamaraHarness()
        _ = try await h.provider.simSwapped(try PhoneNumber(parsing: "+447400100004"), withinHours: 12)
        let check = try #require(h.recorder.requests.first { $0.url.path.hasSuffix("/sim-swap/v2/check") })
        let body = try JSONDecoder().decode(CamaraWire.CheckSimSwap.self, from: check.body)
        #expect(body.phoneNumber == "+447400100004" && body.maxAge == 12)
        #expect(check.headerFields[.authorization]?.hasPrefix("Bearer ") == true)
        let correlator = try #require(check.headerFields[HTTPField.Name("x-correlator")!])
        #expect(CamaraWire.isCorrelator(correlator))
        let form = try #require(h.tokenRequests.first)
        #expect(form["grant_type"] == "client_credentials")
        #expect(form["scope"] == "dpv:FraudPreventionAndDetection sim-swap:check")
    }

    @Test("The two-legged token is reused until shortly before it ends, then fetched again")
    func tokenReuse() async throws {
        let h = try CamaraHarness()
        let number = try PhoneNumber(parsing: "+447400100005")
        _ = try await h.provider.simSwapped(number, withinHours: 72)
        _ = try await h.provider.simSwapped(number, withinHours: 72)
        #expect(h.tokenRequests.count == 1)
        h.clock.advance(by: TimeInterval(CamaraEmulator.tokenLifetime - 30))
        _ = try await h.provider.simSwapped(number, withinHours: 72)
        #expect(h.tokenRequests.count == 2)
    }

    @Test("A token the API no longer takes is dropped and the call made once more with a fresh one")
    func staleToken() async throws {
        let h = try CamaraHarness()
        let number = try PhoneNumber(parsing: "+447400100006")
        _ = try await h.provider.simSwapped(number, withinHours: 72)
        let row = try #require(CamaraErrorMapping.table.rows.first { $0.code == "UNAUTHENTICATED" })
        h.emulator.errors.arm(
            VendorErrorRow(
                code: row.code, httpStatus: 401, operation: "sim_swap_check", name: row.name, mapsTo: row.mapsTo,
                source: row.source))
        #expect(try await !h.provider.simSwapped(number, withinHours: 72))
        #expect(h.tokenRequests.count == 2)
    }

    @Test("The client assertion is ES256 by the configured key, for the token endpoint, five minutes long")
    func clientAssertion() async throws {
        let h = try CamaraHarness()
        let assertion = try h.provider.clientAssertion()
        let parts = assertion.split(separator: ".").map(String.init)
        try #require(parts.count == 3)
        func decode(_ part: String) throws -> Data {
            var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while text.count % 4 != 0 { text += "=" }
            return try #require(Data(base64Encoded: text))
        }
        let header = try JSONDecoder().decode([String: String].self, from: try decode(parts[0]))
        #expect(header["alg"] == "ES256")
        let claims = try #require(try JSONSerialization.jsonObject(with: try decode(parts[1])) as? [String: Any])
        #expect(
            claims["iss"] as? String == CamaraSandbox.clientID && claims["sub"] as? String == CamaraSandbox.clientID)
        #expect(claims["aud"] as? String == CamaraHarness.baseURL + "/token")
        let iat = try #require(claims["iat"] as? Double)
        let exp = try #require(claims["exp"] as? Double)
        #expect(exp - iat == 300)
        // Checked with swift-crypto directly, apart from the kit's JWS code.
        let key = try P256.Signing.PrivateKey(
            derRepresentation: try #require(Data(base64Encoded: CamaraSandbox.privateKeyDER)))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try decode(parts[2]))
        #expect(key.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)))
    }

    @Test("retrieve-date is the sim_swap_date action")
    func retrieveDate() async throws {
        let h = try CamaraHarness()
        try await h.set("+447400100007", #"{"sim_changed_at": "2026-11-30T10:00:00Z"}"#)
        let output = try await h.provider.perform(action: "sim_swap_date", input: ["phone_number": "+447400100007"])
        #expect(output["latest_sim_change"]?.stringValue == "2026-11-30T10:00:00Z")
        await #expect(throws: GatewayError.self) {
            _ = try await h.provider.perform(action: "sim_swap_date", input: ["phone_number": "07400"])
        }
    }

    @Test("A number the operator does not know is unsupported_destination, not an answer")
    func uncovered() async throws {
        let h = try CamaraHarness()
        try await h.set("+447400100008", #"{"covered": false}"#)
        do throws(GatewayError) {
            _ = try await h.provider.simSwapped(try PhoneNumber(parsing: "+447400100008"), withinHours: 72)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .unsupportedDestination && error.vendor?.code == "IDENTIFIER_NOT_FOUND")
        }
    }
}

@Suite("CAMARA: Number Verification (silent)")
struct CamaraNumberVerificationTests {
    @Test("A device whose network number matches is approved with no code")
    func match() async throws {
        let h = try CamaraHarness()
        let (started, reply) = try await h.silentVerification("+447400200001")
        #expect(started.channel == .silentAuth && started.reference != nil)
        #expect(reply.updates.map(\.change.status) == [.approved])
        let verify = try #require(h.recorder.requests.first { $0.url.path.hasSuffix("/number-verification/v2/verify") })
        let body = try JSONDecoder().decode(CamaraWire.NumberVerificationRequest.self, from: verify.body)
        // The SHA-256 of the number with its `+`, never the number itself.
        #expect(body.phoneNumber == nil)
        #expect(body.hashedPhoneNumber == Hex.lowercase(SHA256.hash(data: Data("+447400200001".utf8))))
        let form = try #require(h.tokenRequests.first)
        #expect(
            form["grant_type"] == "authorization_code"
                && form["redirect_uri"] == "http://localhost:8080/callbacks/camara")
    }

    @Test("Another number behind the connection fails the step; so does a device on Wi-Fi")
    func mismatchAndWiFi() async throws {
        let h = try CamaraHarness()
        try await h.set("+447400200002", #"{"network_number": "+447400299999"}"#)
        let mismatch = try await h.silentVerification("+447400200002").reply
        #expect(mismatch.updates.map(\.change.status) == [.failed])
        #expect(mismatch.updates.first?.change.reason == "number_mismatch")
        try await h.set("+447400200003", #"{"on_wifi": true}"#)
        let wifi = try await h.silentVerification("+447400200003").reply
        #expect(wifi.updates.first?.change.reason == "authorize:access_denied")
        #expect(!wifi.response.body.isEmpty && !String(decoding: wifi.response.body, as: UTF8.self).contains("code"))
    }

    @Test("The start's URL asks the purpose, the verify scope, prompt=none and the number as login_hint")
    func authorizationRequest() async throws {
        let h = try CamaraHarness()
        let started = try await h.provider.start(
            StartVerification(destination: .phone(try PhoneNumber(parsing: "+447400200004")), channel: .silentAuth))
        guard case .openURL(let opening) = started.nextAction else {
            Issue.record("no open_url")
            return
        }
        let query = FormEncoding.decode(try #require(URLComponents(string: opening.url)?.percentEncodedQuery))
        #expect(query["scope"] == "openid dpv:FraudPreventionAndDetection number-verification:verify")
        #expect(query["prompt"] == "none" && query["response_type"] == "code")
        #expect(query["login_hint"] == "tel:+447400200004" && query["state"] == started.reference)
    }

    @Test("Without a public base URL the provider is a signal only: no silent_auth channel, no callbacks")
    func signalOnly() async throws {
        let h = try CamaraHarness(publicBaseURL: nil)
        #expect(h.provider.capabilities.channels.isEmpty)
        #expect(h.provider.capabilities.withheld.contains(.callbacks))
        #expect(try await !h.provider.simSwapped(try PhoneNumber(parsing: "+447400200005"), withinHours: 72))
    }

    @Test("A callback for a state no verification has changes nothing")
    func unknownState() async throws {
        let h = try CamaraHarness()
        let callback = VendorCallback(
            method: .get, url: try #require(URL(string: "http://localhost:8080/callbacks/camara?code=x&state=nope")),
            subpath: "/", query: "code=x&state=nope", headerFields: [:], body: Data())
        let reply = try await h.provider.handleCallback(callback, lookup: VerificationLookup { _ in nil })
        #expect(reply.updates.isEmpty && reply.response.status.code == 404)
    }

    @Test("An authorization code is good for one exchange")
    func codeUsedOnce() async throws {
        let h = try CamaraHarness()
        let started = try await h.provider.start(
            StartVerification(destination: .phone(try PhoneNumber(parsing: "+447400200006")), channel: .silentAuth))
        guard case .openURL(let opening) = started.nextAction else {
            Issue.record("no open_url")
            return
        }
        let url = try #require(URLComponents(string: opening.url))
        let redirect = try await h.emulatorCall(.get, "/authorize", query: url.percentEncodedQuery)
        let location = try #require(redirect.headerFields[.location].flatMap(URLComponents.init(string:)))
        let code = try #require(location.queryItems?.first { $0.name == "code" }?.value)
        let assertion = try h.provider.clientAssertion()
        let form = FormEncoding.encode([
            ("grant_type", "authorization_code"), ("code", code),
            ("redirect_uri", "http://localhost:8080/callbacks/camara"),
            ("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"),
            ("client_assertion", assertion),
        ])
        let first = try await h.emulatorCall(.post, "/token", body: Data(form.utf8))
        let second = try await h.emulatorCall(.post, "/token", body: Data(form.utf8))
        #expect(first.status == .ok)
        #expect(second.status.code == 400 && String(decoding: second.body, as: UTF8.self).contains("invalid_grant"))
    }
}

@Suite("CAMARA: the emulator's wire rules")
struct CamaraEmulatorTests {
    @Test("A malformed x-correlator is 400 INVALID_ARGUMENT; a good one is echoed")
    func correlator() async throws {
        let h = try CamaraHarness()
        let bad = try await h.emulatorCall(
            .post, "/sim-swap/v2/check", headers: [HTTPField.Name("x-correlator")!: "has space"], body: Data("{}".utf8))
        #expect(bad.status.code == 400 && String(decoding: bad.body, as: UTF8.self).contains("INVALID_ARGUMENT"))
        let unauthenticated = try await h.emulatorCall(
            .post, "/sim-swap/v2/check", headers: [HTTPField.Name("x-correlator")!: "abc-123"], body: Data("{}".utf8))
        #expect(unauthenticated.status.code == 401)
        #expect(unauthenticated.headerFields[HTTPField.Name("x-correlator")!] == "abc-123")
    }

    @Test("A client assertion not signed by the client's key is invalid_client")
    func foreignAssertion() async throws {
        let h = try CamaraHarness()
        let other = P256.Signing.PrivateKey()
        let claims: JSONValue = [
            "iss": "gateway-sandbox", "sub": "gateway-sandbox", "aud": "http://x/token", "jti": "1",
            "iat": .number(h.clock.now.timeIntervalSince1970), "exp": .number(h.clock.now.timeIntervalSince1970 + 60),
        ]
        let raw = other.rawRepresentation
        let algorithm = JWSAlgorithm(
            name: "ES256",
            sign: { try P256.Signing.PrivateKey(rawRepresentation: raw).signature(for: $0).rawRepresentation },
            verify: { _, _ in false })
        let forged = try JWS.sign(claims, with: algorithm)
        let form = FormEncoding.encode([
            ("grant_type", "client_credentials"), ("scope", "dpv:FraudPreventionAndDetection sim-swap:check"),
            ("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"),
            ("client_assertion", forged),
        ])
        let answer = try await h.emulatorCall(.post, "/token", body: Data(form.utf8))
        #expect(answer.status.code == 401 && String(decoding: answer.body, as: UTF8.self).contains("invalid_client"))
    }
}
