import Foundation
import GatewayCore
import Testing

@testable import GatewayTwilio

@Suite("docs/errors.md")
struct TwilioErrorDocsTests {
    /// The lines of `docs/errors.md`, found from this file's place in the repository.
    static func lines() throws -> [Substring] {
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/errors.md"), encoding: .utf8)
        return text.split(separator: "\n")
    }

    @Test("every taxonomy code has a line with its HTTP status, class and retryability")
    func taxonomy() throws {
        let lines = try Self.lines()
        for code in GatewayError.Code.allCases {
            let prefix =
                "| `\(code.rawValue)` | \(code.httpStatus) | `\(code.errorClass.rawValue)` | "
                + (code.isRetryable ? "yes" : "no") + " |"
            #expect(lines.contains { $0.hasPrefix(prefix) }, "no taxonomy line starting \(prefix)")
        }
    }

    @Test("every Twilio row has a line in the Twilio table with the same mapping and source")
    func twilioTable() throws {
        let lines = try Self.lines()
        for row in TwilioErrorMapping.table.rows {
            let prefix = "| \(row.code ?? "-") | \(row.name) | `\(row.mapsTo.rawValue)` | \(row.source) |"
            #expect(lines.contains { $0.hasPrefix(prefix) }, "no Twilio line starting \(prefix)")
        }
    }

    @Test("the other vendors have their marked sections")
    func vendorSections() throws {
        let lines = try Self.lines()
        for vendor in ["Twilio (Verify v2 and the Verify Push SDK)", "Firebase", "Vonage", "Sinch", "IDaaS"] {
            #expect(lines.contains("## \(vendor)"))
        }
    }
}
