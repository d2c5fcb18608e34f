import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

@testable import GatewayFirebase

@Suite("docs/errors.md, Firebase section")
struct FirebaseErrorDocsTests {
    static func lines() throws -> [Substring] { try ErrorsDoc.section("## Firebase") }

    @Test("every row has its one line: the string or reason, gateway code, HTTP status, iOS codes, source and why")
    func everyRow() throws {
        let lines = try Self.lines()
        for row in FirebaseErrorMapping.rows {
            let name = row.field == .reason ? "reason `\(row.value)`" : "`\(row.value)`"
            var ios = "\(row.ios.rawValue) `\(row.ios.name)`"
            if let client = row.iosClientSide { ios += " (client-side: \(client.rawValue) `\(client.name)`)" }
            let prefix = "| \(name) | `\(row.mapsTo.rawValue)` | \(row.mapsTo.httpStatus) | \(ios) | \(row.source) |"
            // The reason, why this code, lives in the line only.
            let matching = lines.filter { $0.hasPrefix(prefix) && $0.dropFirst(prefix.count).count > 4 }
            #expect(matching.count == 1, "no single line starting \(prefix) with a reason")
        }
    }
}
