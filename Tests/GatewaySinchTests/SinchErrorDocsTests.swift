import Foundation
import GatewayCore
import Testing

@testable import GatewaySinch

@Suite("docs/errors.md, Sinch section")
struct SinchErrorDocsTests {
    static func lines() throws -> [Substring] {
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/errors.md"), encoding: .utf8)
        return text.split(separator: "\n")
    }

    @Test("every errorCode row has a line with the same mapping and source")
    func errorCodes() throws {
        let lines = try Self.lines()
        for row in SinchErrorMapping.table.rows(in: "") {
            let prefix =
                "| \(row.code ?? "-") | \(row.httpStatus.map(String.init) ?? "-") | \(row.name) | `\(row.mapsTo.rawValue)` | \(row.source) |"
            #expect(lines.contains { $0.hasPrefix(prefix) }, "no Sinch line starting \(prefix)")
        }
    }

    @Test("every reason and every iOS constant has its line")
    func reasonsAndConstants() throws {
        let lines = try Self.lines()
        for row in SinchErrorMapping.table.rows(in: "reason") {
            let status = try #require(SinchErrorMapping.status(of: row))
            let prefix = "| \(row.name) | `\(status.rawValue)` | `\(row.mapsTo.rawValue)` |"
            #expect(lines.contains { $0.hasPrefix(prefix) }, "no line starting \(prefix)")
        }
        for row in SinchErrorMapping.table.rows(in: "ios") {
            let values = row.related["values"] ?? "-"
            let prefix = "| `\(row.name)` | \(values) | `\(row.mapsTo.rawValue)` |"
            #expect(lines.contains { $0.hasPrefix(prefix) }, "no line starting \(prefix)")
        }
    }
}
