import Foundation
import GatewayCore
import GatewayKitCrypto
import GatewayTestSupport
import Synchronization
import Testing

/// A messaging API that records what it is asked to send, and fails the sends a test arms it to fail.
final class RecordingSender: MessageSender {
    private let sent = Mutex<[OutboundMessage]>([])
    private let failure = Mutex<GatewayError?>(nil)

    var messages: [OutboundMessage] { sent.withLock { $0 } }

    func fail(with error: GatewayError?) { failure.withLock { $0 = error } }

    func send(_ message: OutboundMessage) async throws(GatewayError) -> SentMessage {
        if let error = failure.withLock({ $0 }) { throw error }
        let count = sent.withLock { sent in
            sent.append(message)
            return sent.count
        }
        return SentMessage(messageID: "msg-\(count)")
    }

    /// The code of the `index`th message: the origin-bound line's last word.
    func code(_ index: Int = -1) throws -> String {
        let messages = messages
        let message = try #require(index < 0 ? messages.last : messages[index])
        let line = try #require(message.text.split(separator: "\n").last)
        return String(try #require(line.split(separator: "#").last))
    }
}

@Suite struct OwnCodeProviderTests {
    static let key = HMACOwnCodeKey(secret: Array("an own-code secret of at least thirty-two bytes".utf8))!

    static func provider(
        _ id: String = "own_sms", sender: RecordingSender, newCodeOnResend: Bool = false,
        senders: SenderTable? = nil, clock: any WallClock = ManualClock(), key: any OwnCodeKey = Self.key
    ) throws -> OwnCodeProvider {
        let settings = OwnCodeSettings(
            key: key,
            catalog: MessageCatalog(app: "Acme", autofill: try MessageAutofill(originBoundHost: "example.com")),
            senders: try senders ?? SenderTable(fallback: .number("+14155550100")), newCodeOnResend: newCodeOnResend)
        return OwnCodeProvider(id: id, sender: sender, settings: settings, clock: clock)
    }

    @Test func startSendsAnOriginBoundCodeThatApproves() async throws {
        let sender = RecordingSender()
        let h = try ServiceHarness([try Self.provider(sender: sender)])
        let record = try await h.service.start(try .sms("+16505553434"))
        #expect(record.providerID == "own_sms")
        #expect(record.providerReference == "msg-1")
        let message = try #require(sender.messages.first)
        #expect(message.to.e164 == "+16505553434")
        #expect(message.from == .number("+14155550100"))
        #expect(message.encoding == .gsm7 && message.segments == 1)
        #expect(message.reference == record.id)
        let code = try sender.code()
        #expect(message.text == "Your Acme code is \(code). It expires in 10 minutes.\n\n@example.com #\(code)")
        let outcome = try await h.check(record.id, code)
        #expect(outcome.record.status == .approved)
    }

    @Test func neitherTheStoreNorTheLogsHoldTheCode() async throws {
        let sender = RecordingSender()
        let h = try ServiceHarness([try Self.provider(sender: sender)])
        let record = try await h.service.start(try .sms())
        let code = try sender.code()
        let stored = try await h.stored(record.id)
        let json = String(decoding: try JSONEncoder().encode(stored.providerState), as: UTF8.self)
        #expect(!json.contains(code))
        let state = try stored.providerState.decode(OwnCodeState.self)
        #expect(state.sends.map(\.messageID) == ["msg-1"])
        #expect(state.sends.first?.segments == 1)
        _ = try await h.check(record.id, code)
        #expect(!h.logs.lines(atLeast: .trace).joined(separator: "\n").contains(code))
    }

    @Test func aWrongCodeCountsAndTheRightOneStillApproves() async throws {
        let sender = RecordingSender()
        let h = try ServiceHarness([try Self.provider(sender: sender)])
        let record = try await h.service.start(try .sms())
        let code = try sender.code()
        let wrong = String(code.dropLast()) + (code.last == "0" ? "1" : "0")
        await expectGatewayError(.incorrectCode) { _ = try await h.check(record.id, wrong) }
        await expectGatewayError(.incorrectCode) { _ = try await h.check(record.id, "12ab") }
        #expect(try await h.stored(record.id).attempts == 2)
        #expect(try await h.check(record.id, code).record.status == .approved)
    }

    @Test func tooManyWrongCodesEndTheVerification() async throws {
        let sender = RecordingSender()
        let h = try ServiceHarness([try Self.provider(sender: sender)], policy: VerificationPolicy(maxAttempts: 2))
        let record = try await h.service.start(try .sms())
        let code = try sender.code()
        let wrong = String(code.dropLast()) + (code.last == "0" ? "1" : "0")
        await expectGatewayError(.incorrectCode) { _ = try await h.check(record.id, wrong) }
        await expectGatewayError(.maxAttemptsReached) { _ = try await h.check(record.id, wrong) }
        await expectGatewayError(.maxAttemptsReached) { _ = try await h.check(record.id, code) }
    }

