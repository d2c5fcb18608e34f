import Foundation
import GatewayCore

extension VerificationService {
    /// The report of a configured experiment, from the stored verifications.
    public func experimentReport(
        _ name: String, from: Date?, to: Date?, country: String?, prices: PriceTable, minimumEffect: Double
    ) async throws(GatewayError) -> ExperimentReport {
        guard let experiment = routing.experiments[name] else {
            throw GatewayError(.notFound, "No experiment named `\(name)` is configured.")
        }
        let records = try await store.records(experiment: name, from: from, to: to)
        return ExperimentReport.build(
            experiment: experiment, records: records, prices: prices, from: from, to: to, country: country,
            minimumEffect: minimumEffect)
    }
}

extension ExperimentReport {
    var json: JSONValue {
        func number(_ value: Double?) -> JSONValue { value.map(JSONValue.number) ?? .null }
        let control = arms.first(where: \.isControl)
        return .object([
            "experiment": .string(experiment),
            "from": from.map { .string(VerificationsController.timestamp($0)) } ?? .null,
            "to": to.map { .string(VerificationsController.timestamp($0)) } ?? .null,
            "country": country.map(JSONValue.string) ?? .null,
            "minimum_effect": .number(minimumEffect),
            "arms": .array(
                arms.map { arm in
                    [
                        "name": .string(arm.name), "provider": .string(arm.providerID), "control": .bool(arm.isControl),
                        "weight": .number(Double(arm.weight)),
                        "starts": .number(Double(arm.starts)), "approvals": .number(Double(arm.approvals)),
                        "conversion": number(arm.conversion),
                        "conversion_95": arm.conversionInterval.map { .array([.number($0.low), .number($0.high)]) }
                            ?? .null,
                        "time_to_approve_p50_seconds": number(arm.timeToApproveP50),
                        "time_to_approve_p90_seconds": number(arm.timeToApproveP90),
                        "failovers": .number(Double(arm.failovers)),
                        "errors": .object(arm.errors.mapValues { .number(Double($0)) }),
                        "cost": number(arm.cost), "cost_per_approval": number(arm.costPerApproval),
                        "z": number(arm.zScore), "p_value": number(arm.pValue),
                        "sample_size_per_arm": arm.sampleSizeNeeded.map { .number(Double($0)) } ?? .null,
                        "sample_still_needed": arm.sampleSizeNeeded.map { needed in
                            .number(Double(max(0, needed - min(arm.starts, control?.starts ?? 0))))
                        } ?? .null,
                    ]
                }),
        ])
    }

    /// The report as a terminal table (`gateway experiments report`).
    var table: String {
        func percent(_ value: Double?) -> String { value.map { String(format: "%.1f%%", $0 * 100) } ?? "-" }
        func seconds(_ value: Double?) -> String { value.map { String(format: "%.1fs", $0) } ?? "-" }
        let header = [
            "arm", "provider", "starts", "approved", "conversion", "95% interval", "p50", "p90",
            "failovers", "cost", "p-value", "n needed",
        ]
        var rows = [header]
        for arm in arms {
            rows.append([
                arm.name + (arm.isControl ? " (control)" : ""), arm.providerID, String(arm.starts),
                String(arm.approvals),
                percent(arm.conversion),
                arm.conversionInterval.map { "\(percent($0.low))–\(percent($0.high))" } ?? "-",
                seconds(arm.timeToApproveP50), seconds(arm.timeToApproveP90), String(arm.failovers),
                arm.cost.map { String(format: "%.2f", $0) } ?? "-",
                arm.pValue.map { $0 < 0.0001 ? String(format: "%.2e", $0) : String(format: "%.4f", $0) } ?? "-",
                arm.sampleSizeNeeded.map(String.init) ?? "-",
            ])
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        var lines = rows.map { row in
            row.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }
                .joined(separator: "  ")
        }
        lines.insert(String(repeating: "-", count: lines[0].count), at: 1)
        var text =
            "experiment \(experiment)" + (country.map { ", country \($0)" } ?? "") + "\n"
            + lines.joined(separator: "\n")
        for arm in arms where !arm.errors.isEmpty {
            text +=
                "\n\(arm.name) errors: "
                + arm.errors.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                .joined(separator: " ")
        }
        text +=
            "\np-value: two-sided two-proportion z-test against the control; n needed: users per arm to detect a "
            + String(format: "%.1f", minimumEffect * 100) + " point difference (alpha 0.05, power 0.8)."
        return text
    }
}
