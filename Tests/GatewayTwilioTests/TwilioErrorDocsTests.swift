import GatewayCore
import GatewayTestSupport
import Testing

@testable import GatewayTwilio

@Suite("docs/errors.md")
struct TwilioErrorDocsTests {
    @Test("every taxonomy code has a line with its HTTP status, class and retryability")
    func taxonomy() throws {
        let lines = try ErrorsDoc.lines()
        for code in GatewayError.Code.allCases {
            let prefix =
                "| `\(code.rawValue)` | \(code.httpStatus) | `\(code.errorClass.rawValue)` | "
                + (code.isRetryable ? "yes" : "no") + " |"
            #expect(lines.contains { $0.hasPrefix(prefix) }, "no taxonomy line starting \(prefix)")
        }
    }

    @Test("every Twilio row has a line in the Twilio table with the same mapping and source, and a note")
    func twilioTable() throws {
        let lines = try ErrorsDoc.lines()
        for row in TwilioErrorMapping.table.rows {
            let prefix = "| \(row.code ?? "-") | \(row.name) | `\(row.mapsTo.rawValue)` | \(row.source) | "
            ErrorsDoc.expectNotedLine(prefix, in: lines)
        }
    }

    @Test("the other vendors have their marked sections")
    func vendorSections() throws {
        let lines = try ErrorsDoc.lines()
        for vendor in ["Twilio (Verify v2 and the Verify Push SDK)", "Firebase", "Vonage", "Sinch", "IDaaS"] {
            #expect(lines.contains("## \(vendor)"))
        }
    }
}
