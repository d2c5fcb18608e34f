import Foundation

/// The gateway instances that take leases on verifications, as far as this one can tell
/// (docs/architecture.md §9.3).
///
/// Every lease records the instance that took it. A lease whose instance has died (its process is gone, or
/// its heartbeat stopped) is taken over at once, instead of after ``VerificationPolicy/checkLease``, and the
/// attempt its check reserved is given back: no answer of that check was ever stored.
public protocol LeaseOwners: Sendable {
    /// This instance's id, made at startup: written as the owner of every lease it takes.
    var instanceID: String { get }

    /// Whether the instance `id` is known to be dead. `false` when in doubt: a live instance's lease must
    /// never be taken (its check may be at the vendor).
    func isDead(_ id: String) async -> Bool
}

/// A gateway instance's heartbeat row: what other instances judge its leases by.
public struct GatewayInstance: Sendable, Equatable {
    /// The instance's id (``LeaseOwners/instanceID``), as its leases name it.
    public var id: String
    /// Where it runs: the host name, boot and process namespace (``host`` and ``pid`` name one process).
    public var host: String
    /// The instance's process id on ``host``.
    public var pid: Int
    /// When the instance started.
    public var startedAt: Date
    /// When the instance last wrote its row; an old heartbeat marks it dead.
    public var heartbeatAt: Date

    /// A heartbeat row for the instance `id`.
    public init(id: String, host: String, pid: Int, startedAt: Date, heartbeatAt: Date) {
        self.id = id
        self.host = host
        self.pid = pid
        self.startedAt = startedAt
        self.heartbeatAt = heartbeatAt
    }
}

/// The heartbeat rows of the instances on a store: the part of ``VerificationStore`` that ``LeaseOwners``
/// judges leases by. Methods throw only ``GatewayError``.
public protocol InstanceHeartbeatStore: Sendable {
    /// Writes `instance`'s heartbeat row: inserted, or replacing the row with its id.
    func heartbeat(_ instance: GatewayInstance) async throws(GatewayError)

    /// Every instance's heartbeat row, by id.
    func instances() async throws(GatewayError) -> [GatewayInstance]

    /// Deletes the heartbeat row of `id` (an instance found dead); its leases are then taken over at once.
    func removeInstance(id: String) async throws(GatewayError)
}
