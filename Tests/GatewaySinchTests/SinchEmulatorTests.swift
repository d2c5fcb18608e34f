import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Testing

@testable import GatewaySinch

@Suite("Sinch emulator")
struct SinchEmulatorTests {
    @Test("verifications survive a restart through the emulator's persistence, written one by one")
    func persistence() async throws {
        let clock = ManualClock()
        let outbox = SandboxOutbox()
        let persistence = InMemoryEmulatorPersistence()
        let first = SinchEmulator(
            context: EmulatorContext(clock: clock, outbox: outbox, logger: .quiet, persistence: persistence))
        let settings = SinchPlugin.plugin.sandboxSettings(try #require(URL(string: SinchHarness.baseURL)))
        func provider(_ emulator: SinchEmulator) throws -> SinchProvider {
            try SinchProvider(
                context: ProviderContext(
                    providerID: "sinch", settings: settings,
                    transport: InProcessTransport(emulator: emulator, pathPrefix: SinchSandbox.mountPath), clock: clock,
                    logger: .quiet))
        }
        let request = try SinchHarness.request()
        let result = try await provider(first).start(request)
        // The verification, its reference and the number's start window: three rows, nothing else.
        #expect(persistence.memoryTable(SinchEmulatorState.table).writeCount == 3)
        #expect(persistence.writeCount == 0)
        let code = try #require(outbox.last(to: SinchHarness.phone)?.code)
        let second = SinchEmulator(
            context: EmulatorContext(clock: clock, outbox: outbox, logger: .quiet, persistence: persistence))
        let check = try await provider(second).check(SinchHarness.stored(request, result), code: code)
        #expect(check.status == .approved)
        // The restored emulator still knows the reference: reusing it is a conflict.
        await expectGatewayError(.providerRejected) { try await provider(second).start(request) }
    }

    @Test("verifications an earlier version saved as entities become rows once; reference and number still find them")
    func movesEarlierEntities() async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
        let persistence = InMemoryEmulatorPersistence()
        let saved = SinchEmulatorState.Verification(
            id: "1234567890123456789", method: "sms", endpoint: SinchHarness.phone, reference: "vf_earlier",
            custom: nil, secret: "4321", status: "PENDING", reason: nil, source: nil, language: "en-US",
            countryID: "SE", createdAt: clock.now, updatedAt: clock.now, expiresAt: clock.now.addingTimeInterval(600))
        persistence.save([saved.id: try JSONEncoder().encode(saved)])
        let emulator = SinchEmulator(context: EmulatorContext(clock: clock, logger: .quiet, persistence: persistence))
        #expect(persistence.load().isEmpty)
        let found = try await persistence.table(SinchEmulatorState.table).transaction { rows in
            let state = SinchEmulatorState(rows: rows, now: clock.now)
            return (
                try state.verification(reference: "vf_earlier"),
                try state.newest(endpoint: SinchHarness.phone, method: "sms")
            )
        }
        #expect(found.0 == saved)
        #expect(found.1 == saved)
        _ = emulator
    }

