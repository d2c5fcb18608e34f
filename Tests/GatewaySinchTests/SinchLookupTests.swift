import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Testing

@testable import GatewaySinch

/// A start whose gateway instance died during the call, asked after by the reference it sent
/// (docs/architecture.md §9.2).
@Suite("Sinch lookup of a dead start by its reference")
struct SinchLookupTests {
    static func lookup(
        _ harness: SinchHarness, id: String, channel: Channel = .sms, to phone: String = SinchHarness.phone
    )
        throws -> StartLookup
    {
        StartLookup(
            verificationID: id, destination: .phone(try PhoneNumber(parsing: phone)), channel: channel,
            callBegunAt: harness.clock.now)
    }

    @Test("a start Sinch got is found by its reference, with Sinch's id and state, and its code approves")
    func found() async throws {
        let harness = try SinchHarness()
        let (_, started, message) = try await harness.start(.sms, id: "vf_0123456789abcdef")
        let answer = try await harness.provider.lookUpStart(try Self.lookup(harness, id: "vf_0123456789abcdef"))
        let result = try #require(answer.foundStart, "expected found, got \(answer)")
        let sent = try #require(harness.recorder.requests.last)
        #expect(sent.method == .get)
        #expect(
            sent.url.path() == SinchSandbox.mountPath + "/verification/v1/verifications/reference/vf_0123456789abcdef")
        #expect(sent.headerFields[.authorization]?.hasPrefix("Application ") == true)
        #expect(result.reference == started.reference)
        #expect(result.status == .pending && result.channel == .sms)
        #expect(result.state == started.state)
        // Found is not sent again: the phone got one code, which approves the stored view of the result.
        #expect(harness.outbox.all.filter { $0.to == SinchHarness.phone }.count == 1)
        let request = try SinchHarness.request(.sms, id: "vf_0123456789abcdef")
        let code = try #require(message?.code)
        #expect(try await harness.provider.check(SinchHarness.stored(request, result), code: code).status == .approved)
    }

    @Test("nothing under the reference is 'not yet' within the request timeout of the dead call, then 'not found'")
    func notFoundOnceSettled() async throws {
        let harness = try SinchHarness(timeout: .seconds(10))
        let lookup = try Self.lookup(harness, id: "vf_00000000000000000000000000000000")
        #expect(try await harness.provider.lookUpStart(lookup) == .notYet)
        harness.clock.advance(by: 9.5)
        #expect(try await harness.provider.lookUpStart(lookup) == .notYet)
        harness.clock.advance(by: 0.5)
        #expect(try await harness.provider.lookUpStart(lookup) == .notFound)
        #expect(harness.outbox.all.isEmpty)
    }

    @Test("a verification under the reference for another number is not the dead start's: unknown")
    func otherNumber() async throws {
        let harness = try SinchHarness()
        _ = try await harness.start(.sms, id: "vf_0123456789abcdef")
        let lookup = try Self.lookup(harness, id: "vf_0123456789abcdef", to: "+46701234999")
        #expect(try await harness.provider.lookUpStart(lookup) == .unknown)
    }

    @Test(
        "a flash call or seamless start is not looked up: the app needs what only the start answered",
        arguments: [
            Channel.flashcall, .silentAuth,
        ])
    func methodsWithoutLookup(_ channel: Channel) async throws {
        let harness = try SinchHarness()
        #expect(
            try await harness.provider.lookUpStart(try Self.lookup(harness, id: "vf_x", channel: channel)) == .unknown)
        #expect(harness.recorder.requests.isEmpty)
    }

    @Test("Sinch failing the lookup throws its mapped error; the engine then answers the outcome unknown")
    func vendorFailure() async throws {
        let harness = try SinchHarness()
        harness.emulator.faults.set(.init(serverErrorStatus: 503))
        await expectGatewayError(.providerUnavailable) {
            try await harness.provider.lookUpStart(try Self.lookup(harness, id: "vf_0123456789abcdef"))
        }
    }
}
