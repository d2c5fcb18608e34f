import Foundation
import GatewayCore
import Hummingbird

/// `POST /v1/routing/dry-run`: which provider would serve a number and why, sending nothing.
struct RoutingController: Sendable {
    let service: VerificationService
    let prices: PriceTable

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.post("routing/dry-run", use: dryRun)
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
        return JSONResponse.response(try service.dryRun(start, apiKeyName: keyName).json(prices: prices))
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
        ]
        if let error {
            fields["error"] = .object(["code": .string(error.code.rawValue), "message": .string(error.message)])
        }
        return .object(fields)
    }
}
