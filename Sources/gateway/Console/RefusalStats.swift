import Foundation
import GatewayCore

/// `GET /v1/admin/refusals`: the starts and requests the gateway refused for a rate limit, a geo permission or
/// the SMS-pumping guard, counted in the store per kind and minute (`refusal_counts`), so every instance shows
/// the same numbers; summed per kind over the window, with a series per 5 minutes (1h) or hour (24h).
struct RefusalStats: Sendable {
    struct Kind: Sendable, Equatable {
        var kind: String
        var count: Int
        var series: [Int]
    }

    /// Refusals are counted per minute: the bucket a refusal at `date` falls in (Unix seconds).
    static let bucketSeconds = 60

    static func bucket(_ date: Date) -> Int {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        return seconds - ((seconds % bucketSeconds) + bucketSeconds) % bucketSeconds
    }

    var window: VerificationStats.Window
    var since: Date
    var until: Date
    var kinds: [Kind]

    /// The first minute bucket a window ending at `until` reads: the one `until - window` falls in.
    static func firstBucket(window: VerificationStats.Window, until: Date) -> Int {
        bucket(until.addingTimeInterval(-Double(window.seconds)))
    }

    static func build(rows: [RefusalCountRow], window: VerificationStats.Window, until: Date) -> RefusalStats {
        let since = until.addingTimeInterval(-Double(window.seconds))
        let origin = firstBucket(window: window, until: until)
        var kinds: [String: Kind] = [:]
        for row in rows where row.bucketStart >= origin {
            let index = min(max((row.bucketStart - origin) / window.bucketSeconds, 0), window.buckets - 1)
            var kind =
                kinds[row.kind] ?? Kind(kind: row.kind, count: 0, series: Array(repeating: 0, count: window.buckets))
            kind.count += row.count
            kind.series[index] += row.count
            kinds[row.kind] = kind
        }
        let ordered = kinds.values.sorted { $0.count != $1.count ? $0.count > $1.count : $0.kind < $1.kind }
        return RefusalStats(window: window, since: since, until: until, kinds: ordered)
    }

    var json: JSONValue {
        [
            "window": .string(window.name), "window_seconds": .number(Double(window.seconds)),
            "bucket_seconds": .number(Double(window.bucketSeconds)),
            "since": .string(VerificationsController.timestamp(since)),
            "until": .string(VerificationsController.timestamp(until)),
            "total": .number(Double(kinds.reduce(0) { $0 + $1.count })),
            "kinds": .array(
                kinds.map { kind in
                    [
                        "kind": .string(kind.kind), "count": .number(Double(kind.count)),
                        "series": .array(kind.series.map { .number(Double($0)) }),
                    ]
                }),
        ]
    }
}
