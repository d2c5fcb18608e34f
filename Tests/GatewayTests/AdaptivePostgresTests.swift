import Foundation
import GatewayCore
import GatewayTestSupport
import Logging
import Testing

@testable import gateway

/// Issue 35: two gateway instances on one PostgreSQL, starts split between them, learn from one evidence.
@Suite("Adaptive routing on one PostgreSQL", .enabled(if: PostgresTestServer.isAvailable))
struct AdaptivePostgresTests {
    @Test("two instances, starts split between them, converge to the same shares (within 5 points)")
    func twoInstancesConverge() async throws {
        let schema = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        async let a = PostgresStoreTests.store(schema: schema)
        async let b = PostgresStoreTests.store(schema: schema)
        let stores = try await [a, b]
        defer { for store in stores { store.close() } }
        let providers = ["good", "fair", "poor"].map { ScriptedProvider(id: $0) }
        for provider in providers { provider.setFallbackCheck(.succeed(ProviderCheckResult(status: .approved))) }
        let policy = AdaptivePolicy(providers: ["good", "fair", "poor"], minShare: 0.05, window: 3600)
        let table = RoutingTable(
            defaultOrder: ["good"], rules: [Route(name: "adaptive-sms", channels: [.sms], target: .adaptive(policy))])
        let clock = ManualClock()
        let quiet = Logger.quiet
        let services = try stores.enumerated().map { index, store in
            VerificationService(
                registry: try makeRegistry(providers), routing: table, store: store, clock: clock, logger: quiet,
                adaptive: AdaptiveRouter(
                    store: store, routing: table, clock: clock, random: AdaptiveRandom(seed: UInt64(index + 1)),
                    logger: quiet))
        }
        var byInstance = [[String]](repeating: [], count: 2)
        for index in 0..<400 {
            let instance = index % 2
            let service = services[instance]
            let record = try await service.start(
                StartVerification(
                    destination: .phone(try PhoneNumber(parsing: "+4474002\(String(format: "%05d", index))")),
                    channel: .sms))
            byInstance[instance].append(record.providerID)
            // Users of `good` approve, of `fair` every other one, of `poor` none (they cancel), on the other
            // instance than the one that started it: outcomes too are shared.
            let other = services[1 - instance]
            if record.providerID == "good" || (record.providerID == "fair" && index % 4 < 2) {
                _ = try await other.check(CheckVerification(verificationID: record.id, code: "123456"))
            } else {
                _ = try await other.cancel(id: record.id)
            }
            clock.advance(by: 0.5)
        }
        clock.advance(by: 5)
        let reports = try await services.asyncMap { try #require(try await $0.adaptive?.report().first) }
        let contexts = try reports.map { try #require($0.contexts.first) }
        #expect(contexts.map(\.context) == ["GB/sms", "GB/sms"])
        let starts = contexts[0].providers.map(\.starts).reduce(0, +)
        #expect(starts == 400, "each instance's starts count for both")
        for id in ["good", "fair", "poor"] {
            let shares = contexts.map { context in context.providers.first { $0.providerID == id }?.share ?? -1 }
            #expect(abs(shares[0] - shares[1]) <= 0.05, "\(id): \(shares)")
            #expect(
                contexts[0].providers.first { $0.providerID == id }?.starts
                    == contexts[1].providers.first { $0.providerID == id }?.starts)
        }
        // And what each instance did with it: the last 100 starts of each went mostly to `good`.
        for instance in 0..<2 {
            let late = byInstance[instance].suffix(100)
            #expect(late.filter { $0 == "good" }.count >= 75, "instance \(instance): \(late)")
        }
    }
}

extension Array {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
