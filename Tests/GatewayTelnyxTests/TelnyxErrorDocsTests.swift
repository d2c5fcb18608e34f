import Foundation
import GatewayCore
import Testing

@testable import GatewayTelnyx

@Suite("docs/errors.md, Telnyx section")
struct TelnyxErrorDocsTests {
    @Test("every row of the Telnyx table has its line with the same mapping")
    func rows() throws {
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let lines = try String(contentsOf: root.appendingPathComponent("docs/errors.md"), encoding: .utf8)
            .split(separator: "\n")
        for row in TelnyxErrorMapping.table.rows {
            let prefix = "| `\(row.code ?? "")` | \(row.httpStatus ?? 0) | \(row.name) | `\(row.mapsTo.rawValue)` |"
            #expect(lines.contains { $0.hasPrefix(prefix) }, "no line starting \(prefix)")
        }
    }

    @Test("every code of docs/vendors/telnyx.md §8.2 has a row")
    func everyDocumentedCode() throws {
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let notes = try String(contentsOf: root.appendingPathComponent("docs/vendors/telnyx.md"), encoding: .utf8)
        let section = try #require(
            notes.components(separatedBy: "### 8.2").last?.components(separatedBy: "## 9.").first)
        var documented: Set<String> = []
        for line in section.split(separator: "\n") where line.hasPrefix("| ") {
            let cell = line.dropFirst(2).prefix { $0 != "|" }
            for word in cell.split(separator: "/") {
                let code = word.trimmingCharacters(in: .whitespaces)
                if code.count == 5, code.allSatisfy(\.isNumber) { documented.insert(code) }
            }
        }
        #expect(documented.count > 30)
        #expect(documented == Set(TelnyxErrorMapping.table.rows.compactMap(\.code)))
    }
}
