import Foundation
import GatewayCore
import HTTPTypes
import Testing

@testable import GatewayIDaaS

@Suite("IDaaS emulator")
struct IDaaSEmulatorTests {
    typealias H = IDaaSEmulatorHarness

    @Test("SDK calls need the client id and the device headers")
    func headers() async throws {
        let h = H()
        var noClient = H.device
        noClient[HTTPField.Name("X-client-id")!] = nil
        #expect(errorCode(await h.raw(.get, IDaaSWire.captchaPath, headers: noClient)) == "IDAAS.SDK.COMMON.1012")
        var wrongClient = H.device
        wrongClient[HTTPField.Name("X-client-id")!] = "another-app"
        #expect(errorCode(await h.raw(.get, IDaaSWire.captchaPath, headers: wrongClient)) == "IDAAS.SDK.COMMON.1012")
        for name in ["X-operating-sys-version", "X-device-fingerprint", "X-agent"] {
            var missing = H.device
            missing[HTTPField.Name(name)!] = nil
            let response = await h.raw(.get, IDaaSWire.captchaPath, headers: missing)
            #expect(response?.status == .badRequest)
            #expect(errorCode(response) == "IDAAS.SDK.PARAM.0001", "\(name)")
        }
        // The IP and the language are optional.
        var optional = H.device
        optional[HTTPField.Name("X-device-ip")!] = nil
        #expect(await h.raw(.get, IDaaSWire.captchaPath, headers: optional)?.status == .ok)
    }

