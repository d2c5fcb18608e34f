import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import gateway

/// The operator console: its files and their headers, signing in and out, the session on the admin API, the
/// CSRF rule and the scopes.
@Suite("Operator console")
struct ConsoleAPITests {
    /// A signed-in console: the cookie to send and the CSRF token.
    struct Signed {
        var cookie: String
        var csrf: String
        var setCookie: String
    }

    static func signIn(_ client: any TestClientProtocol, key: String) async throws -> Signed {
        let answer = try await client.call(.post, "/console/session", json: #"{"key": "\#(key)"}"#, key: nil)
        #expect(answer.status == .created)
        let setCookie = try #require(answer.headers[.setCookie])
        let pair = try #require(setCookie.split(separator: ";").first.map(String.init))
        return Signed(cookie: pair, csrf: try #require(answer.body["csrf_token"] as? String), setCookie: setCookie)
    }

    static func headers(_ signed: Signed, csrf: String? = nil) -> HTTPFields {
        var fields: HTTPFields = [.cookie: signed.cookie]
        if let csrf { fields[HTTPField.Name("X-CSRF-Token")!] = csrf }
        return fields
    }

    static func block(_ runtime: GatewayRuntime, _ prefix: String, clock: ManualClock) async throws {
        try await runtime.service.store.block(
            PrefixBlock(
                prefix: prefix, blockedAt: clock.now, until: clock.now.addingTimeInterval(3600), starts: 20,
                approvals: 0))
    }

    @Test("the page, its script and style: a strict CSP, no framing, no sniffing, no inline script or style")
    func pageAndHeaders() async throws {
        try await GatewayHarness().run { client, _ in
            for (path, type) in [
                ("/console", "text/html"), ("/console/console.js", "text/javascript"),
                ("/console/console.css", "text/css"), ("/console/icon.svg", "image/svg+xml"),
            ] {
                // Served as the file in Sources/gateway/Console/Assets is, byte for byte.
                let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                    .appendingPathComponent("../../Sources/gateway/Console/Assets")
                    .appendingPathComponent(
                        path == "/console" ? "index.html" : String(path.dropFirst("/console/".count)))
                let bytes = try Data(contentsOf: file)
                try await client.execute(uri: path, method: .get) { response in
                    #expect(Array(response.body.readableBytesView) == [UInt8](bytes), "\(path)")
                    #expect(response.status == .ok, "\(path)")
                    #expect(response.headers[.contentType]?.hasPrefix(type) == true, "\(path)")
                    let csp = try #require(response.headers[.contentSecurityPolicy])
                    #expect(csp.contains("default-src 'none'"))
                    #expect(csp.contains("script-src 'self'"))
                    #expect(csp.contains("frame-ancestors 'none'"))
                    #expect(!csp.contains("unsafe"))
                    #expect(response.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
                    #expect(response.headers[.xContentTypeOptions] == "nosniff")
                }
            }
            let html = try await client.execute(uri: "/console", method: .get) {
                String(buffer: $0.body)
            }
            // Every script is a file; no inline script, handler or style attribute.
            #expect(html.components(separatedBy: "<script").count == 2)
            #expect(html.contains(#"<script src="/console/console.js" defer></script>"#))
            #expect(!html.contains("style="))
            #expect(!html.contains("<style"))
            #expect(!html.contains(" onclick") && !html.contains(" onload"))
            #expect(!html.contains("http://") && !html.contains("https://"), "no other host")
            // The SVG namespace is a name, not an address the page loads.
            let script = String(decoding: ConsoleAssets.script, as: UTF8.self).replacingOccurrences(
                of: "\"http://www.w3.org/2000/svg\"", with: "")
            #expect(!script.contains("innerHTML") && !script.contains("eval("))
            #expect(!script.contains("http://") && !script.contains("https://"))
        }
    }

    @Test("an admin key signs in: HttpOnly, SameSite=Strict cookie with an expiry, usable on the admin API")
    func adminSignIn() async throws {
        try await GatewayHarness().run { client, _ in
            let signed = try await Self.signIn(client, key: GatewayHarness.apiKey)
            #expect(signed.setCookie.contains("HttpOnly"))
            #expect(signed.setCookie.contains("SameSite=Strict"))
            #expect(signed.setCookie.contains("Max-Age=28800"))
            #expect(signed.setCookie.contains("Path=/"))
            #expect(!signed.setCookie.contains("Secure"), "plain HTTP here; HTTPS adds Secure")
            #expect(signed.cookie.hasPrefix("gateway_console="))
            let secret = String(signed.cookie.dropFirst("gateway_console=".count))
            #expect(secret.count == 64)
            #expect(signed.csrf != secret)

            let current = try await client.call(.get, "/console/session", key: nil, headers: Self.headers(signed))
            #expect(current.status == .ok)
            #expect(current.body["csrf_token"] as? String == signed.csrf)
            #expect(current.body["signed_in"] as? Bool == true)
            #expect((current.body["key"] as? [String: Any])?["scopes"] as? [String] == ["admin", "verify"])
            #expect(current.headers[.cacheControl] == "no-store")

            let providers = try await client.call(.get, "/v1/admin/providers", key: nil, headers: Self.headers(signed))
            #expect(providers.status == .ok)
            let stats = try await client.call(.get, "/v1/admin/stats", key: nil, headers: Self.headers(signed))
            #expect(stats.status == .ok)
            #expect(stats.body["window"] as? String == "1h")
            // Without the cookie, as before: a key is needed.
            let bare = try await client.call(.get, "/v1/admin/providers", key: nil)
            #expect(bare.status == .unauthorized)
        }
    }

    @Test("behind a proxy that ends TLS (an https public_base_url) the cookie is Secure")
    func secureCookie() async throws {
        let harness = GatewayHarness()
        let options = try harness.options(config: "sandbox: true\npublic_base_url: \"https://gateway.example.test\"\n")
        let (app, _) = try await buildApplication(options)
        try await app.test(.router) { client in
            let signed = try await Self.signIn(client, key: GatewayHarness.apiKey)
            #expect(signed.setCookie.hasSuffix("; Secure"))
        }
    }

    @Test("a wrong key, a verify key and a malformed body are refused, and no cookie is set")
    func refusedSignIns() async throws {
        let harness = GatewayHarness()
        let (app, runtime) = try await buildApplication(harness.options())
        let store = try #require(runtime.service.store as? SQLiteVerificationStore)
        let verifier = StoredAPIKey.make(name: "app", scopes: [.verify], countries: nil, at: Date())
        try await store.insertAPIKey(verifier.stored)
        try await app.test(.router) { client in
            let wrong = try await client.call(.post, "/console/session", json: #"{"key": "sk_wrong"}"#, key: nil)
            #expect(wrong.status == .unauthorized)
            #expect(wrong.body.errorCode == "unauthorized")
            #expect(wrong.headers[.setCookie] == nil)
            let verify = try await client.call(
                .post, "/console/session", json: #"{"key": "\#(verifier.secret)"}"#, key: nil)
            #expect(verify.status == .forbidden)
            #expect(verify.body.errorCode == "forbidden")
            #expect(verify.headers[.setCookie] == nil)
            for body in [#"{}"#, #"{"key": 7}"#, #"{"key": "x", "remember": true}"#, "[1]", "not json"] {
                let bad = try await client.call(.post, "/console/session", json: body, key: nil)
                #expect(bad.status == .badRequest, "\(body)")
                #expect(bad.body.errorCode == "invalid_request")
            }
            let form = try await client.execute(
                uri: "/console/session", method: .post,
                headers: [.contentType: "application/x-www-form-urlencoded"], body: ByteBuffer(string: "key=x")
            ) { $0.status }
            #expect(form == .unsupportedMediaType)
            // A forged or unknown cookie is no session.
            let forged = try await client.call(
                .get, "/v1/admin/providers", key: nil,
                headers: [.cookie: "gateway_console=" + String(repeating: "0", count: 64)])
            #expect(forged.status == .unauthorized)
            let junk = try await client.call(
                .get, "/console/session", key: nil, headers: [.cookie: "gateway_console=../../x; other=1"])
            #expect(junk.body["signed_in"] as? Bool == false)
            let junkOut = try await client.call(
                .delete, "/console/session", key: nil, headers: [.cookie: "gateway_console=../../x"])
            #expect(junkOut.status == .unauthorized)
        }
    }

    @Test("what changes state needs the CSRF token: missing or wrong is 403 and changes nothing")
    func csrf() async throws {
        let harness = GatewayHarness()
        try await harness.run { client, runtime in
            try await Self.block(runtime, "+447400", clock: harness.clock)
            let signed = try await Self.signIn(client, key: GatewayHarness.apiKey)
            let missing = try await client.call(
                .delete, "/v1/admin/blocks/%2B447400", key: nil, headers: Self.headers(signed))
            #expect(missing.status == .forbidden)
            #expect(missing.body.errorCode == "forbidden")
            let wrong = try await client.call(
                .delete, "/v1/admin/blocks/%2B447400", key: nil,
                headers: Self.headers(signed, csrf: String(repeating: "f", count: 64)))
            #expect(wrong.status == .forbidden)
            #expect(try await runtime.service.prefixBlocks().map(\.prefix) == ["+447400"], "nothing changed")
            let lifted = try await client.call(
                .delete, "/v1/admin/blocks/%2B447400", key: nil, headers: Self.headers(signed, csrf: signed.csrf))
            #expect(lifted.status == .ok)
            #expect(try await runtime.service.prefixBlocks().isEmpty)

            // Another session's token is not this one's.
            let other = try await Self.signIn(client, key: GatewayHarness.apiKey)
            #expect(other.csrf != signed.csrf)
            try await Self.block(runtime, "+447401", clock: harness.clock)
            let crossed = try await client.call(
                .delete, "/v1/admin/blocks/%2B447401", key: nil, headers: Self.headers(signed, csrf: other.csrf))
            #expect(crossed.status == .forbidden)

            // On /v1 a session only reads, CSRF token or not.
            let start = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+447400123456"}"#, key: nil,
                headers: Self.headers(signed, csrf: signed.csrf))
            #expect(start.status == .forbidden)
        }
    }

    @Test("two consoles lift the same block at once: one lifts it, the other is told there is none")
    func concurrentLifts() async throws {
        let harness = GatewayHarness()
        try await harness.run { client, runtime in
            try await Self.block(runtime, "+447402", clock: harness.clock)
            let sessions = try await withThrowingTaskGroup(of: Signed.self) { group in
                for _ in 0..<8 { group.addTask { try await Self.signIn(client, key: GatewayHarness.apiKey) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(sessions.map(\.cookie)).count == 8, "every sign-in is its own session")
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for signed in sessions {
                    group.addTask {
                        try await client.call(
                            .delete, "/v1/admin/blocks/%2B447402", key: nil,
                            headers: Self.headers(signed, csrf: signed.csrf)
                        ).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .ok }.count == 1)
            #expect(statuses.filter { $0 == .notFound }.count == 7)
            #expect(try await runtime.service.prefixBlocks().isEmpty)
        }
    }

    @Test("a read key's session reads the admin API and cannot change anything, even with the CSRF token")
    func readKey() async throws {
        let harness = GatewayHarness()
        let (app, runtime) = try await buildApplication(harness.options())
        let store = try #require(runtime.service.store as? SQLiteVerificationStore)
        let reader = StoredAPIKey.make(name: "support", scopes: [.read], countries: nil, at: Date())
        try await store.insertAPIKey(reader.stored)
        try await app.test(.router) { client in
            let started = try await client.call(.post, "/v1/verifications", json: #"{"to": "+447400123456"}"#)
            let id = try #require(started.body["id"] as? String)
            try await Self.block(runtime, "+447400", clock: harness.clock)
            let signed = try await Self.signIn(client, key: reader.secret)
            #expect(
                try await client.call(.get, "/v1/admin/blocks", key: nil, headers: Self.headers(signed)).status == .ok)
            let read = try await client.call(
                .get, "/v1/verifications/\(id)?include=timeline", key: nil, headers: Self.headers(signed))
            #expect(read.status == .ok)
            #expect((read.body["timeline"] as? [Any])?.isEmpty == false)
            let lift = try await client.call(
                .delete, "/v1/admin/blocks/%2B447400", key: nil, headers: Self.headers(signed, csrf: signed.csrf))
            #expect(lift.status == .forbidden)
            #expect(lift.body.errorCode == "forbidden")
            #expect(try await runtime.service.prefixBlocks().count == 1)
            // Revoking the key ends its sessions at once.
            #expect(try await store.revokeAPIKey(id: reader.stored.key.id, at: Date()))
            let revoked = try await client.call(.get, "/v1/admin/blocks", key: nil, headers: Self.headers(signed))
            #expect(revoked.status == .unauthorized)
        }
    }

    @Test("a session expires eight hours after sign-in; signing out needs the CSRF token and ends it")
    func expiryAndSignOut() async throws {
        let harness = GatewayHarness()
        try await harness.run { client, _ in
            let signed = try await Self.signIn(client, key: GatewayHarness.apiKey)
            harness.clock.advance(by: 8 * 3600 - 1)
            #expect(
                try await client.call(.get, "/console/session", key: nil, headers: Self.headers(signed)).status == .ok)
            harness.clock.advance(by: 1)
            let expired = try await client.call(.get, "/v1/admin/providers", key: nil, headers: Self.headers(signed))
            #expect(expired.status == .unauthorized)
            let ended = try await client.call(.get, "/console/session", key: nil, headers: Self.headers(signed))
            #expect(ended.status == .ok)
            #expect(ended.body["signed_in"] as? Bool == false)
            #expect(ended.body["csrf_token"] == nil)

            let second = try await Self.signIn(client, key: GatewayHarness.apiKey)
            let noToken = try await client.call(.delete, "/console/session", key: nil, headers: Self.headers(second))
            #expect(noToken.status == .forbidden)
            let out = try await client.call(
                .delete, "/console/session", key: nil, headers: Self.headers(second, csrf: second.csrf))
            #expect(out.status == .ok)
            #expect(out.headers[.setCookie]?.contains("Max-Age=0") == true)
            let after = try await client.call(.get, "/v1/admin/providers", key: nil, headers: Self.headers(second))
            #expect(after.status == .unauthorized)
        }
    }

    @Test("two gateways on one store: a session made on one is honoured and ended on the other")
    func sessionsAcrossInstances() async throws {
        let first = GatewayHarness()
        let second = GatewayHarness(clock: first.clock, dataDirectory: first.dataDirectory)
        let (appA, _) = try await buildApplication(first.options())
        let (appB, _) = try await buildApplication(second.options())
        try await appA.test(.router) { a in
            try await appB.test(.router) { b in
                let signed = try await Self.signIn(a, key: GatewayHarness.apiKey)
                #expect(
                    try await b.call(.get, "/v1/admin/blocks", key: nil, headers: Self.headers(signed)).status == .ok)
                let out = try await b.call(
                    .delete, "/console/session", key: nil, headers: Self.headers(signed, csrf: signed.csrf))
                #expect(out.status == .ok)
                #expect(
                    try await a.call(.get, "/v1/admin/blocks", key: nil, headers: Self.headers(signed)).status
                        == .unauthorized)
            }
        }
    }

    @Test("the overview's statistics: per vendor starts, approvals and failover errors; a bad window is 400")
    func statistics() async throws {
        let harness = GatewayHarness()
        try await harness.run { client, runtime in
            let started = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+447400123450", "provider": "twilio"}"#)
            let id = try #require(started.body["id"] as? String)
            let code = try sandboxCode(runtime, to: "+447400123450")
            _ = try await client.call(.post, "/v1/verifications/\(id)/check", json: #"{"code": "\#(code)"}"#)
            _ = try await client.call(
                .post, "/v1/verifications", json: #"{"to": "+447400123451", "provider": "twilio"}"#)
            let stats = try await client.call(.get, "/v1/admin/stats?window=24h")
            #expect(stats.status == .ok)
            #expect(stats.body["bucket_seconds"] as? Int == 3600)
            let vendors = try #require(stats.body["providers"] as? [[String: Any]])
            let twilio = try #require(vendors.first { $0["id"] as? String == "twilio" })
            #expect(twilio["starts"] as? Int == 2)
            #expect(twilio["approvals"] as? Int == 1)
            #expect(twilio["conversion"] as? Double == 0.5)
            let series = try #require(twilio["series"] as? [String: [Int]])
            #expect(series["starts"]?.count == 24)
            #expect(series["starts"]?.last == 2)
            let bad = try await client.call(.get, "/v1/admin/stats?window=7d")
            #expect(bad.status == .badRequest)
            #expect(bad.body.errorCode == "invalid_request")
            let list = try await client.call(.get, "/v1/admin/experiments")
            #expect(list.status == .ok)
            #expect((list.body["experiments"] as? [Any])?.isEmpty == true)
        }
    }

    static let pricedConfig = """
        sandbox: true
        routing:
          default: [twilio, sinch]
        prices:
          twilio: {default: 0.05, GB: 0.04}
        api_keys:
          - {name: app, key_env: CONSOLE_VERIFY_KEY, scopes: [verify]}
          - {name: support, key_env: CONSOLE_READ_KEY, scopes: [read]}
        """

    @Test("per vendor and country: starts, conversion, cost per approval; vendor latency; lookup by number")
    func countriesLatencyAndLookup() async throws {
        let harness = GatewayHarness()
        let (app, runtime) = try await buildApplication(
            harness.options(
                config: Self.pricedConfig,
                environment: [
                    "CONSOLE_VERIFY_KEY": "sk_test_console_verify_01", "CONSOLE_READ_KEY": "sk_test_console_read_0001",
                ]))
        try await app.test(.router) { client in
            var ids: [String] = []
            for (to, provider) in [
                ("+447400123450", "twilio"), ("+447400123450", "twilio"), ("+447400123451", "twilio"),
                ("+33612345678", "twilio"), ("+33612345679", "sinch"),
            ] {
                let started = try await client.call(
                    .post, "/v1/verifications", json: #"{"to": "\#(to)", "provider": "\#(provider)"}"#)
                #expect(started.status == .created)
                ids.append(try #require(started.body["id"] as? String))
            }
            // The second start to …450 and the one to …451 are approved: GB has 2 of 3.
            for (index, to) in [(1, "+447400123450"), (2, "+447400123451")] {
                let code = try sandboxCode(runtime, to: to)
                let checked = try await client.call(
                    .post, "/v1/verifications/\(ids[index])/check", json: #"{"code": "\#(code)"}"#)
                #expect(checked.body["status"] as? String == "approved")
            }

            let countries = try await client.call(
                .get, "/v1/admin/stats/countries?window=24h", key: "sk_test_console_read_0001")
            #expect(countries.status == .ok)
            #expect(countries.body["window"] as? String == "24h")
            let cells = try #require(countries.body["cells"] as? [[String: Any]])
            func cell(_ provider: String, _ country: String) -> [String: Any]? {
                cells.first { $0["provider"] as? String == provider && $0["country"] as? String == country }
            }
            let gb = try #require(cell("twilio", "GB"))
            #expect(gb["starts"] as? Int == 3)
            #expect(gb["approvals"] as? Int == 2)
            #expect(abs((gb["conversion"] as? Double ?? 0) - 2.0 / 3.0) < 1e-9)
            // Three starts at GB's price, over two approvals.
            #expect(abs((gb["cost_per_approval"] as? Double ?? 0) - 0.06) < 1e-9)
            let fr = try #require(cell("twilio", "FR"))
            #expect(fr["starts"] as? Int == 1)
            #expect(fr["cost_per_approval"] is NSNull)
            #expect(abs((fr["cost"] as? Double ?? 0) - 0.05) < 1e-9)
            // Sinch has no price: no cost rather than a wrong one.
            #expect(try #require(cell("sinch", "FR"))["cost"] is NSNull)
            #expect(cells.first?["provider"] as? String == "twilio")
            let bad = try await client.call(.get, "/v1/admin/stats/countries?window=2h")
            #expect(bad.status == .badRequest)
            #expect(bad.body.errorCode == "invalid_request")
            let verifyOnly = try await client.call(
                .get, "/v1/admin/stats/countries", key: "sk_test_console_verify_01")
            #expect(verifyOnly.status == .forbidden)

            // Every start and check called its vendor: the latency percentiles count those calls.
            let stats = try await client.call(.get, "/v1/admin/stats")
            let vendors = try #require(stats.body["providers"] as? [[String: Any]])
            let twilio = try #require(
                vendors.first { $0["id"] as? String == "twilio" }?["latency_ms"] as? [String: Int])
            #expect(twilio["calls"] == 6)
            #expect((twilio["p50"] ?? -1) >= 0 && (twilio["p50"] ?? -1) <= (twilio["p95"] ?? -1))
            let sinch = try #require(vendors.first { $0["id"] as? String == "sinch" }?["latency_ms"] as? [String: Int])
            #expect(sinch["calls"] == 1)

            // By number, newest first, masked; a `+` sent unencoded reads as a space and is still understood.
            for query in ["%2B447400123450", "+447400123450", "%2B44%207400%20123450"] {
                let found = try await client.call(
                    .get, "/v1/admin/verifications?to=\(query)", key: "sk_test_console_read_0001")
                #expect(found.status == .ok, "\(query): \(found.body)")
                let list = try #require(found.body["verifications"] as? [[String: Any]])
                #expect(list.map { $0["id"] as? String } == [ids[1], ids[0]])
                #expect(list.first?["to"] as? String == "+4474******50")
                #expect(list.first?["status"] as? String == "approved")
                #expect(list.first?["country"] as? String == "GB")
                #expect(found.body["to"] as? String == "+4474******50")
            }
            let limited = try await client.call(.get, "/v1/admin/verifications?to=%2B447400123450&limit=1")
            #expect((limited.body["verifications"] as? [Any])?.count == 1)
            let none = try await client.call(.get, "/v1/admin/verifications?to=%2B447400999999")
            #expect((none.body["verifications"] as? [Any])?.isEmpty == true)
            for bad in ["", "?to=12", "?to=%2B447400123450&limit=0", "?to=%2B447400123450&limit=x"] {
                let answer = try await client.call(.get, "/v1/admin/verifications\(bad)")
                #expect(answer.status == .badRequest, "\(bad)")
                #expect(["invalid_request", "invalid_phone_number"].contains(answer.body.errorCode ?? ""), "\(bad)")
            }
        }
    }

    @Test("refusals for a rate limit, a country and a blocked prefix are counted in the store per kind")
    func refusals() async throws {
        let harness = GatewayHarness()
        let config = """
            sandbox: true
            countries: {deny: [KP]}
            pumping_guard: {prefix_digits: 6, min_starts: 20, conversion_floor: 0.2, cool_down_seconds: 3600}
            rate_limits:
              starts_per_destination: {limit: 1, window_seconds: 3600}
            """
        let (app, runtime) = try await buildApplication(try harness.options(config: config))
        try await app.test(.router) { client in
            let empty = try await client.call(.get, "/v1/admin/refusals")
            #expect(empty.status == .ok)
            #expect(empty.body["total"] as? Int == 0)
            #expect((empty.body["kinds"] as? [Any])?.isEmpty == true)
            let body = #"{"to": "+447400123456", "provider": "twilio"}"#
            #expect(try await client.call(.post, "/v1/verifications", json: body).status == .created)
            for _ in 0..<2 {
                #expect(try await client.call(.post, "/v1/verifications", json: body).status == .tooManyRequests)
            }
            let geo = try await client.call(.post, "/v1/verifications", json: #"{"to": "+850212345678"}"#)
            #expect(geo.body.errorCode == "destination_blocked", "\(geo.body)")
            try await Self.block(runtime, "+447400", clock: harness.clock)
            let blocked = try await client.call(.post, "/v1/verifications", json: #"{"to": "+447400999999"}"#)
            #expect(blocked.body.errorCode == "destination_blocked")

            let answer = try await client.call(.get, "/v1/admin/refusals?window=24h")
            #expect(answer.status == .ok)
            #expect(answer.body["bucket_seconds"] as? Int == 3600)
            #expect(answer.body["total"] as? Int == 4)
            let kinds = try #require(answer.body["kinds"] as? [[String: Any]])
            var counts: [String: Int] = [:]
            for kind in kinds { counts[kind["kind"] as? String ?? ""] = kind["count"] as? Int }
            #expect(
                counts == ["rate_limit:starts per destination": 2, "geo:KP": 1, "pumping_guard": 1], "\(kinds)")
            #expect((kinds.first?["series"] as? [Int])?.last == 2)
            let bad = try await client.call(.get, "/v1/admin/refusals?window=1d")
            #expect(bad.status == .badRequest)
            #expect(bad.body.errorCode == "invalid_request")
        }
    }
}
