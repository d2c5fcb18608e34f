import CoreMetrics
import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird
import Prometheus
import Synchronization

/// Who may read `GET /metrics` (`metrics.access` in the configuration).
enum MetricsAccess: String, Sendable, CaseIterable {
    /// Open to connections from the loopback interface (a local Prometheus or agent), an admin key otherwise.
    case loopbackOrAdmin = "loopback_or_admin"
    /// Always an admin key.
    case admin
    /// Anyone who can reach the port (behind a private network only).
    case open
}

/// The gateway's Prometheus registry: the engine's metrics (through ``GatewayMetrics``), HTTP requests,
/// and circuit-breaker states and the SQLite store's commit groups read at scrape time. One per built
/// application, not process-global.
struct MetricsRegistry: Sendable {
    let registry = PrometheusCollectorRegistry()
    /// The SQLite store's group counters as of the last scrape, so the Prometheus counters move by the change.
    private let storeSeen = StoreGroupsSeen()

    private final class StoreGroupsSeen: Sendable {
        let counters = Mutex(SQLiteDatabase.GroupCounters())
        let checkpoints = Mutex(SQLiteCheckpointer.Counters())
        let calls = Mutex<[String: StoreCallCounts.Tally]>([:])
        let commits = Mutex(0)
    }

    var factory: PrometheusMetricsFactory {
        var factory = PrometheusMetricsFactory(registry: registry)
        // Vendor calls and HTTP requests: from a millisecond to the vendor timeout.
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
            .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500),
            .seconds(5), .seconds(10),
        ]
        return factory
    }

    static var breakerState: MetricNameDescriptor {
        MetricNameDescriptor(
            metricName: "gateway_circuit_breaker_state", unitName: "",
            helpText: "Circuit breaker per provider and country: 0 closed, 1 half-open, 2 open.")
    }

    /// Groups the SQLite store's queue ran and the calls they carried (docs/performance.md, "Group commit").
    static var storeGroups: MetricNameDescriptor {
        MetricNameDescriptor(
            metricName: "gateway_store_commit_groups", unitName: "total",
            helpText: "Groups the SQLite store's queue ran, each one transaction of one or more calls.")
    }

    static var storeGroupedCalls: MetricNameDescriptor {
        MetricNameDescriptor(
            metricName: "gateway_store_grouped_calls", unitName: "total",
            helpText:
                "Store calls run in those groups: divided by gateway_store_commit_groups_total, the mean group size.")
    }

    static var storeDelayedCommits: MetricNameDescriptor {
        MetricNameDescriptor(
            metricName: "gateway_store_delayed_commits", unitName: "total",
            helpText:
                "Groups of the SQLite store whose commit waited for the writes of other requests in flight (sqlite_commit_delay_ms)."
        )
    }

    /// The SQLite store's WAL checkpoints by who ran them (docs/performance.md, "Checkpoints off the writer").
    static var storeCheckpoints: MetricNameDescriptor {
        MetricNameDescriptor(
            metricName: "gateway_store_checkpoints", unitName: "total",
            helpText:
                "WAL checkpoints of the SQLite store: background (its own connection), tail (the writer, a few frames so the WAL starts over), inline (the writer, the WAL at its limit), skipped (another was under way)."
        )
    }

    /// Store calls and statements by operation, and commits (``StoreCallCounts``), either store.
    static var storeCalls: MetricNameDescriptor {
        MetricNameDescriptor(
            metricName: "gateway_store_calls", unitName: "total",
            helpText: "Store operations run, by operation (each one call of the store, whatever its statements).")
    }

    static var storeStatements: MetricNameDescriptor {
        MetricNameDescriptor(
            metricName: "gateway_store_statements", unitName: "total",
            helpText: "SQL statements the store's operations sent, by operation (not BEGIN, COMMIT or savepoints).")
    }

    static var storeCommits: MetricNameDescriptor {
        MetricNameDescriptor(
            metricName: "gateway_store_commits", unitName: "total",
            helpText:
                "Transactions the store committed: on SQLite those that wrote (a group is one), on PostgreSQL every transaction and every statement run outside one."
        )
    }

    /// The exposition text, with the breaker gauges and the store's call, group and checkpoint counters
    /// brought up to date first.
    func scrape(breakers: CircuitBreakers, store: (any VerificationStore)? = nil) -> [UInt8] {
        if let sql = store as? any SQLStore {
            publishCallCounts(sql.callCounts)
        }
        if let sqlite = store as? SQLiteVerificationStore {
            let now = sqlite.database.groupCounters
            let before = storeSeen.counters.withLock { seen in
                defer { seen = now }
                return seen
            }
            registry.makeCounter(descriptor: Self.storeGroups)
                .increment(by: Int64(max(0, now.groups - before.groups)))
            registry.makeCounter(descriptor: Self.storeGroupedCalls)
                .increment(by: Int64(max(0, now.calls - before.calls)))
            registry.makeCounter(descriptor: Self.storeDelayedCommits)
                .increment(by: Int64(max(0, now.delayed - before.delayed)))
            let checkpoints = sqlite.database.checkpointCounters
            let seen = storeSeen.checkpoints.withLock { seen in
                defer { seen = checkpoints }
                return seen
            }
            for (kind, count) in [
                ("background", checkpoints.background - seen.background), ("tail", checkpoints.tails - seen.tails),
                ("inline", checkpoints.inline - seen.inline), ("skipped", checkpoints.skipped - seen.skipped),
            ] {
                registry.makeCounter(descriptor: Self.storeCheckpoints, labels: [("kind", kind)])
                    .increment(by: Int64(max(0, count)))
            }
        }
        for status in breakers.statuses {
            let value: Int64
            switch status.state {
            case .closed: value = 0
            case .halfOpen: value = 1
            case .open: value = 2
            }
            registry.makeGauge(
                descriptor: Self.breakerState,
                labels: [("provider", status.providerID), ("country", status.country.isEmpty ? "any" : status.country)]
            ).set(to: Double(value))
        }
        return registry.emitToBuffer()
    }
}

