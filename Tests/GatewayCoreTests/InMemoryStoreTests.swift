import GatewayCore
import GatewayTestSupport
import Testing

@Suite("In-memory store conformance")
struct InMemoryStoreTests {
    let conformance = StoreConformance { InMemoryVerificationStore() }

    @Test("Every check of the store conformance suite", arguments: StoreConformance.Check.allCases)
    func conforms(_ check: StoreConformance.Check) async throws { try await conformance.run(check) }

    @Test(
        "Every check of the delivery deadline conformance suite", arguments: DeliveryDeadlineConformance.Check.allCases)
    func deliveryDeadlines(_ check: DeliveryDeadlineConformance.Check) async throws {
        try await DeliveryDeadlineConformance { InMemoryVerificationStore() }.run(check)
    }

    @Test("Every check of the delivery stats conformance suite", arguments: DeliveryStatsConformance.Check.allCases)
    func deliveryStats(_ check: DeliveryStatsConformance.Check) async throws {
        try await DeliveryStatsConformance { InMemoryVerificationStore() }.run(check)
    }
}
