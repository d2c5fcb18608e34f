import Foundation
import GatewayCore

/// Verifications counted by vendor, outcome and time bucket, from the store (so every instance shows the
/// same numbers): what the console's overview draws.
protocol VerificationStatsStore: Sendable {
    /// Verifications created since `since`, grouped by vendor, status, status reason, failovers and
    /// `bucketSeconds`-long bucket (0 starts at `since`).
    func verificationStats(since: Date, bucketSeconds: Int) async throws(GatewayError) -> [VerificationStatsRow]
}

struct VerificationStatsRow: Sendable, Equatable {
    var providerID: String
    var status: String
    var reason: String?
    /// `provider:error_code` of each vendor failed over before this one.
    var failovers: [String]
    var bucket: Int
    var count: Int
}

/// `GET /v1/admin/stats`: per vendor, over the last hour or day, verifications started and approved, their
/// outcomes, the errors that made the gateway fail over from the vendor, and the same per time bucket
/// (the console's sparklines). Counted in the store, so every instance answers alike.
struct VerificationStats: Sendable {
    struct Window: Sendable {
        var seconds: Int
        var bucketSeconds: Int
        var name: String

        static let hour = Window(seconds: 3600, bucketSeconds: 300, name: "1h")
        static let day = Window(seconds: 86400, bucketSeconds: 3600, name: "24h")

        var buckets: Int { seconds / bucketSeconds }
    }

    struct Vendor: Sendable {
        var starts = 0
        var approvals = 0
        var statuses: [String: Int] = [:]
        /// Errors by code: failovers away from the vendor and verifications that failed at it.
        var errors: [String: Int] = [:]
        var startSeries: [Int]
        var approvalSeries: [Int]
        var errorSeries: [Int]

        init(buckets: Int) {
            startSeries = Array(repeating: 0, count: buckets)
            approvalSeries = startSeries
            errorSeries = startSeries
        }
    }

    var window: Window
    var since: Date
    var until: Date
    var vendors: [String: Vendor]
    var order: [String]

    /// Folds the store's rows into per-vendor figures; `providers` (in routing order) come first, any other
    /// vendor met in the rows after them.
    static func build(rows: [VerificationStatsRow], providers: [String], window: Window, until: Date)
        -> VerificationStats
    {
        var vendors: [String: Vendor] = [:]
        var order = providers
        for id in providers { vendors[id] = Vendor(buckets: window.buckets) }
        func touch(_ id: String) {
            if vendors[id] == nil {
                vendors[id] = Vendor(buckets: window.buckets)
                order.append(id)
            }
        }
        for row in rows {
            let bucket = min(max(row.bucket, 0), window.buckets - 1)
            touch(row.providerID)
            vendors[row.providerID]!.starts += row.count
            vendors[row.providerID]!.startSeries[bucket] += row.count
            vendors[row.providerID]!.statuses[row.status, default: 0] += row.count
            if row.status == VerificationStatus.approved.rawValue {
                vendors[row.providerID]!.approvals += row.count
                vendors[row.providerID]!.approvalSeries[bucket] += row.count
            }
            if row.status == VerificationStatus.failed.rawValue {
                vendors[row.providerID]!.errors[row.reason ?? "failed", default: 0] += row.count
                vendors[row.providerID]!.errorSeries[bucket] += row.count
            }
            for failover in row.failovers {
                let parts = failover.split(separator: ":", maxSplits: 1).map(String.init)
                guard let vendor = parts.first, !vendor.isEmpty else { continue }
                touch(vendor)
                vendors[vendor]!.errors[parts.count > 1 ? parts[1] : "error", default: 0] += row.count
                vendors[vendor]!.errorSeries[bucket] += row.count
            }
        }
        return VerificationStats(
            window: window, since: until.addingTimeInterval(-Double(window.seconds)), until: until, vendors: vendors,
            order: order)
    }

    var json: JSONValue {
        func counts(_ map: [String: Int]) -> JSONValue { .object(map.mapValues { .number(Double($0)) }) }
        func series(_ list: [Int]) -> JSONValue { .array(list.map { .number(Double($0)) }) }
        return [
            "window": .string(window.name), "window_seconds": .number(Double(window.seconds)),
            "bucket_seconds": .number(Double(window.bucketSeconds)),
            "since": .string(VerificationsController.timestamp(since)),
            "until": .string(VerificationsController.timestamp(until)),
            "providers": .array(
                order.compactMap { id -> JSONValue? in
                    guard let vendor = vendors[id] else { return nil }
                    let errorCount = vendor.errors.values.reduce(0, +)
                    return [
                        "id": .string(id), "starts": .number(Double(vendor.starts)),
                        "approvals": .number(Double(vendor.approvals)),
                        "conversion": vendor.starts > 0
                            ? .number(Double(vendor.approvals) / Double(vendor.starts)) : .null,
                        "statuses": counts(vendor.statuses), "errors": counts(vendor.errors),
                        "error_count": .number(Double(errorCount)),
                        "series": [
                            "starts": series(vendor.startSeries), "approvals": series(vendor.approvalSeries),
                            "errors": series(vendor.errorSeries),
                        ],
                    ]
                }),
        ]
    }
}
