import Foundation
import GatewayCore
import HTTPTypes
import Synchronization
import Testing

/// An emulator that answers 200 with `ok` through the fault switch and remembers what it was asked.
final class EchoEmulator: VendorEmulator {
    let faults = FaultSwitch()
    private let received = Mutex<[EmulatorRequest]>([])
    private let handled = Mutex(0)

    var requests: [EmulatorRequest] { received.withLock { $0 } }
    /// Requests that got past the fault switch to the real handler.
    var handledCount: Int { handled.withLock { $0 } }

    func handle(_ request: EmulatorRequest) async -> EmulatorResponse {
        received.withLock { $0.append(request) }
        let outage: (Int) -> TransportResponse = { status in
            TransportResponse(
                status: HTTPResponse.Status(code: status), body: Data(#"{"error":"emulated outage"}"#.utf8))
        }
        return await withFaults(serverError: outage) {
            handled.withLock { $0 += 1 }
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            return .response(TransportResponse(status: .ok, headerFields: headers, body: Data(#"{"ok":true}"#.utf8)))
        }
    }
}

@Suite("InProcessTransport")
struct InProcessTransportTests {
    let emulator = EchoEmulator()

    static let ping = URL(string: "http://vendor.example/v1/ping")

    func get(_ url: URL?, prefix: String = "", timeout: Duration = .seconds(5)) async throws -> TransportResponse {
        let transport = InProcessTransport(emulator: emulator, pathPrefix: prefix)
        return try await transport.send(TransportRequest(method: .get, url: try #require(url)), timeout: timeout)
    }

    /// Sends a GET expecting a transport error, and returns it.
    func failure(timeout: Duration = .seconds(5)) async throws -> TransportError? {
        let transport = InProcessTransport(emulator: emulator)
        let request = TransportRequest(method: .get, url: try #require(Self.ping))
        do throws(TransportError) {
            let response = try await transport.send(request, timeout: timeout)
            Issue.record("expected a transport error, got HTTP \(response.status.code)")
            return nil
        } catch {
            return error
        }
    }

    @Test("the emulator receives the method, path without the prefix, raw query, headers and body")
    func forwardsRequest() async throws {
        let transport = InProcessTransport(emulator: emulator, pathPrefix: "/sandbox/twilio")
        var headers = HTTPFields()
        headers[.authorization] = "Basic abc"
        let url = try #require(
            URL(string: "https://verify.example.com/sandbox/twilio/v2/Services/VA1/Verifications?To=%2B1650&a=b"))
        let response = try await transport.send(
            TransportRequest(method: .post, url: url, headerFields: headers, body: Data("To=%2B1650".utf8)),
            timeout: .seconds(5))
        #expect(response.status == .ok)
        #expect(response.body == Data(#"{"ok":true}"#.utf8))
        let request = try #require(emulator.requests.first)
        #expect(request.method == .post)
        #expect(request.path == "/v2/Services/VA1/Verifications")
        #expect(request.query == "To=%2B1650&a=b")
        #expect(request.queryItems == ["To": "+1650", "a": "b"])
        #expect(request.headerFields[.authorization] == "Basic abc")
        #expect(request.body == Data("To=%2B1650".utf8))
    }

    @Test("a path outside the prefix reaches the emulator unchanged")
    func prefixOnlyWhenPresent() async throws {
        _ = try await get(URL(string: "http://localhost/other/path"), prefix: "/sandbox/twilio")
        #expect(emulator.requests.first?.path == "/other/path")
        #expect(emulator.requests.first?.query == nil)
        #expect(emulator.requests.first?.queryItems == [:])
    }

    @Test("latency longer than the timeout is a timeout, and the caller does not wait out the latency")
    func timeout() async throws {
        // A wide margin: the point is that the caller does not wait out an hour, even on a loaded machine
        // (a run beside four builds and a CPU hog took 30.6 s to get its 50 ms timeout).
        emulator.faults.set(FaultSwitch.Faults(latencyMilliseconds: 3_600_000))
        let began = ContinuousClock.now
        #expect(try await failure(timeout: .milliseconds(50)) == .timeout)
        #expect(ContinuousClock.now - began < .seconds(300))
    }

    @Test("latency shorter than the timeout still answers")
    func latencyWithinTimeout() async throws {
        emulator.faults.set(FaultSwitch.Faults(latencyMilliseconds: 20))
        let began = ContinuousClock.now
        let response = try await get(Self.ping, timeout: .seconds(5))
        #expect(response.status == .ok)
        #expect(ContinuousClock.now - began >= .milliseconds(20))
    }

    @Test("a reset emulator is a connectionReset transport error")
    func reset() async throws {
        emulator.faults.set(FaultSwitch.Faults(connectionReset: true))
        let error = try await failure()
        guard case .connectionReset = error else {
            Issue.record("expected connectionReset, got \(String(describing: error))")
            return
        }
        #expect(emulator.handledCount == 0)
    }

    @Test("a reset drawn by reset_rate comes after the emulator handled the request: the vendor acted")
    func resetAfterHandling() async throws {
        emulator.faults.set(FaultSwitch.Faults(resetRate: 1))
        let error = try await failure()
        guard case .connectionReset = error else {
            Issue.record("expected connectionReset, got \(String(describing: error))")
            return
        }
        #expect(emulator.handledCount == 1)
    }

    @Test("a malformed body drawn by malformed_rate comes after the emulator handled the request")
    func malformedAfterHandling() async throws {
        emulator.faults.set(FaultSwitch.Faults(malformedRate: 1))
        let response = try await get(Self.ping)
        #expect(response.status == .ok)
        #expect(throws: (any Error).self) { try JSONSerialization.jsonObject(with: response.body) }
        #expect(emulator.handledCount == 1)
    }

    @Test("an error drawn by error_rate answers the vendor's error body without handling the request")
    func errorRateSkipsHandler() async throws {
        emulator.faults.set(FaultSwitch.Faults(errorRate: 1, errorStatus: 502))
        let response = try await get(Self.ping)
        #expect(response.status.code == 502)
        #expect(response.body == Data(#"{"error":"emulated outage"}"#.utf8))
        #expect(emulator.handledCount == 0)
    }

    @Test("a server-error fault answers with that status and the vendor's error body")
    func serverError() async throws {
        emulator.faults.set(FaultSwitch.Faults(serverErrorStatus: 503))
        let response = try await get(Self.ping)
        #expect(response.status.code == 503)
        #expect(response.body == Data(#"{"error":"emulated outage"}"#.utf8))
        #expect(emulator.handledCount == 0)
    }

    @Test("a malformed-body fault answers 200 with a body that is not valid JSON")
    func malformedBody() async throws {
        emulator.faults.set(FaultSwitch.Faults(malformedBody: true))
        let response = try await get(Self.ping)
        #expect(response.status == .ok)
        #expect(response.headerFields[.contentType] == "application/json")
        #expect(throws: (any Error).self) { try JSONSerialization.jsonObject(with: response.body) }
        #expect(emulator.handledCount == 0)
    }

    @Test("faults limited by remaining affect only that many requests, then the emulator answers normally")
    func remainingThroughTransport() async throws {
        emulator.faults.set(FaultSwitch.Faults(serverErrorStatus: 500, remaining: 2))
        var statuses: [Int] = []
        for _ in 0..<4 { statuses.append(try await get(Self.ping).status.code) }
        #expect(statuses == [500, 500, 200, 200])
    }
}