    @Test("racing starts to one number: five within the minute are accepted, the rest are 42901; one stays pending")
    func racingStarts() async throws {
        let harness = try SinchHarness(callbacks: false)
        let outcomes = await withTaskGroup(of: String.self) { group in
            for n in 0..<8 {
                group.addTask {
                    do {
                        return try await harness.provider.start(try SinchHarness.request(id: "vf_race\(n)")).reference
                            ?? "?"
                    } catch let error as GatewayError {
                        return error.code.rawValue
                    } catch {
                        return "\(error)"
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let accepted = outcomes.filter { $0.allSatisfy(\.isNumber) }
        #expect(accepted.count == SinchEmulatorState.velocityLimit)
        #expect(
            outcomes.filter { $0 == GatewayError.Code.rateLimited.rawValue }.count == 8
                - SinchEmulatorState.velocityLimit)
        let statuses = try await harness.emulator.state.transaction { rows in
            let state = SinchEmulatorState(rows: rows, now: harness.clock.now)
            return try accepted.compactMap { try state.verification($0)?.status }
        }
        #expect(statuses.filter { $0 == "PENDING" }.count == 1)
        #expect(statuses.filter { $0 == "ABORTED" }.count == SinchEmulatorState.velocityLimit - 1)
    }

    @Test("a double-tapped right code approves once and sends one result event")
    func doubleTappedReport() async throws {
        let harness = try SinchHarness()
        let (verification, _, message) = try await harness.start()
        let code = try #require(message?.code)
        let statuses = try await withThrowingTaskGroup(of: VerificationStatus.self) { group in
            for _ in 0..<2 { group.addTask { try await harness.provider.check(verification, code: code).status } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == [.approved, .approved])
        let results = harness.gateway.deliveries.filter {
            (try? JSONSerialization.jsonObject(with: $0.body) as? [String: Any])?["event"] as? String
                == SinchWire.resultEvent
        }
        #expect(results.count == 1)
    }

    @Test("the language table: exact tag, base language, and en-US when the country has neither")
    func languages() {
        #expect(SinchLanguages.negotiate(requested: ["fr-CH", "de"], country: "CH") == "fr-CH")
        #expect(SinchLanguages.negotiate(requested: ["de"], country: "AT") == "de-AT")
        #expect(SinchLanguages.negotiate(requested: ["ja"], country: "SE") == "en-US")
        #expect(SinchLanguages.negotiate(requested: [], country: "SE") == "en-US")
        #expect(SinchLanguages.negotiate(requested: ["es"], country: nil) == "en-US")
        #expect(SinchWire.languages(fromAcceptLanguage: "sv;q=0.5, es-ES, *;q=0.1, fr;q=0") == ["es-ES", "sv"])
        #expect(SinchWire.acceptLanguage(["pt_BR", "pt-br", "en", "bad tag!"]) == "pt-BR, en;q=0.9")
        #expect(SinchWire.acceptLanguage([]) == nil)
    }

    @Test("the emulator's answers decode with the shapes the Python SDK reads (sms.template, flashCall.cliFilter)")
    func shapes() async throws {
        let harness = try SinchHarness()
        _ = try await harness.start(.flashcall)
        let sent = try #require(harness.recorder.requests.first)
        let answer = await harness.emulator.handle(
            EmulatorRequest(
                method: .get, path: "/verification/v1/verifications/reference/vf_0123456789abcdef", query: nil,
                headerFields: try Self.signedGET(
                    path: "/verification/v1/verifications/reference/vf_0123456789abcdef", at: harness.clock.now),
                body: Data()))
        guard case .response(let response) = answer else { return }
        let body = json(response.body)
        #expect(body["status"] as? String == "PENDING" && body["method"] as? String == "flashcall")
        #expect((body["identity"] as? [String: Any])?["endpoint"] as? String == SinchHarness.phone)
        #expect(body["countryId"] as? String == "SE")
        #expect((body["verificationTimestamp"] as? String)?.hasSuffix("Z") == false)
        #expect(sent.headerFields[.contentType] == "application/json; charset=UTF-8")
    }

    @Test(
        "a status answer carries source only where Sinch's status schema has it, and only intercepted or manual",
        arguments: [
            ("sms", "manual", true), ("whatsapp", "manual", true), ("flashcall", "intercepted", true),
            ("callout", "manual", false), ("seamless", nil, false),
        ] as [(String, String?, Bool)])
    func statusSource(method: String, source: String?, carriesSource: Bool) throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let verification = SinchEmulatorState.Verification(
            id: "1234567890123456789", method: method, endpoint: SinchHarness.phone, reference: "vf_status",
            custom: nil, secret: "4321", status: "SUCCESSFUL", reason: nil, source: source, language: nil,
            countryID: "SE", createdAt: now, updatedAt: now, expiresAt: now.addingTimeInterval(600))
        let body = json(try JSONEncoder().encode(SinchEmulator.statusBody(verification)))
        #expect(body["method"] as? String == method)
        #expect((body["source"] != nil) == carriesSource)
        if let value = body["source"] as? String { #expect(["intercepted", "manual"].contains(value)) }
    }

    @Test("a seamless verification completed by its URL reports no source")
    func seamlessHasNoSource() async throws {
        let harness = try SinchHarness(callbacks: false)
        let (verification, _, _) = try await harness.start(.silentAuth)
        let id = try #require(verification.reference)
        let token = try await harness.emulator.state.transaction { rows in
            try SinchEmulatorState(rows: rows, now: harness.clock.now).verification(id)?.secret
        }
        _ = await harness.emulator.seamless(id: id, token: try #require(token), now: harness.clock.now)
        let stored = try await harness.emulator.state.transaction { rows in
            try SinchEmulatorState(rows: rows, now: harness.clock.now).verification(id)
        }
        #expect(stored?.status == "SUCCESSFUL")
        #expect(stored?.source == nil)
    }

    static func signedGET(path: String, at date: Date) throws -> HTTPFields {
        let key = try #require(SinchSigning.key(fromSecret: SinchSandbox.applicationSecret))
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[SinchSigning.timestampHeader] = VendorDate.iso8601(date)
        headers[.authorization] = SinchSigning.authorization(
            applicationKey: SinchSandbox.applicationKey, key: key, method: "GET", body: Data(),
            contentType: "application/json", timestamp: VendorDate.iso8601(date),
            resource: SinchSandbox.mountPath + path)
        return headers
    }
}
