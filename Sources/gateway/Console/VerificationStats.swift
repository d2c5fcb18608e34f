import Foundation
import GatewayCore

/// Verifications counted by vendor, outcome and time bucket, from the store (so every instance shows the
/// same numbers): what the console's overview draws.
protocol VerificationStatsStore: Sendable {
    /// Verifications created since `since`, grouped by vendor, status, status reason, failovers and
    /// `bucketSeconds`-long bucket (0 starts at `since`).
    func verificationStats(since: Date, bucketSeconds: Int) async throws(GatewayError) -> [VerificationStatsRow]
    /// Verifications created since `since` (test numbers left out) by vendor, country and status.
    func countryStats(since: Date) async throws(GatewayError) -> [CountryStatsRow]
    /// The segments the accepted sends of the gateway's own codes were billed in, for the verifications
    /// created since `since` (test numbers left out), by the verification's vendor, its country and the vendor
    /// that sent.
    func countrySegments(since: Date) async throws(GatewayError) -> [CountrySegmentsRow]
    /// The risk-signal calls (SIM swap) made for the verifications created since `since` (test numbers left
    /// out), by the verification's vendor, its country and the signal's provider (`senderID`; `segments` and
    /// `sends` both the number of calls). Cached answers cost nothing and are not counted.
    func countrySignals(since: Date) async throws(GatewayError) -> [CountrySegmentsRow]
    /// The vendor calls of the verifications created since `since`, counted by vendor and latency (ms).
    func vendorLatencies(since: Date) async throws(GatewayError) -> [LatencyRow]
    /// The newest `limit` verifications to `destination` (an E.164 number), newest first, with those whose number
    /// retention replaced by `digest` (its keyed hash).
    func verifications(destination: String, digest: String?, limit: Int) async throws(GatewayError)
        -> [VerificationRecord]
    /// Refusals counted per kind and minute, from the minute starting at `since` (Unix seconds) on.
    func refusalCounts(since bucketStart: Int) async throws(GatewayError) -> [RefusalCountRow]
}

struct RefusalCountRow: Sendable, Equatable {
    var kind: String
    /// The minute's first second (Unix seconds).
    var bucketStart: Int
    var count: Int
}

struct CountryStatsRow: Sendable, Equatable {
    var providerID: String
    /// Nil for verifications written before the store kept countries, and for destinations that are not numbers.
    var country: String?
    var status: String
    var count: Int
}

struct CountrySegmentsRow: Sendable, Equatable {
    /// The verification's vendor.
    var providerID: String
    var country: String?
    /// The vendor that sent (another one for a resend that moved).
    var senderID: String
    var segments: Int
    /// How many accepted sends those segments are of.
    var sends: Int = 0
}

struct LatencyRow: Sendable, Equatable {
    var providerID: String
    var milliseconds: Int
    var count: Int
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
    /// Vendor call latency per vendor, p50 and p95 in milliseconds, and the calls they are read from.
    var latency: [String: Latency] = [:]
    /// Own-code delivery per sending vendor and country (nil when the store keeps no tallies).
    var delivery: DeliveryFigures?

    struct Latency: Sendable, Equatable {
        var calls: Int
        var p50: Int
        var p95: Int
    }

    /// The nearest-rank percentiles of each vendor's latency histogram (`rows`).
    static func latencies(_ rows: [LatencyRow]) -> [String: Latency] {
        var result: [String: Latency] = [:]
        for (vendor, list) in Dictionary(grouping: rows, by: \.providerID) {
            let sorted = list.sorted { $0.milliseconds < $1.milliseconds }
            let total = sorted.reduce(0) { $0 + $1.count }
            guard total > 0 else { continue }
            func rank(_ fraction: Double) -> Int {
                let wanted = max(1, Int((fraction * Double(total)).rounded(.up)))
                var seen = 0
                for row in sorted {
                    seen += row.count
                    if seen >= wanted { return row.milliseconds }
                }
                return sorted.last?.milliseconds ?? 0
            }
            result[vendor] = Latency(calls: total, p50: rank(0.5), p95: rank(0.95))
        }
        return result
    }
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
                        "delivery": DeliveryFigures.json(delivery?.vendor(id)),
                        "latency_ms": latency[id].map { value -> JSONValue in
                            [
                                "calls": .number(Double(value.calls)), "p50": .number(Double(value.p50)),
                                "p95": .number(Double(value.p95)),
                            ]
                        } ?? .null,
                        "series": [
                            "starts": series(vendor.startSeries), "approvals": series(vendor.approvalSeries),
                            "errors": series(vendor.errorSeries),
                        ],
                    ]
                }),
        ]
    }
}