    @Test func anExpiredCodeDoesNotApprove() async throws {
        let sender = RecordingSender()
        let h = try ServiceHarness([try Self.provider(sender: sender)])
        let record = try await h.service.start(try .sms())
        h.clock.advance(by: 601)
        await expectGatewayError(.expired) { _ = try await h.check(record.id, try sender.code()) }
    }

    @Test func aResendSendsTheSameCode() async throws {
        let sender = RecordingSender()
        let h = try ServiceHarness([try Self.provider(sender: sender)])
        let record = try await h.service.start(try .sms())
        _ = try await h.service.resend(id: record.id)
        #expect(sender.messages.count == 2)
        #expect(try sender.code(0) == sender.code(1))
        let state = try await h.stored(record.id).providerState.decode(OwnCodeState.self)
        #expect(state.sends.map(\.messageID) == ["msg-1", "msg-2"])
        #expect(try await h.check(record.id, try sender.code(0)).record.status == .approved)
    }

    @Test func newCodeOnResendReplacesTheCode() async throws {
        let sender = RecordingSender()
        let h = try ServiceHarness([try Self.provider(sender: sender, newCodeOnResend: true)])
        let record = try await h.service.start(try .sms())
        var first = try sender.code()
        // One time in a million the new code is the old one; draw again so the test cannot fail by chance.
        repeat {
            _ = try await h.service.resend(id: record.id)
        } while try sender.code() == first && sender.messages.count < 4
        let second = try sender.code()
        if second == first { first = "" }
        await expectGatewayError(.incorrectCode) { _ = try await h.check(record.id, first.isEmpty ? "000000" : first) }
        #expect(try await h.check(record.id, second).record.status == .approved)
    }

    @Test func codeLengthOfTheStartIsUsed() async throws {
        let sender = RecordingSender()
        let h = try ServiceHarness([try Self.provider(sender: sender)])
        var request = try StartVerification.sms()
        request.codeLength = 8
        let record = try await h.service.start(request)
        #expect(try sender.code().count == 8)
        #expect(try await h.check(record.id, try sender.code()).record.status == .approved)
    }

    @Test func routingSkipsCountriesWithNoSender() async throws {
        let sender = RecordingSender()
        let provider = try Self.provider(sender: sender, senders: try SenderTable(fallback: .alphanumeric("Acme")))
        #expect(provider.capabilities.excludedRegions == ["US", "CA"])
        let h = try ServiceHarness([provider])
        await expectGatewayError(.unsupportedDestination) { _ = try await h.service.start(try .sms("+16505553434")) }
        _ = try await h.service.start(try .sms("+447400123456"))
        #expect(sender.messages.last?.from == .alphanumeric("Acme"))
    }

    @Test func aFailedSendFailsOverToTheNextProvider() async throws {
        let failing = RecordingSender()
        failing.fail(with: GatewayError(.providerUnavailable, "down"))
        let working = RecordingSender()
        let h = try ServiceHarness([
            try Self.provider("first", sender: failing), try Self.provider("second", sender: working),
        ])
        let record = try await h.service.start(try .sms())
        #expect(record.providerID == "second")
        #expect(try await h.check(record.id, try working.code()).record.status == .approved)
    }

    /// Two checks of the right code at once: one approves, the other is told the truth (already approved).
    @Test func aDoubleSubmittedRightCodeApprovesOnce() async throws {
        let sender = RecordingSender()
        let h = try ServiceHarness([try Self.provider(sender: sender)])
        let record = try await h.service.start(try .sms())
        let code = try sender.code()
        let results = await withTaskGroup(of: GatewayError.Code?.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    do throws(GatewayError) {
                        _ = try await h.check(record.id, code)
                        return nil
                    } catch {
                        return error.code
                    }
                }
            }
            return await group.reduce(into: [GatewayError.Code?]()) { $0.append($1) }
        }
        #expect(results.filter { $0 == nil }.count == 1, "exactly one check approves: \(results)")
        let refusals: Set<GatewayError.Code?> = [.alreadyApproved, .concurrentVerification]
        for result in results where result != nil { #expect(refusals.contains(result)) }
        #expect(try await h.stored(record.id).status == .approved)
    }

