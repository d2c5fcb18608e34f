import Foundation
import GatewayCore
import Testing

@testable import GatewayVonage

@Suite("docs/errors.md, Vonage section")
struct VonageErrorDocsTests {
    static func lines() throws -> [Substring] {
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent("docs/errors.md"), encoding: .utf8)
            .split(separator: "\n")
    }

    @Test("every v2, v1 and VerifyError row has its line with the same mapping")
    func tables() throws {
        let lines = try Self.lines()
        for row in VonageErrorMapping.v2Rows {
            let prefix =
                "| \(row.httpStatus ?? 0) | `\(row.code ?? "")` | \(row.operation ?? "any") | \(row.name) | `\(row.mapsTo.rawValue)` |"
            #expect(lines.contains { $0.hasPrefix(prefix) }, "no line starting \(prefix)")
        }
        for row in VonageErrorMapping.v1Rows {
            let prefix = "| \(row.code ?? "") | \(row.operation ?? "any") | \(row.name) | `\(row.mapsTo.rawValue)` |"
            #expect(lines.contains { $0.hasPrefix(prefix) }, "no line starting \(prefix)")
        }
        for row in VonageErrorMapping.sdkRows {
            let prefix = "| \(row.code ?? "") | `\(row.name)` | `\(row.mapsTo.rawValue)` |"
            #expect(lines.contains { $0.hasPrefix(prefix) }, "no line starting \(prefix)")
        }
    }
}
