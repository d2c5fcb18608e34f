import Foundation
import GatewayCore
import Testing

@testable import GatewayFirebase

@Suite("docs/errors.md, Firebase section")
struct FirebaseErrorDocsTests {
    /// The lines of the Firebase section (from `## Firebase` to the next `## `).
    static func lines() throws -> [Substring] {
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let all = try String(contentsOf: root.appendingPathComponent("docs/errors.md"), encoding: .utf8)
            .split(separator: "\n")
        guard let start = all.firstIndex(of: "## Firebase") else { return [] }
        let end = all[(start + 1)...].firstIndex { $0.hasPrefix("## ") } ?? all.endIndex
        return Array(all[start..<end])
    }

    @Test("every row has its one line: the string or reason, gateway code, HTTP status, iOS codes and source")
    func everyRow() throws {
        let lines = try Self.lines()
        for row in FirebaseErrorMapping.rows {
            let name = row.field == .reason ? "reason `\(row.value)`" : "`\(row.value)`"
            var ios = "\(row.ios.rawValue) `\(row.ios.name)`"
            if let client = row.iosClientSide { ios += " (client-side: \(client.rawValue) `\(client.name)`)" }
            let prefix = "| \(name) | `\(row.mapsTo.rawValue)` | \(row.mapsTo.httpStatus) | \(ios) | \(row.source) |"
            #expect(lines.filter { $0.hasPrefix(prefix) }.count == 1, "no single line starting \(prefix)")
        }
    }
}