    @Test func aResendThroughAnotherOwnCodeProviderCarriesTheCode() async throws {
        let first = RecordingSender()
        let second = RecordingSender()
        let h = try ServiceHarness([
            try Self.provider("first", sender: first), try Self.provider("second", sender: second),
        ])
        let record = try await h.service.start(try .sms())
        #expect(record.providerID == "first")
        let moved = try await h.service.resend(id: record.id, request: ResendRequest(provider: "second"))
        #expect(moved.providerID == "second")
        #expect(moved.sends == 2)
        #expect(try second.code() == first.code())
        let state = try moved.providerState.decode(OwnCodeState.self)
        #expect(state.sends.map(\.provider) == ["first", "second"])
        let resent = try #require(try await h.events(record.id, .resent).last)
        #expect(resent.detail["provider"] == "second" && resent.detail["previous_provider"] == "first")
        #expect(try await h.check(record.id, try first.code()).record.status == .approved)
    }

    @Test func aResendRefusesProvidersThatCannotCarryTheCode() async throws {
        let sender = RecordingSender()
        let otherKey = HMACOwnCodeKey(secret: Array("another secret, of another gateway, 32+ bytes".utf8))!
        let h = try ServiceHarness([
            try Self.provider("own", sender: sender),
            try Self.provider("foreign", sender: RecordingSender(), key: otherKey),
            ScriptedProvider(id: "verify"),
            try Self.provider(
                "gb_only", sender: RecordingSender(),
                senders: try SenderTable(fallback: nil, byCountry: ["GB": .alphanumeric("Acme")])),
        ])
        let record = try await h.service.start(try .sms(forced: "own"))
        await expectGatewayError(.invalidRequest) {
            _ = try await h.service.resend(id: record.id, request: ResendRequest(provider: "nowhere"))
        }
        await expectGatewayError(.invalidRequest) {
            _ = try await h.service.resend(id: record.id, request: ResendRequest(provider: "verify"))
        }
        await expectGatewayError(.invalidRequest) {
            _ = try await h.service.resend(id: record.id, request: ResendRequest(provider: "foreign"))
        }
        await expectGatewayError(.unsupportedDestination) {
            _ = try await h.service.resend(id: record.id, request: ResendRequest(provider: "gb_only"))
        }
        let stored = try await h.stored(record.id)
        #expect(stored.providerID == "own" && stored.sends == 1)
        #expect(try await h.check(record.id, try sender.code()).record.status == .approved)
    }

    @Test func aVerifyVendorsCodeCannotMoveToAnOwnCodeProvider() async throws {
        let h = try ServiceHarness([ScriptedProvider(id: "verify"), try Self.provider(sender: RecordingSender())])
        let record = try await h.service.start(try .sms(forced: "verify"))
        await expectGatewayError(.invalidRequest) {
            _ = try await h.service.resend(id: record.id, request: ResendRequest(provider: "own_sms"))
        }
    }

    @Test func aVerificationCostsEachSendsSegmentsAtItsProvidersPrice() async throws {
        let first = RecordingSender()
        let h = try ServiceHarness([
            try Self.provider("first", sender: first), try Self.provider("second", sender: RecordingSender()),
            ScriptedProvider(id: "verify"),
        ])
        let record = try await h.service.start(try .sms(forced: "first"))
        let moved = try await h.service.resend(id: record.id, request: ResendRequest(provider: "second"))
        var prices = PriceTable()
        prices.set(0.01, provider: "first", country: nil)
        #expect(moved.cost(prices) == nil, "no price for the second send's provider")
        prices.set(0.02, provider: "second", country: "US")
        #expect(abs((moved.cost(prices) ?? 0) - 0.03) < 1e-9)
        var twoSegments = moved
        var state = try moved.providerState.decode(OwnCodeState.self)
        state.sends[0].segments = 2
        twoSegments.providerState = try ProviderState(state)
        #expect(abs((twoSegments.cost(prices) ?? 0) - 0.04) < 1e-9)
        prices.set(0.05, provider: "verify", country: nil)
        let verify = try await h.service.start(try .sms("+16505553435", forced: "verify"))
        #expect(verify.cost(prices) == 0.05)
    }