extension MetricsRegistry {
    /// Moves the Prometheus counters by what `counts` gained since the last scrape.
    fileprivate func publishCallCounts(_ counts: StoreCallCounts) {
        let now = counts.snapshot
        let before = storeSeen.calls.withLock { seen in
            defer { seen = now }
            return seen
        }
        for (operation, tally) in now {
            let seen = before[operation] ?? StoreCallCounts.Tally()
            if tally.calls > seen.calls {
                registry.makeCounter(descriptor: Self.storeCalls, labels: [("operation", operation)])
                    .increment(by: Int64(tally.calls - seen.calls))
            }
            if tally.statements > seen.statements {
                registry.makeCounter(descriptor: Self.storeStatements, labels: [("operation", operation)])
                    .increment(by: Int64(tally.statements - seen.statements))
            }
        }
        let commits = counts.commits
        let seenCommits = storeSeen.commits.withLock { seen in
            defer { seen = commits }
            return seen
        }
        registry.makeCounter(descriptor: Self.storeCommits).increment(by: Int64(max(0, commits - seenCommits)))
    }
}

/// `GET /metrics`, in the Prometheus text format.
struct MetricsController: Sendable {
    let metrics: MetricsRegistry
    let service: VerificationService
    let access: MetricsAccess
    let keys: APIKeyMiddleware

    func addRoutes(to router: some RouterMethods<GatewayRequestContext>) {
        router.get("metrics") { request, context in
            let scrape: @Sendable (Request, GatewayRequestContext) async throws -> Response = { _, _ in
                Response(
                    status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                    body: ResponseBody(
                        byteBuffer: ByteBuffer(bytes: metrics.scrape(breakers: service.breakers, store: service.store)))
                )
            }
            switch access {
            case .open:
                return try await scrape(request, context)
            case .loopbackOrAdmin where Self.isLoopback(context.remoteAddress):
                return try await scrape(request, context)
            case .loopbackOrAdmin, .admin:
                return try await keys.handle(request, context: context, next: scrape)
            }
        }
    }

    static func isLoopback(_ address: String?) -> Bool {
        guard let address else { return false }
        return address.hasPrefix("127.") || address == "::1" || address.hasPrefix("::ffff:127.")
    }
}

/// Counts every HTTP request by method, route template and status, and times it. Routes are the
/// router's templates (`/v1/verifications/{id}`), so no id or number becomes a label; emulator and
/// callback paths are labelled by their plugin, anything else `unmatched`.
struct HTTPMetricsMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let handles: MetricHandleCache
    /// The labels of requests no route matched: `/sandbox/<id>/*` and `/callbacks/<id>/*` for provider and
    /// plugin ids (the only second path segments labelled), built once; the sandbox's emulators are such
    /// requests, answered before routing.
    let unrouted: UnroutedLabels

    init(factory: PrometheusMetricsFactory, knownIDs: Set<String>) {
        self.handles = MetricHandleCache(factory: factory)
        self.unrouted = UnroutedLabels(knownIDs: knownIDs)
    }

    struct UnroutedLabels: Sendable {
        let sandbox: [String: String]
        let callbacks: [String: String]

        init(knownIDs: Set<String>) {
            sandbox = Dictionary(uniqueKeysWithValues: knownIDs.map { ($0, "/sandbox/\($0)/*") })
            callbacks = Dictionary(uniqueKeysWithValues: knownIDs.map { ($0, "/callbacks/\($0)/*") })
        }

        func label(_ path: String) -> String {
            let parts = path.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: true)
            guard parts.count >= 2 else { return "unmatched" }
            switch parts[0] {
            case "sandbox": return sandbox[String(parts[1])] ?? "unmatched"
            case "callbacks": return callbacks[String(parts[1])] ?? "unmatched"
            default: return "unmatched"
            }
        }
    }

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let began = ContinuousClock.now
        let response = try await next(request, context)
        let route = context.endpointPath ?? unrouted.label(request.uri.path)
        let method = request.method.rawValue
        let labels = [("method", method), ("route", route), ("status", String(response.status.code))]
        handles.counter("gateway_http_requests_total", labels).increment()
        let elapsed = ContinuousClock.now - began
        handles.timer("gateway_http_request_duration_seconds", labels).recordNanoseconds(
            elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
        return response
    }
}
