import CoreMetrics
import Foundation

/// The engine's metrics, through swift-metrics' API (docs/design.md §10). The gateway hands in a Prometheus
/// factory of its own (no process-global bootstrap, so several gateways in one test process keep separate
/// figures); everything else gets the no-op factory.
///
/// Labels are bounded: provider ids and channels come from the configuration, countries are ISO 3166
/// regions (or `unknown`), codes are the taxonomy's. No phone number, verification id or key ever becomes
/// a label. Every metric name has one fixed label set (Prometheus requires it).
/// The names and labels are listed in `docs/operations.md`.
public struct GatewayMetrics: Sendable {
    let handles: MetricHandleCache

    /// Metrics recorded through `factory`, with handles cached per name and labels (``MetricHandleCache``).
    public init(factory: any MetricsFactory) {
        self.handles = MetricHandleCache(factory: factory)
    }

    /// Records nothing.
    public static let disabled = GatewayMetrics(factory: NOOPMetricsHandler.instance)

    static func country(of destination: Destination) -> String {
        destination.phoneNumber?.region ?? "unknown"
    }

    private func count(_ name: String, _ labels: [(String, String)], by amount: Int64 = 1) {
        handles.counter(name, labels).increment(by: amount)
    }

    /// A verification a vendor accepted (or a test number served).
    func started(_ record: VerificationRecord) {
        count("gateway_verifications_started_total", labels(record))
    }

    /// A start that ended in an error, whatever the layer that refused it.
    func startFailed(_ request: StartVerification, code: GatewayError.Code) {
        count(
            "gateway_verification_start_errors_total",
            [
                ("country", Self.country(of: request.destination)), ("channel", request.channel.rawValue),
                ("code", code.rawValue),
            ])
    }

    /// A check that reached a verification: `outcome` is `approved`, or the taxonomy code it answered.
    func checked(_ record: VerificationRecord, outcome: String) {
        count("gateway_verification_checks_total", labels(record) + [("outcome", outcome)])
    }

    /// A verification that reached a final status (approved, denied, expired, failed, …), by any path.
    func finished(_ record: VerificationRecord) {
        count("gateway_verifications_finished_total", labels(record) + [("status", record.status.rawValue)])
        if record.status == .approved { count("gateway_verifications_approved_total", labels(record)) }
    }

    /// One call to a vendor, with its latency.
    func providerCall(provider: String, operation: String, outcome: String, nanoseconds: Int64) {
        handles.timer(
            "gateway_provider_call_duration_seconds",
            [("provider", provider), ("operation", operation), ("outcome", outcome)]
        ).recordNanoseconds(nanoseconds)
    }

    /// One HTTP call a plugin made to its vendor (``VendorHTTPClient``): `operation` is the vendor's name for it,
    /// `outcome` is `ok` or the taxonomy code the answer (or its absence) mapped to.
    func vendorCall(provider: String, operation: String, outcome: String, nanoseconds: Int64) {
        handles.timer(
            "gateway_vendor_call_duration_seconds",
            [("provider", provider), ("operation", operation), ("outcome", outcome)]
        ).recordNanoseconds(nanoseconds)
    }

    /// A start that went on to the next provider after `provider` failed with `code`.
    func failover(provider: String, country: String?, code: GatewayError.Code) {
        count(
            "gateway_failovers_total",
            [("provider", provider), ("country", country ?? "unknown"), ("code", code.rawValue)])
    }

    /// A request refused by a rate limit (`limit` names which one: destination, API key, IP…).
    func rateLimited(operation: String, limit: String) {
        count("gateway_rate_limit_refusals_total", [("operation", operation), ("limit", limit)])
    }

    /// One answer of a risk signal (`swapped`, `not_swapped`, `unavailable`) and what the route did with it.
    func riskSignal(provider: String, answer: String, action: String) {
        count("gateway_risk_signals_total", [("provider", provider), ("answer", answer), ("action", action)])
    }

    /// A start refused by the SMS-pumping guard (a prefix block in force or one it just set).
    func pumpingRefused(country: String, tripped: Bool) {
        count(
            "gateway_pumping_guard_refusals_total", [("country", country), ("tripped", tripped ? "true" : "false")])
    }

    /// A messaging vendor's receipt for one of the gateway's own messages: `status` as normalized, `error` the
    /// taxonomy code of the vendor's error code (`none` without one).
    func delivery(_ record: VerificationRecord, provider: String, status: DeliveryStatus, error: GatewayError.Code?) {
        count(
            "gateway_deliveries_total",
            [
                ("provider", provider), ("country", Self.country(of: record.destination)),
                ("status", status.rawValue), ("code", error?.rawValue ?? "none"),
            ])
    }

    /// A delivery failover (docs/routing.md, "Delivery failover"): the code sent again through `to` because the
    /// message of `from` failed (`reason` `failed`) or was not reported delivered in time (`not_delivered`).
    func deliveryFailover(_ record: VerificationRecord, from: String, to: String, reason: String) {
        count(
            "gateway_delivery_failovers_total",
            [("from", from), ("to", to), ("country", Self.country(of: record.destination)), ("reason", reason)])
    }

    private func labels(_ record: VerificationRecord) -> [(String, String)] {
        [
            ("provider", record.providerID), ("country", Self.country(of: record.destination)),
            ("channel", record.channel.rawValue),
        ]
    }
}
