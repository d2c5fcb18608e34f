import Foundation
import GatewayCore
import Logging
import ServiceLifecycle

/// Acts on the delivery deadlines of own-code messages (docs/routing.md, "Delivery failover"), run in the
/// background by every instance when a route fails over on delivery: each round claims the deadlines that are
/// due, in the store, so one instance acts on each, and a deadline whose instance died is taken again when its
/// claim runs out. The deadlines are in the store, so a restart loses none.
struct DeliveryFailoverService: Service {
    let service: VerificationService
    let clock: any WallClock
    let logger: Logger
    /// How long to wait between rounds that found nothing to do; a round that filled its batch goes on at once.
    var interval: Duration = .seconds(1)
    var batch = 50

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let acted = await service.runDueDeliveryDeadlines(limit: batch)
            guard acted < batch else { continue }
            try? await cancelWhenGracefulShutdown { try await clock.sleep(for: interval) }
        }
    }
}
