import AsyncHTTPClient
import Foundation
import GatewayCore
import GatewayTestSupport
import HTTPTypes
import Hummingbird
import Logging
import Synchronization
import Testing

@testable import gateway

/// The outbound client's per-host connections (`vendor_connections_per_host`): how many vendor calls can be
/// in flight to one host at once.
@Suite("Outbound HTTP client")
struct OutboundHTTPClientTests {
    @Test("`vendor_connections_per_host`: 64 by default, a whole number from 1 to 1000, nothing else")
    func setting() throws {
        func parse(_ extra: [String: JSONValue]) throws -> GatewayConfiguration {
            try GatewayConfiguration.parse(
                .object(["sandbox": .bool(true)].merging(extra) { $1 }), plugins: [], environment: [:])
        }
        #expect(try parse([:]).vendorConnectionsPerHost == 64)
        #expect(try parse(["vendor_connections_per_host": .number(200)]).vendorConnectionsPerHost == 200)
        #expect(try parse(["vendor_connections_per_host": .number(1)]).vendorConnectionsPerHost == 1)
        for bad: JSONValue in [.number(0), .number(1001), .number(2.5), .string("64"), .bool(true)] {
            let error = #expect(throws: ConfigurationError.self) { try parse(["vendor_connections_per_host": bad]) }
            #expect(error?.problems == ["`vendor_connections_per_host` must be a whole number from 1 to 1000"])
        }
    }

    /// A vendor that holds every call for a while and counts how many it holds at once.
    final class SlowVendor: Sendable {
        let inFlight = Mutex((now: 0, most: 0))

        func application(port: Int) -> some ApplicationProtocol {
            let router = Router()
            router.get("/healthz") { _, _ in "ok" }  // what `withLiveServer` waits for
            router.post("/call") { [self] _, _ -> String in
                inFlight.withLock { counts in
                    counts.now += 1
                    counts.most = max(counts.most, counts.now)
                }
                defer { self.inFlight.withLock { $0.now -= 1 } }
                try await Task.sleep(for: .milliseconds(400))
                return "ok"
            }
            return Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
                logger: .quiet)
        }
    }

    /// Sends `calls` concurrent calls through a client with `limit` connections per host and returns the
    /// most the vendor held at once.
    func mostInFlight(calls: Int, limit: Int) async throws -> Int {
        let vendor = SlowVendor()
        let port = try LoopbackPort.next()
        let client = makeOutboundHTTPClient(connectionsPerHost: limit)
        let transport = AsyncHTTPClientTransport(client: client)
        do {
            try await withLiveServer(vendor.application(port: port), port: port) { _ in
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<calls {
                        group.addTask {
                            let request = TransportRequest(
                                method: .post, url: URL(string: "http://127.0.0.1:\(port)/call")!,
                                headerFields: [.contentType: "application/x-www-form-urlencoded"],
                                body: Data("To=%2B447700900123".utf8))
                            return try await transport.send(request, timeout: .seconds(30)).status.code
                        }
                    }
                    for try await status in group { #expect(status == 200) }
                }
            }
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
        return vendor.inFlight.withLock { $0.most }
    }

    @Test("Calls to one host run on as many connections as the setting allows, and no more")
    func connectionsPerHost() async throws {
        // AsyncHTTPClient's own default (8) would hold the ninth call back until one of the first eight ended.
        #expect(try await mostInFlight(calls: 20, limit: 16) == 16)
        #expect(try await mostInFlight(calls: 8, limit: 3) == 3)
    }
}