/// `GET /v1/admin/stats/countries`: per vendor and country, over the last hour or day, verifications started
/// and approved, the conversion, and the cost per approval from the routing configuration's `prices`, as
/// `gateway experiments report` counts it: a Verify vendor's start that did not fail is paid at its price for
/// the country; the gateway's own codes are paid per segment sent, each send at the price of the vendor that
/// sent it (a resend through another vendor at that one's).
struct CountryStats: Sendable {
    struct Cell: Sendable, Equatable {
        var providerID: String
        var country: String?
        var starts = 0
        var approvals = 0
        var failed = 0
        /// The segments the cell's verifications' own-code messages were billed in, by the vendor that sent;
        /// empty for a Verify vendor.
        var segments: [String: Int] = [:]
        /// The risk-signal calls made for the cell's verifications, by the signal's provider (each priced as one
        /// call at that provider's price).
        var signals: [String: Int] = [:]
    }

    var window: VerificationStats.Window
    var since: Date
    var until: Date
    var cells: [Cell]
    var prices: PriceTable
    /// Own-code delivery per sending vendor and country (nil when the store keeps no tallies).
    var delivery: DeliveryFigures?

    static func build(
        rows: [CountryStatsRow], segments: [CountrySegmentsRow] = [], signals: [CountrySegmentsRow] = [],
        providers: [String], prices: PriceTable, window: VerificationStats.Window, until: Date
    ) -> CountryStats {
        struct Key: Hashable {
            var provider: String
            var country: String?
        }
        var cells: [Key: Cell] = [:]
        for row in rows {
            let key = Key(provider: row.providerID, country: row.country)
            var cell = cells[key] ?? Cell(providerID: row.providerID, country: row.country)
            cell.starts += row.count
            if row.status == VerificationStatus.approved.rawValue { cell.approvals += row.count }
            if row.status == VerificationStatus.failed.rawValue { cell.failed += row.count }
            cells[key] = cell
        }
        for row in segments {
            let key = Key(provider: row.providerID, country: row.country)
            var cell = cells[key] ?? Cell(providerID: row.providerID, country: row.country)
            cell.segments[row.senderID, default: 0] += row.segments
            cells[key] = cell
        }
        for row in signals {
            let key = Key(provider: row.providerID, country: row.country)
            var cell = cells[key] ?? Cell(providerID: row.providerID, country: row.country)
            cell.signals[row.senderID, default: 0] += row.segments
            cells[key] = cell
        }
        // Vendors in routing order, then any other; countries by starts, most first; unknown countries last.
        let rank = Dictionary(providers.enumerated().map { ($0.element, $0.offset) }, uniquingKeysWith: { a, _ in a })
        let ordered = cells.values.sorted { a, b in
            let (ra, rb) = (rank[a.providerID] ?? Int.max, rank[b.providerID] ?? Int.max)
            if ra != rb { return ra < rb }
            if a.providerID != b.providerID { return a.providerID < b.providerID }
            if (a.country == nil) != (b.country == nil) { return b.country == nil }
            if a.starts != b.starts { return a.starts > b.starts }
            return (a.country ?? "") < (b.country ?? "")
        }
        return CountryStats(
            window: window, since: until.addingTimeInterval(-Double(window.seconds)), until: until, cells: ordered,
            prices: prices)
    }

    /// What the cell's starts cost: its own-code segments at each sending vendor's price, or else its starts that
    /// did not fail at its vendor's; and the risk signals asked for them, a call each at the signal provider's
    /// price (a start the risk step refused, kept with vendor `-`, costs its signal alone). Nil when a vendor in it
    /// has no price for the country (nor a default), or the country is unknown and the vendor has no default: a
    /// partial sum never passes for a cost.
    func cost(_ cell: Cell) -> Double? {
        var total = 0.0
        for (provider, calls) in cell.signals {
            guard let price = prices.price(provider: provider, country: cell.country) else { return nil }
            total += price * Double(calls)
        }
        if !cell.segments.isEmpty {
            for (sender, segments) in cell.segments {
                guard let price = prices.price(provider: sender, country: cell.country) else { return nil }
                total += price * Double(segments)
            }
            return total
        }
        // Refused before any vendor (the risk step, the pumping guard): nothing was sent.
        if cell.providerID == "-", !cell.signals.isEmpty { return total }
        guard let price = prices.price(provider: cell.providerID, country: cell.country) else { return nil }
        return total + price * Double(cell.starts - cell.failed)
    }