    @Test("the slider is a real PNG pair; the cut-out is found from the images at the answer's position")
    func puzzleImages() async throws {
        let h = H()
        for _ in 0..<3 {
            let captcha = try await h.captcha()
            let token = try #require(captcha.token)
            #expect(token.count == 32)
            let backgroundBase64 = try #require(captcha.originalImageBase64)
            let pieceBase64 = try #require(captcha.jigsawImageBase64)
            let background = try DecodedPNG(try #require(Data(base64Encoded: backgroundBase64)))
            let piece = try DecodedPNG(try #require(Data(base64Encoded: pieceBase64)))
            #expect(background.width == IDaaSPuzzle.width && background.height == IDaaSPuzzle.height)
            #expect(piece.height == background.height && piece.channels == 4)
            let solved = DecodedPNG.solve(background: background, piece: piece)
            #expect(abs(Double(solved) - (try await h.answer(token))) <= 1)
        }
        // Two sliders do not share a position and texture.
        let first = try await h.captcha()
        let second = try await h.captcha()
        #expect(first.originalImageBase64 != second.originalImageBase64)
    }

    @Test("a wrong slider is refused and spends the slider; a right one within the tolerance gives a captcha token")
    func verifySlider() async throws {
        let h = H()
        let token = try #require(try await h.captcha().token)
        let x = try await h.answer(token)
        #expect(errorCode(await h.verify(token: token, x: x + 40)) == "IDAAS.SDK.CAPTCHA.0002")
        #expect(errorCode(await h.verify(token: token, x: x)) == "IDAAS.SDK.CAPTCHA.0001")
        let next = try #require(try await h.captcha().token)
        let right = try await h.answer(next)
        let response = try #require(await h.verify(token: next, x: right + Double(IDaaSEmulator.defaultTolerance)))
        #expect(response.status == .ok)
        let captchaToken = try SnakeCaseJSON.decoder.decode(IDaaSWire.CaptchaVerifyResponse.self, from: response.body)
            .captchaToken
        #expect(captchaToken?.hasPrefix(next + "---{") == true)
        // An expired slider.
        let late = try #require(try await h.captcha().token)
        let lateX = try await h.answer(late)
        h.clock.advance(by: IDaaSEmulator.defaultCaptchaLifetime + 1)
        #expect(errorCode(await h.verify(token: late, x: lateX)) == "IDAAS.SDK.CAPTCHA.0001")
    }

    @Test("a captcha token sends one SMS, only to the number it was verified for")
    func captchaTokenBinding() async throws {
        let h = H()
        let token = try await h.captchaToken()
        #expect(errorCode(await h.send(token, mobile: "+86-13900139000")) == "IDAAS.SDK.CAPTCHA.0003")
        #expect(h.outbox.last(to: "+8613900139000") == nil)
        let sent = try #require(await h.send(token))
        #expect(sent.status == .ok && sent.body.isEmpty)
        let message = try #require(h.outbox.last(to: H.number))
        #expect(message.code?.count == 6)
        #expect(message.text.contains(message.code ?? "-"))
        #expect(errorCode(await h.send(token)) == "IDAAS.SDK.CAPTCHA.0003")
        #expect(h.outbox.messages(to: H.number).count == 1)
        #expect(errorCode(await h.send("made-up")) == "IDAAS.SDK.CAPTCHA.0001")
        // An undeliverable number.
        let undeliverable = "+86-" + IDaaSSandbox.undeliverable.dropFirst(3)
        let other = try await h.captchaToken(sender: undeliverable)
        #expect(errorCode(await h.send(other, mobile: undeliverable)) == "IDAAS.SDK.CAPTCHA.0006")
    }

    @Test("login: wrong code, lock after repeated wrong codes, expired code, success with tokens")
    func login() async throws {
        let h = H()
        #expect(errorCode(await h.login("123456")) == "IDAAS.SDK.CAPTCHA.0008")
        _ = await h.send(try await h.captchaToken())
        let code = try #require(h.outbox.last(to: H.number)?.code)
        let wrong = code == "000000" ? "111111" : "000000"
        for _ in 1..<IDaaSEmulator.defaultMaxWrongCodes {
            #expect(errorCode(await h.login(wrong)) == "IDAAS.SDK.CAPTCHA.0007")
        }
        #expect(errorCode(await h.login(wrong)) == "IDAAS.SDK.LOGIN.1003")
        #expect(errorCode(await h.login(code)) == "IDAAS.SDK.LOGIN.1003")
        h.clock.advance(by: IDaaSEmulator.defaultLockDuration + 1)
        _ = await h.send(try await h.captchaToken())
        let fresh = try #require(h.outbox.last(to: H.number)?.code)
        h.clock.advance(by: IDaaSEmulator.defaultCodeLifetime + 1)
        #expect(errorCode(await h.login(fresh)) == "IDAAS.SDK.CAPTCHA.0008")
        _ = await h.send(try await h.captchaToken())
        let last = try #require(h.outbox.last(to: H.number)?.code)
        let response = try #require(await h.login(last))
        #expect(response.status == .ok)
        let answer = try SnakeCaseJSON.decoder.decode(IDaaSWire.TokenResponse.self, from: response.body)
        #expect(answer.status == "SUCCESS")
        #expect(answer.expire == IDaaSEmulator.sessionLifetime)
        #expect(answer.sessionToken?.isEmpty == false)
        let parts = try #require(answer.idToken).split(separator: ".")
        #expect(parts.count == 3)
        let claims = try JSONDecoder().decode(
            IDaaSWire.IDTokenClaims.self, from: try #require(Base64URL.decode(parts[1])))
        #expect(claims.aud?.values == [IDaaSSandbox.clientID])
        #expect(claims.phoneNumber == H.number)
        #expect(claims.api?.contains("userName") == true)
        // The code is spent.
        #expect(errorCode(await h.login(last)) == "IDAAS.SDK.CAPTCHA.0008")
    }

    @Test(
        "numbers configured with another status answer it without tokens",
        arguments: IDaaSSandbox.statuses.sorted { $0.key < $1.key })
    func statuses(_ entry: (key: String, value: String)) async throws {
        let h = H()
        let mobile = "+86-" + entry.key.dropFirst(3)
        _ = await h.send(try await h.captchaToken(sender: mobile), mobile: mobile)
        let code = try #require(h.outbox.last(to: entry.key)?.code)
        let answer = try SnakeCaseJSON.decoder.decode(
            IDaaSWire.TokenResponse.self, from: try #require(await h.login(code, mobile: mobile)).body)
        #expect(answer.status == entry.value)
        #expect((answer.idToken != nil) == (entry.value == "PASSWORD_WARN"))
        #expect((answer.stateToken != nil) == (entry.value == "MFA_AUTH"))
    }

    @Test("refresh rotates the session token; the old one is refused")
    func refresh() async throws {
        let h = H()
        _ = await h.send(try await h.captchaToken())
        let code = try #require(h.outbox.last(to: H.number)?.code)
        let login = try SnakeCaseJSON.decoder.decode(
            IDaaSWire.TokenResponse.self, from: try #require(await h.login(code)).body)
        let session = try #require(login.sessionToken)
        var headers = H.device
        headers[HTTPField.Name("session-token")!] = session
        let refreshed = try #require(await h.raw(.post, IDaaSWire.refreshPath, headers: headers))
        let answer = try SnakeCaseJSON.decoder.decode(IDaaSWire.TokenResponse.self, from: refreshed.body)
        #expect(answer.sessionToken != nil && answer.sessionToken != session)
        #expect(answer.idToken != nil && answer.expire == IDaaSEmulator.sessionLifetime)
        #expect(errorCode(await h.raw(.post, IDaaSWire.refreshPath, headers: headers)) == "IDAAS.SDK.PARAM.0023")
        #expect(errorCode(await h.raw(.post, IDaaSWire.refreshPath)) == "IDAAS.SDK.PARAM.0023")
    }

    @Test("area codes, the JWKS and the fault switch")
    func areaCodesKeysFaults() async throws {
        let h = H()
        let list = try JSONDecoder().decode(
            IDaaSWire.AreaCodesResponse.self, from: try #require(await h.raw(.get, IDaaSWire.areaCodesPath)).body)
        #expect(list.phoneAreaCodeDefinitions?.map(\.countryCode) == ["CN", "HK", "MO", "TW", "SG"])
        let keys = try JSONDecoder().decode(
            JWKSet.self, from: try #require(await h.raw(.get, IDaaSWire.jwksPath, headers: [:])).body)
        #expect(keys.keys.first?.kty == "RSA" && keys.keys.first?.alg == "RS256")
        h.emulator.faults.set(.init(serverErrorStatus: 503, remaining: 1))
        let failed = await h.raw(.get, IDaaSWire.captchaPath)
        #expect(failed?.status.code == 503)
        #expect(await h.raw(.get, IDaaSWire.captchaPath)?.status == .ok)
        #expect(await h.raw(.get, "/api/v2/sdk/nothing")?.status == .notFound)
    }

    @Test("state survives a restart through the persistence")
    func persistence() async throws {
        let persistence = InMemoryEmulatorPersistence()
        let first = H(persistence: persistence)
        _ = await first.send(try await first.captchaToken())
        let code = try #require(first.outbox.last(to: H.number)?.code)
        let second = H(persistence: persistence)
        #expect(await second.login(code)?.status == .ok)
    }

    @Test("state an earlier version saved as entities becomes table rows once, and keeps working")
    func movesEarlierEntities() async throws {
        let persistence = InMemoryEmulatorPersistence()
        let now = ManualClock().now
        let code = IDaaSEmulatorState.Code(code: "246810", expiresAt: now.addingTimeInterval(300))
        let user = IDaaSEmulatorState.User(id: "earlier-user-id", failures: 2)
        persistence.save([
            "code:" + H.number: try JSONEncoder().encode(code), "user:" + H.number: try JSONEncoder().encode(user),
        ])
        let h = H(persistence: persistence)
        #expect(persistence.load().isEmpty)
        #expect(persistence.memoryTable(IDaaSEmulatorState.table).count == 2)
        let response = try #require(await h.login("246810"))
        #expect(response.status == .ok)
        let token = try SnakeCaseJSON.decoder.decode(IDaaSWire.TokenResponse.self, from: response.body)
        #expect(token.sessionToken != nil)
        // The user made before keeps its id; its failures were reset by the sign-in.
        let stored = try await persistence.table(IDaaSEmulatorState.table).transaction { rows in
            try IDaaSEmulatorState(rows: rows, now: now).user(H.number)
        }
        #expect(stored == IDaaSEmulatorState.User(id: "earlier-user-id", failures: 0))
    }

    @Test("a double-tapped right code signs in once; the other tap finds the code spent")
    func doubleTappedLogin() async throws {
        let h = H(persistence: InMemoryEmulatorPersistence())
        _ = await h.send(try await h.captchaToken())
        let code = try #require(h.outbox.last(to: H.number)?.code)
        let answers = await withTaskGroup(of: (Int, String?).self) { group in
            for _ in 0..<2 {
                group.addTask {
                    let response = await h.login(code)
                    return (response?.status.code ?? 0, errorCode(response))
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.filter { $0.0 == 200 && $0.1 == nil }.count == 1)
        #expect(answers.filter { $0.1 == "IDAAS.SDK.CAPTCHA.0008" }.count == 1)
    }

    @Test("entities long expired are forgotten a batch per call; users are kept")
    func prunedInBatches() async throws {
        let persistence = InMemoryEmulatorPersistence()
        let table = persistence.memoryTable(IDaaSEmulatorState.table)
        let h = H(persistence: persistence)
        // 300 sliders nobody answered, written as the emulator writes them (drawing 300 images takes seconds).
        let now = h.clock.now
        try await table.transaction { rows in
            let state = IDaaSEmulatorState(rows: rows, now: now)
            for n in 0..<300 {
                try state.setCaptcha(
                    "slider\(n)",
                    .init(
                        answerX: 10, answerY: 10,
                        expiresAt: now.addingTimeInterval(IDaaSEmulator.defaultCaptchaLifetime)))
            }
        }
        _ = await h.send(try await h.captchaToken())
        let code = try #require(h.outbox.last(to: H.number)?.code)
        #expect(await h.login(code)?.status == .ok)
        // 300 sliders, the one answered (gone), its grant, the user and the session.
        #expect(table.count == 303)
        h.clock.advance(by: IDaaSEmulator.defaultCaptchaLifetime + IDaaSEmulatorState.retention + 1)
        _ = try await h.captcha()
        #expect(table.count == 303 - IDaaSEmulatorState.sweepBatch + 1)
        _ = try await h.captcha()
        #expect(table.count == 2 + 2, "the user, the session (five days long), and the two new sliders")
    }
}