    @Test func eachAcceptedSendPutsItsBilledSegmentsOnItsVendorCall() async throws {
        let second = RecordingSender()
        let h = try ServiceHarness([
            try Self.provider("first", sender: RecordingSender()), try Self.provider("second", sender: second),
            ScriptedProvider(id: "verify"),
        ])
        let record = try await h.service.start(try .sms(forced: "first"))
        _ = try await h.service.resend(id: record.id, request: ResendRequest(provider: "second"))
        second.fail(with: GatewayError(.providerUnavailable, "down"))
        _ = try? await h.service.resend(id: record.id, request: ResendRequest(provider: "second"))
        let calls = try await h.events(record.id, .providerCall)
        #expect(
            calls.map { "\($0.detail["provider"] ?? "") \($0.detail["segments"] ?? "-")" } == [
                "first 1", "second 1", "second -",
            ])
        let verify = try await h.service.start(try .sms("+16505553435", forced: "verify"))
        #expect(try await h.events(verify.id, .providerCall).allSatisfy { $0.detail["segments"] == nil })
    }

    @Test func aProviderSaysHowManySegmentsItsStartsMessageTakes() throws {
        #expect(try Self.provider(sender: RecordingSender()).capabilities.segmentsPerMessage == 1)
        let long = OwnCodeSettings(
            key: Self.key,
            catalog: MessageCatalog(
                app: "Acme",
                overrides: ["en": try MessageTemplate(String(repeating: "Your code for Acme. ", count: 8) + "{code}")]),
            senders: try SenderTable(fallback: .number("+14155550100")))
        let provider = OwnCodeProvider(id: "long", sender: RecordingSender(), settings: long, clock: ManualClock())
        #expect(provider.capabilities.segmentsPerMessage == 2)
        #expect(ScriptedProvider(id: "verify").capabilities.segmentsPerMessage == nil)
    }
}

@Suite("Codes the caller chose")
struct CustomCodeTests {
    @Test(
        "a custom code is 4 to 10 digits, or of the alphanumeric alphabet in either case",
        arguments: [
            ("4821", "4821", OwnCodeFormat.Alphabet.digits), ("0000000000", "0000000000", .digits),
            ("ab7k", "AB7K", .alphanumeric), ("ZZZZZ", "ZZZZZ", .alphanumeric),
        ])
    func accepted(_ code: String, _ normalized: String, _ alphabet: OwnCodeFormat.Alphabet) throws {
        let custom = try #require(OwnCodeFormat.custom(code))
        #expect(custom.code == normalized && custom.format == OwnCodeFormat(length: code.count, alphabet: alphabet))
    }

    @Test("anything else is no custom code", arguments: ["482", "48213648213", "O123", "12 34", "12-34", "١٢٣٤", ""])
    func refused(_ code: String) {
        #expect(OwnCodeFormat.custom(code) == nil)
    }

    @Test("sealing gives the code back only with the key and the seed")
    func sealing() throws {
        let seed = Array(repeating: UInt8(7), count: 16)
        let sealed = OwnCodeProviderTests.key.seal(code: "4821", seed: seed)
        #expect(sealed != Array("4821".utf8))
        #expect(OwnCodeProviderTests.key.unseal(sealed, seed: seed) == "4821")
        #expect(OwnCodeProviderTests.key.unseal(sealed, seed: Array(repeating: 8, count: 16)) != "4821")
        #expect(OwnCodeProviderTests.key.unseal(Array(repeating: 0, count: 40), seed: seed) == nil)
    }

    @Test("the start sends the caller's code, stores it sealed, resends it even with new_code_on_resend, approves it")
    func startResendCheck() async throws {
        let sender = RecordingSender()
        let h = try ServiceHarness([try OwnCodeProviderTests.provider(sender: sender, newCodeOnResend: true)])
        var start = try StartVerification.sms()
        start.customCode = "48213"
        let record = try await h.service.start(start)
        #expect(try sender.code() == "48213")
        let state = try record.providerState.decode(OwnCodeState.self)
        #expect(state.sealedCode != nil && state.format == OwnCodeFormat(length: 5))
        #expect(!String(decoding: try JSONEncoder().encode(state), as: UTF8.self).contains("48213"))
        _ = try await h.service.resend(id: record.id)
        #expect(try sender.code() == "48213")
        await expectGatewayError(.incorrectCode) { _ = try await h.check(record.id, "48214") }
        #expect(try await h.check(record.id, "48213").record.status == .approved)
    }

    @Test("routing passes over providers that make their own codes; with none left the start is refused")
    func routing() async throws {
        let sender = RecordingSender()
        let verify = ScriptedProvider(id: "verify")
        let h = try ServiceHarness([verify, try OwnCodeProviderTests.provider(sender: sender)])
        var start = try StartVerification.sms()
        start.customCode = "4821"
        let record = try await h.service.start(start)
        #expect(record.providerID == "own_sms" && verify.calls.isEmpty)
        let skipped = try await h.events(record.id, .started).first?.detail["skipped"]
        #expect(skipped?.contains("verify:custom_code_not_supported") == true)

        let onlyVerify = try ServiceHarness([ScriptedProvider(id: "verify")])
        await expectGatewayError(.invalidRequest) { _ = try await onlyVerify.service.start(start) }
        var bad = try StartVerification.sms()
        bad.customCode = "12"
        await expectGatewayError(.invalidRequest) { _ = try await h.service.start(bad) }
    }
}