    var json: JSONValue {
        func number(_ value: Double?) -> JSONValue { value.map(JSONValue.number) ?? .null }
        return [
            "window": .string(window.name), "window_seconds": .number(Double(window.seconds)),
            "since": .string(VerificationsController.timestamp(since)),
            "until": .string(VerificationsController.timestamp(until)),
            "cells": .array(
                cells.map { cell -> JSONValue in
                    let cost = cost(cell)
                    return [
                        "provider": .string(cell.providerID), "country": cell.country.map(JSONValue.string) ?? .null,
                        "starts": .number(Double(cell.starts)), "approvals": .number(Double(cell.approvals)),
                        "failed": .number(Double(cell.failed)),
                        "segments": cell.segments.isEmpty
                            ? .null : .number(Double(cell.segments.values.reduce(0, +))),
                        "signal_calls": .number(Double(cell.signals.values.reduce(0, +))),
                        "conversion": number(cell.starts > 0 ? Double(cell.approvals) / Double(cell.starts) : nil),
                        "cost": number(cost),
                        "delivery": DeliveryFigures.json(
                            delivery?.cell(provider: cell.providerID, country: cell.country)),
                        "cost_per_approval": number(
                            cell.approvals > 0 ? cost.map { $0 / Double(cell.approvals) } : nil),
                    ]
                }),
        ]
    }
}

/// The delivery figures of the stats routes, per sending vendor and country: the own-code messages the window's
/// verifications sent (their `provider_call` events), and the final receipts that arrived in the window (the
/// store's delivery tallies), with the send-to-delivered percentiles (docs/own-codes.md, "Delivery figures").
struct DeliveryFigures: Sendable {
    struct Key: Hashable {
        var provider: String
        var country: String?
    }

    var cells: [Key: DeliveryLatency.Figures] = [:]

    static func build(tallies: [DeliveryTally], segments: [CountrySegmentsRow]) -> DeliveryFigures {
        var figures = DeliveryFigures()
        for row in segments {
            let key = Key(provider: row.senderID, country: row.country)
            var cell = figures.cells[key] ?? DeliveryLatency.Figures(sends: 0)
            cell.sends = (cell.sends ?? 0) + row.sends
            figures.cells[key] = cell
        }
        for tally in tallies {
            let key = Key(provider: tally.providerID, country: tally.country)
            var cell = figures.cells[key] ?? DeliveryLatency.Figures(sends: 0)
            cell.add(tally)
            figures.cells[key] = cell
        }
        return figures
    }

    /// A vendor's figures in one country, if it sent or had receipts there.
    func cell(provider: String, country: String?) -> DeliveryLatency.Figures? {
        cells[Key(provider: provider, country: country)]
    }

    /// A vendor's figures over every country, if it sent or had receipts anywhere.
    func vendor(_ provider: String) -> DeliveryLatency.Figures? {
        var total: DeliveryLatency.Figures?
        for (key, cell) in cells where key.provider == provider {
            var sum = total ?? DeliveryLatency.Figures(sends: 0)
            sum.sends = (sum.sends ?? 0) + (cell.sends ?? 0)
            sum.delivered += cell.delivered
            sum.undelivered += cell.undelivered
            sum.failed += cell.failed
            sum.histogram.merge(cell.histogram, uniquingKeysWith: +)
            total = sum
        }
        return total
    }

    /// `delivery` of a vendor or a cell: `null` for a vendor that sent no own-code message and had no receipt.
    static func json(_ figures: DeliveryLatency.Figures?) -> JSONValue {
        guard let figures else { return .null }
        func number(_ value: Int?) -> JSONValue { value.map { .number(Double($0)) } ?? .null }
        return [
            "sends": number(figures.sends), "delivered": number(figures.delivered),
            "undelivered": number(figures.undelivered), "failed": number(figures.failed),
            "rate": figures.rate.map(JSONValue.number) ?? .null, "p50_ms": number(figures.percentile(0.5)),
            "p95_ms": number(figures.percentile(0.95)),
        ]
    }
}
