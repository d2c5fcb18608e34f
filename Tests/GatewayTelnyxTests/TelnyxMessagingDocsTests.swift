import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

@testable import GatewayTelnyx

@Suite("docs/errors.md, Telnyx Messaging")
struct TelnyxMessagingDocsTests {
    @Test("every row of the Telnyx Messaging table has its line with the same mapping and a note")
    func rows() throws {
        let lines = try ErrorsDoc.section("## Telnyx")
        for row in TelnyxMessagingErrorMapping.table.rows {
            let status = row.httpStatus.map(String.init) ?? "–"
            ErrorsDoc.expectNotedLine(
                "| `\(row.code ?? "")` | \(status) | \(row.name) | `\(row.mapsTo.rawValue)` |", in: lines)
        }
    }

    @Test("every code of docs/vendors/telnyx-messaging.md §6 has one row, request codes with a status")
    func everyDocumentedCode() throws {
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let notes = try String(
            contentsOf: root.appendingPathComponent("docs/vendors/telnyx-messaging.md"), encoding: .utf8)
        let section = try #require(notes.components(separatedBy: "## 6.").last?.components(separatedBy: "## 7.").first)
        var request: Set<String> = []
        var delivery: Set<String> = []
        for line in section.split(separator: "\n") where line.hasPrefix("| ") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 3 else { continue }
            for word in cells[0].split(separator: "/") {
                let code = word.trimmingCharacters(in: .whitespaces)
                guard code.count == 5, code.allSatisfy(\.isNumber) else { continue }
                if cells[2] == "request" { request.insert(code) } else { delivery.insert(code) }
            }
        }
        #expect(request.count + delivery.count > 35)
        #expect(request == Set(TelnyxMessagingErrorMapping.requestRows.compactMap(\.code)))
        #expect(delivery == Set(TelnyxMessagingErrorMapping.deliveryRows.compactMap(\.code)))
        #expect(TelnyxMessagingErrorMapping.requestRows.allSatisfy { $0.httpStatus != nil })
        #expect(TelnyxMessagingErrorMapping.deliveryRows.allSatisfy { $0.httpStatus == nil })
        let codes = TelnyxMessagingErrorMapping.table.rows.compactMap(\.code)
        #expect(Set(codes).count == codes.count, "a code has two rows")
    }
}
