import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

@testable import GatewaySinch

@Suite("docs/errors.md and docs/vendors/sinch-sms.md, Sinch SMS")
struct SinchSMSDocsTests {
    @Test("every row of the Sinch SMS table has its line with the same mapping and a note")
    func rows() throws {
        let lines = try ErrorsDoc.section("## Sinch")
        for row in SinchSMSErrorMapping.table.rows {
            let code = row.code.map { "`\($0)`" } ?? "–"
            let status = row.httpStatus.map(String.init) ?? "–"
            ErrorsDoc.expectNotedLine("| \(code) | \(status) | \(row.name) | `\(row.mapsTo.rawValue)` |", in: lines)
        }
    }

    @Test("every request error of the note's §5 and report code of its §4 has one row")
    func everyDocumentedCode() throws {
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let notes = try String(contentsOf: root.appendingPathComponent("docs/vendors/sinch-sms.md"), encoding: .utf8)
        func section(_ from: String, _ to: String) throws -> [[String]] {
            let text = try #require(notes.components(separatedBy: from).last?.components(separatedBy: to).first)
            return text.split(separator: "\n").filter { $0.hasPrefix("| ") }.map {
                $0.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            }
        }
        // §5: HTTP status and code; a `–` code is a row for the status alone, 5xx the fallback's.
        var request: Set<String> = []
        for cells in try section("## 5.", "## 6.") where cells.count >= 3 {
            for status in cells[0].split(separator: "/").compactMap({ Int($0.trimmingCharacters(in: .whitespaces)) })
            where status < 500 {
                for code in cells[1].split(separator: "/").map({ $0.trimmingCharacters(in: .whitespaces) }) {
                    request.insert("\(status) \(code.replacingOccurrences(of: "`", with: ""))")
                }
            }
        }
        let rows = Set(
            SinchSMSErrorMapping.requestRows.map { "\($0.httpStatus ?? 0) \($0.code ?? "–")" })
        #expect(request.count > 10)
        #expect(request == rows)
        // §4's report codes, 400 and 401 being statuses.
        var delivery: Set<String> = []
        for cells in try section("### Report codes", "## 5.") where !cells.isEmpty {
            for code in cells[0].split(separator: "/").map({ $0.trimmingCharacters(in: .whitespaces) })
            where Int(code) != nil && code != "400" && code != "401" {
                delivery.insert(code)
            }
        }
        #expect(delivery == Set(SinchSMSErrorMapping.deliveryRows.compactMap(\.code)))
        let codes = SinchSMSErrorMapping.table.rows.map { "\($0.vocabulary) \($0.httpStatus ?? 0) \($0.code ?? "")" }
        #expect(Set(codes).count == codes.count, "a code has two rows")
    }
}
