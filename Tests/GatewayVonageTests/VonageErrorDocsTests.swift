import GatewayCore
import GatewayTestSupport
import Testing

@testable import GatewayVonage

@Suite("docs/errors.md, Vonage section")
struct VonageErrorDocsTests {
    @Test("every v2, v1, SMS API, receipt and VerifyError row has its line with the same mapping, and a note")
    func tables() throws {
        let lines = try ErrorsDoc.lines()
        for row in VonageErrorMapping.v2Rows {
            let prefix =
                "| \(row.httpStatus ?? 0) | `\(row.code ?? "")` | \(row.operation ?? "any") | \(row.name) | `\(row.mapsTo.rawValue)` | "
            ErrorsDoc.expectNotedLine(prefix, in: lines)
        }
        for row in VonageErrorMapping.v1Rows {
            let prefix = "| \(row.code ?? "") | \(row.operation ?? "any") | \(row.name) | `\(row.mapsTo.rawValue)` | "
            ErrorsDoc.expectNotedLine(prefix, in: lines)
        }
        for row in VonageErrorMapping.smsRows + VonageErrorMapping.dlrRows {
            let prefix = "| \(row.vocabulary) \(row.code ?? "") | \(row.name) | `\(row.mapsTo.rawValue)` | "
            ErrorsDoc.expectNotedLine(prefix, in: lines)
        }
        for row in VonageErrorMapping.sdkRows {
            let prefix = "| \(row.code ?? "") | `\(row.name)` | `\(row.mapsTo.rawValue)` | "
            ErrorsDoc.expectNotedLine(prefix, in: lines)
        }
    }
}
