import GatewayCore
import GatewayTestSupport
import Testing

@testable import GatewaySinch

@Suite("docs/errors.md, Sinch section")
struct SinchErrorDocsTests {
    @Test("every errorCode row has a line with the same mapping and source, and a note")
    func errorCodes() throws {
        let lines = try ErrorsDoc.lines()
        for row in SinchErrorMapping.table.rows(in: "") {
            let prefix =
                "| \(row.code ?? "-") | \(row.httpStatus.map(String.init) ?? "-") | \(row.name) | `\(row.mapsTo.rawValue)` | \(row.source) | "
            ErrorsDoc.expectNotedLine(prefix, in: lines)
        }
    }

    @Test("every reason and every iOS constant has its line, with a note")
    func reasonsAndConstants() throws {
        let lines = try ErrorsDoc.lines()
        for row in SinchErrorMapping.table.rows(in: "reason") {
            let status = try #require(SinchErrorMapping.status(of: row))
            let prefix = "| \(row.name) | `\(status.rawValue)` | `\(row.mapsTo.rawValue)` | "
            ErrorsDoc.expectNotedLine(prefix, in: lines)
        }
        for row in SinchErrorMapping.table.rows(in: "ios") {
            let values = row.related["values"] ?? "-"
            let prefix = "| `\(row.name)` | \(values) | `\(row.mapsTo.rawValue)` | "
            ErrorsDoc.expectNotedLine(prefix, in: lines)
        }
    }
}
