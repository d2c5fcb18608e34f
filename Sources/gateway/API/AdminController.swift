import Foundation
import GatewayCore
import Hummingbird

/// `/v1/admin/…`: provider health and circuit breakers, experiment reports. Needs the `admin` scope.
struct AdminController: Sendable {
    let service: VerificationService
    let prices: PriceTable
    /// Where the overview's counts come from (every store of the one schema).
    var stats: (any VerificationStatsStore)? = nil
    /// Finds verifications whose number retention anonymized, by the number's keyed hash.
    var anonymizer: DestinationAnonymizer? = nil

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.get("providers", use: providers)
        group.get("experiments", use: experiments)
        group.get("experiments/{name}", use: experiment)
        if stats != nil {
            group.get("stats", use: statistics)
            group.get("stats/countries", use: countries)
            group.get("verifications", use: verificationsByNumber)
            group.get("refusals", use: refusals)
        }
        group.get("blocks", use: blocks)
        group.delete("blocks/{prefix}", use: lift)
    }

    /// `GET /v1/admin/blocks`: the prefixes the pumping guard blocked, while the block lasts.
    @Sendable func blocks(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let list = try await service.prefixBlocks().map { block -> JSONValue in
            [
                "prefix": .string(block.prefix),
                "blocked_at": .string(VerificationsController.timestamp(block.blockedAt)),
                "until": .string(VerificationsController.timestamp(block.until)),
                "starts": .number(Double(block.starts)), "approvals": .number(Double(block.approvals)),
                "verification_id": block.verificationID.map(JSONValue.string) ?? .null,
            ]
        }
        return JSONResponse.response(["blocks": .array(list)])
    }

    /// `DELETE /v1/admin/blocks/{prefix}`: lifts a block (`+447400`, URL-encoded as `%2B447400`).
    @Sendable func lift(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let raw = try context.parameters.require("prefix")
        let prefix = raw.removingPercentEncoding ?? raw
        guard prefix.hasPrefix("+"), (2...16).contains(prefix.count), prefix.dropFirst().allSatisfy(\.isWholeNumber)
        else { throw GatewayError.invalidRequest("`prefix` must be `+` and 1 to 15 digits, such as `+447400`.") }
        guard try await service.liftBlock(prefix: prefix) else {
            throw GatewayError(.notFound, "No block is in force for \(prefix).")
        }
        return JSONResponse.response(["prefix": .string(prefix), "lifted": .bool(true)])
    }

    /// `GET /v1/admin/experiments`: the configured experiments and their arms, by name.
    @Sendable func experiments(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let list = service.routing.experiments.values.sorted { $0.name < $1.name }.map { experiment -> JSONValue in
            [
                "name": .string(experiment.name),
                "arms": .array(
                    experiment.arms.map { arm in
                        [
                            "name": .string(arm.name), "provider": .string(arm.providerID),
                            "weight": .number(Double(arm.weight)), "control": .bool(arm.isControl),
                        ]
                    }),
            ]
        }
        return JSONResponse.response(["experiments": .array(list)])
    }

    /// `GET /v1/admin/stats?window=1h|24h`: per vendor starts, approvals, outcomes and errors, with a series
    /// per 5 minutes (1h, the default) or per hour (24h).
    @Sendable func statistics(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        guard let stats else { throw GatewayError(.notFound, "This store keeps no statistics.") }
        let window = try Self.window(request)
        let now = service.clock.now
        let since = now.addingTimeInterval(-Double(window.seconds))
        async let counted = stats.verificationStats(since: since, bucketSeconds: window.bucketSeconds)
        async let latencies = stats.vendorLatencies(since: since)
        var report = VerificationStats.build(
            rows: try await counted, providers: service.registry.providerIDs, window: window, until: now)
        report.latency = VerificationStats.latencies(try await latencies)
        report.delivery = try await Self.deliveryFigures(stats, since: since)
        return JSONResponse.response(report.json)
    }

    /// The own-code delivery figures since `since`, when the store keeps delivery tallies.
    static func deliveryFigures(_ stats: any VerificationStatsStore, since: Date) async throws(GatewayError)
        -> DeliveryFigures?
    {
        guard let tallies = stats as? any DeliveryStatsStore else { return nil }
        return DeliveryFigures.build(
            tallies: try await tallies.deliveryTallies(since: DeliveryTally.minute(of: since)),
            segments: try await stats.countrySegments(since: since))
    }

    /// `GET /v1/admin/stats/countries?window=1h|24h`: per vendor and country, starts, approvals, conversion
    /// and cost per approval.
    @Sendable func countries(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        guard let stats else { throw GatewayError(.notFound, "This store keeps no statistics.") }
        let window = try Self.window(request)
        let now = service.clock.now
        let since = now.addingTimeInterval(-Double(window.seconds))
        let rows = try await stats.countryStats(since: since)
        let segments = try await stats.countrySegments(since: since)
        var report = CountryStats.build(
            rows: rows, segments: segments, signals: try await stats.countrySignals(since: since),
            providers: service.registry.providerIDs, prices: prices, window: window, until: now)
        if let tallies = stats as? any DeliveryStatsStore {
            report.delivery = DeliveryFigures.build(
                tallies: try await tallies.deliveryTallies(since: DeliveryTally.minute(of: since)), segments: segments)
        }
        return JSONResponse.response(report.json)
    }

    /// `GET /v1/admin/verifications?to=+44…`: the newest verifications (at most `limit`, 20 by default) to a
    /// number, each with its number masked as in logs.
    @Sendable func verificationsByNumber(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        guard let stats else { throw GatewayError(.notFound, "This store keeps no statistics.") }
        let query = request.uri.queryParameters
        guard var text = query.get("to").map({ String($0) }), !text.isEmpty else {
            throw GatewayError.invalidRequest("`to` must be a phone number in E.164, such as +447400123456.")
        }
        // A `+` left unencoded in a query string reads as a space.
        if text.hasPrefix(" ") { text = "+" + text.drop { $0 == " " } }
        guard text.count <= 32 else { throw GatewayError.invalidRequest("`to` must be at most 32 characters.") }
        let number = try PhoneNumber(parsing: text)
        var limit = 20
        if let raw = query.get("limit") {
            guard let value = Int(String(raw)), (1...100).contains(value) else {
                throw GatewayError.invalidRequest("`limit` must be a whole number from 1 to 100.")
            }
            limit = value
        }
        let records = try await stats.verifications(
            destination: number.e164, digest: anonymizer?.digest(of: number.e164), limit: limit)
        let list = records.map { record -> JSONValue in
            [
                "id": .string(record.id), "to": .string(PhoneNumber.mask(record.destination.value)),
                "country": (record.destination.phoneNumber?.policyRegion).map(JSONValue.string) ?? .null,
                "channel": .string(record.channel.rawValue), "provider": .string(record.providerID),
                "status": .string(record.status.rawValue),
                "status_reason": record.statusReason.map(JSONValue.string) ?? .null,
                "route": record.route.map(JSONValue.string) ?? .null,
                "experiment": record.experiment.map(JSONValue.string) ?? .null,
                "experiment_arm": record.experimentArm.map(JSONValue.string) ?? .null,
                "created_at": .string(VerificationsController.timestamp(record.createdAt)),
                "updated_at": .string(VerificationsController.timestamp(record.updatedAt)),
            ]
        }
        return JSONResponse.response(["to": .string(number.masked), "verifications": .array(list)])
    }

    /// `GET /v1/admin/refusals?window=1h|24h`: refusals for rate limits, geo permissions and the SMS-pumping
    /// guard, per kind, with a series per 5 minutes (1h) or hour (24h).
    @Sendable func refusals(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        guard let stats else { throw GatewayError(.notFound, "This store keeps no statistics.") }
        let window = try Self.window(request)
        let now = service.clock.now
        let rows = try await stats.refusalCounts(since: RefusalStats.firstBucket(window: window, until: now))
        return JSONResponse.response(RefusalStats.build(rows: rows, window: window, until: now).json)
    }

    /// The `window` query parameter of the stats routes: `1h` (the default) or `24h`.
    static func window(_ request: Request) throws(GatewayError) -> VerificationStats.Window {
        switch request.uri.queryParameters.get("window").map({ String($0) }) ?? "1h" {
        case "1h": return .hour
        case "24h": return .day
        default: throw GatewayError.invalidRequest("`window` must be 1h or 24h.")
        }
    }

    @Sendable func providers(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let statuses = service.breakers.statuses
        let list = service.registry.providerIDs.compactMap { id -> JSONValue? in
            guard let provider = service.registry.provider(id) else { return nil }
            let capabilities = provider.capabilities
            let operations = provider.operations
            return .object([
                "id": .string(id),
                "channels": .array(capabilities.channels.map(\.rawValue).sorted().map(JSONValue.string)),
                "requires_app_verification": .bool(capabilities.requiresAppVerification),
                "app_verification_types": .array(
                    capabilities.appVerificationKinds.map(\.rawValue).sorted().map(JSONValue.string)),
                "multi_factor_types": .array(
                    capabilities.multiFactorKinds.map(\.rawValue).sorted().map(JSONValue.string)),
                "issues_tokens": .bool(capabilities.issuesTokens),
                "supports_resend": .bool(operations.contains(.resend)),
                "supports_cancel": .bool(operations.contains(.cancel)),
                "supports_status": .bool(operations.contains(.status)),
                "accepts_callbacks": .bool(operations.contains(.callbacks)),
                "operations": .array(operations.names.map(JSONValue.string)),
                "excluded_countries": .array(capabilities.excludedRegions.sorted().map(JSONValue.string)),
                "actions": .array(provider.offeredActions.map { .string($0.name) }),
                "breakers": .array(
                    statuses.filter { $0.providerID == id }.map { status in
                        [
                            "country": .string(status.country), "state": .string(status.state.rawValue),
                            "consecutive_failures": .number(Double(status.consecutiveFailures)),
                            "recent_requests": .number(Double(status.recentRequests)),
                            "recent_failures": .number(Double(status.recentFailures)),
                            "open_until": status.openUntil.map { .string(VerificationsController.timestamp($0)) }
                                ?? .null,
                            "cooldown_seconds": .number(status.cooldown),
                        ]
                    }),
            ])
        }
        return JSONResponse.response(["providers": .array(list)])
    }

    @Sendable func experiment(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let name = try context.parameters.require("name")
        let query = request.uri.queryParameters
        let from = try Self.date(query.get("from").map { String($0) }, name: "from")
        let to = try Self.date(query.get("to").map { String($0) }, name: "to")
        let country = try PhoneNumbersController.region(query.get("country"), name: "country")
        var effect = 0.05
        if let raw = query.get("mde") {
            guard let value = Double(String(raw)), value > 0, value < 1 else {
                throw GatewayError.invalidRequest("`mde` must be an absolute difference in conversion, such as 0.05.")
            }
            effect = value
        }
        let report = try await service.experimentReport(
            name, from: from, to: to, country: country, prices: prices, minimumEffect: effect)
        return JSONResponse.response(report.json)
    }

    static func date(_ text: String?, name: String) throws(GatewayError) -> Date? {
        guard let text else { return nil }
        guard let date = try? Date(text, strategy: .iso8601) else {
            throw GatewayError.invalidRequest("`\(name)` must be an RFC 3339 time such as 2026-11-23T00:00:00Z.")
        }
        return date
    }
}
