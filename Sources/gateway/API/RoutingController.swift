import Foundation
import GatewayCore
import Hummingbird

/// `POST /v1/routing/dry-run`: which provider would serve a number and why, sending nothing.
/// `GET /v1/routing/adaptive`: what the adaptive routes have learned, per route and context (an `admin` or
/// `read` key).
struct RoutingController: Sendable {
    let service: VerificationService
    let prices: PriceTable

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.post("routing/dry-run", use: dryRun)
        group.get("routing/adaptive", use: adaptive)
    }

    @Sendable func adaptive(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        guard let key = context.apiKey, key.scopes.contains(.admin) || key.scopes.contains(.read) else {
            throw GatewayError(.forbidden, "Reading what adaptive routes learned needs an `admin` or `read` key.")
        }
        let query = request.uri.queryParameters
        let route = query.get("route").map { String($0) }
        let wanted = query.get("context").map { String($0) }
        for (name, value) in [("route", route), ("context", wanted)] {
            if let value, value.isEmpty || value.count > 64 {
                throw GatewayError.invalidRequest("`\(name)` must be 1 to 64 characters.")
            }
        }
        guard let router = service.adaptive else { return JSONResponse.response(["routes": .array([])]) }
        if let route, router.policies[route] == nil {
            throw GatewayError(.notFound, "No adaptive route is named `\(route)`.")
        }
        let routes = try await router.report(route: route, context: wanted)
        var list: [JSONValue] = []
        for report in routes {
            // The starts each provider got per bucket, from the same evidence rows the report is made of (in the
            // store, so every instance draws the same history).
            let cells = try await service.store.adaptiveEvidence(
                route: report.route, context: wanted, since: Self.horizon(report.policy, now: service.clock.now))
            list.append(report.json(history: cells))
        }
        return JSONResponse.response(["routes": .array(list)])
    }

    @Sendable func dryRun(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        var request = request
        let reader = try JSONObjectReader(data: try await VerificationsController.body(of: &request, context: context))
        try reader.rejectUnknown(
            allowing: ["to", "channel", "region", "provider", "app_verification", "multi_factor", "api_key"])
        let channelName = try reader.string("channel", maxLength: 32) ?? "sms"
        guard let channel = Channel(rawValue: channelName) else {
            throw GatewayError(
                .unsupportedChannel,
                "`channel` must be one of: \(Channel.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        let region = try PhoneNumbersController.region(try reader.string("region", maxLength: 8))
        let destination = try Destination.parse(
            try reader.string("to", required: true, maxLength: 254) ?? "", for: channel, region: region)
        var start = StartVerification(destination: destination, channel: channel)
        start.forcedProvider = try reader.string("provider", maxLength: 40)
        if let proof = try reader.object("app_verification") {
            let kind = try VerificationsController.proofKind(
                try proof.string("type", required: true, maxLength: 32) ?? "")
            start.appVerification = AppVerificationProof(kind: kind, token: "dry-run", secret: "dry-run")
        }
        if let step = try reader.object("multi_factor") {
            // Only the type is read: which providers run the step.
            let type = try step.string("type", required: true, maxLength: 32) ?? ""
            switch MultiFactor.Kind(rawValue: type) {
            case .signIn: start.multiFactor = .signIn(pendingCredential: "dry-run", enrollmentID: "dry-run")
            case .enroll: start.multiFactor = .enroll(idToken: "dry-run", displayName: nil)
            case nil:
                let known = MultiFactor.Kind.allCases.map(\.rawValue).joined(separator: ", ")
                throw GatewayError.invalidRequest("`multi_factor.type` must be one of: \(known).")
            }
        }
        // Route as if this API key name had made the request (admins checking a rule); default: the caller's.
        let keyName = try reader.string("api_key", maxLength: 64) ?? context.apiKey?.name
        return JSONResponse.response(try await service.dryRun(start, apiKeyName: keyName).json(prices: prices))
    }
}

extension VerificationService.DryRun {
    func json(prices: PriceTable) -> JSONValue {
        var fields: [String: JSONValue] = [
            "route": .string(route),
            "experiment": experiment.map(JSONValue.string) ?? .null,
            "arm": arm.map(JSONValue.string) ?? .null,
            "country": country.map(JSONValue.string) ?? .null,
            "provider": provider.map(JSONValue.string) ?? .null,
            "test_number": .bool(isTestNumber),
            "failover_on_timeout": .bool(failoverOnTimeout),
            "candidates": .array(
                candidates.map { candidate in
                    [
                        "provider": .string(candidate.providerID),
                        "breaker": .string(candidate.breaker.rawValue),
                        "would_try": .bool(candidate.skipReason == nil),
                        "skip_reason": candidate.skipReason.map(JSONValue.string) ?? .null,
                        "price": prices.price(provider: candidate.providerID, country: country).map(JSONValue.number)
                            ?? .null,
                    ]
                }),
            "skipped": .array(skipped.map { ["provider": .string($0.providerID), "reason": .string($0.reason)] }),
            "adaptive": adaptive.map(JSONValue.string) ?? .null,
        ]
        if let error {
            fields["error"] = .object(["code": .string(error.code.rawValue), "message": .string(error.message)])
        }
        return .object(fields)
    }
}

extension RoutingController {
    /// The first bucket the report reads: ``AdaptivePolicy/horizonWindows`` windows back, on a bucket boundary.
    static func horizon(_ policy: AdaptivePolicy, now: Date) -> Int {
        let width = policy.bucketSeconds
        let earliest = Int((now.timeIntervalSince1970 - AdaptivePolicy.horizonWindows * policy.window).rounded(.down))
        return earliest - ((earliest % width) + width) % width
    }
}

extension AdaptiveRouteReport {
    /// `history`: the evidence cells of the route, shown per context as each bucket's starts by provider.
    func json(history: [AdaptiveCell]) -> JSONValue {
        var byContext: [String: [Int: [String: Int]]] = [:]
        for cell in history {
            byContext[cell.context, default: [:]][cell.bucketStart, default: [:]][cell.providerID, default: 0] +=
                cell.starts
        }
        return [
            "route": .string(route),
            "providers": .array(policy.providers.map(JSONValue.string)),
            "objective": .string(policy.objective.rawValue),
            "per": .array(
                AdaptivePolicy.Dimension.allCases.filter(policy.dimensions.contains).map { .string($0.rawValue) }),
            "min_share": .number(policy.minShare),
            "window_seconds": .number(policy.window),
            "bucket_seconds": .number(Double(policy.bucketSeconds)),
            "contexts": .array(
                contexts.map { context -> JSONValue in
                    let buckets = (byContext[context.context] ?? [:]).sorted { $0.key < $1.key }
                    return [
                        "context": .string(context.context),
                        "country": context.country.map(JSONValue.string) ?? .null,
                        "providers": .array(context.providers.map(\.json)),
                        "history": .array(
                            buckets.map { start, starts -> JSONValue in
                                [
                                    "bucket_start": .string(
                                        VerificationsController.timestamp(
                                            Date(timeIntervalSince1970: Double(start)))),
                                    "starts": .object(starts.mapValues { .number(Double($0)) }),
                                ]
                            }),
                    ]
                }),
        ]
    }
}

extension AdaptiveProviderReport {
    var json: JSONValue {
        [
            "provider": .string(providerID),
            "starts": .number(Double(starts)),
            "approvals": .number(Double(approvals)),
            "failures": .number(Double(failures)),
            "pending": .number(Double(pending)),
            "posterior_mean": .number(posteriorMean),
            "interval_95": .array([.number(interval95.low), .number(interval95.high)]),
            "share": .number(share),
            "price": price.map(JSONValue.number) ?? .null,
            "cost_per_approval": costPerApproval.map(JSONValue.number) ?? .null,
        ]
    }
}
