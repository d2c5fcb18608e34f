import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

@testable import GatewayIDaaS

@Suite("docs/errors.md, IDaaS section")
struct IDaaSErrorDocsTests {
    static func lines() throws -> [Substring] { try ErrorsDoc.section("## IDaaS") }

    static func yesNo(_ value: Bool) -> String { value ? "yes" : "no" }

    @Test(
        "every code of the SDK's table has its line: both spellings, IDaaS status, gateway code, HTTP, class, retry",
        arguments: IDaaSErrorMapping.sdkCodes)
    func sdkCode(_ entry: IDaaSErrorMapping.SDKCode) throws {
        let code = entry.mapsTo
        let prefix =
            "| `\(entry.ciam)` | `\(entry.eiam)` | \(entry.httpStatus) | `\(code.rawValue)` | \(code.httpStatus) | "
            + "`\(code.errorClass.rawValue)` | \(Self.yesNo(code.isRetryable)) | \(entry.meaning) |"
        let lines = try Self.lines()
        // The note, why this code, lives in the line only.
        #expect(lines.contains { $0.hasPrefix(prefix) && $0.dropFirst(prefix.count).count > 4 }, "no line \(prefix) …")
        #expect(lines.filter { $0.hasPrefix("| `\(entry.ciam)` |") }.count == 1, "\(entry.ciam) is documented twice")
    }

    @Test("every other row (exact or group) has a line naming it with its gateway code")
    func otherRows() throws {
        let lines = try Self.lines()
        let sdk = Set(IDaaSErrorMapping.sdkCodes.flatMap { [$0.ciam, $0.eiam] })
        for row in IDaaSErrorMapping.rows {
            let value = try #require(row.code)
            guard !sdk.contains(value) else { continue }
            let named = lines.filter { line in
                guard line.hasPrefix("|") else { return false }
                let first = line.split(separator: "|", omittingEmptySubsequences: true).first ?? ""
                return first.contains("`\(value)`")
            }
            #expect(named.count == 1, "\(value): \(named.count) lines")
            #expect(named.allSatisfy { $0.contains("`\(row.mapsTo.rawValue)`") }, "\(value)")
        }
    }

    @Test("every SDK callback code has its line with the same gateway code")
    func callbackCodes() throws {
        let lines = try Self.lines()
        for row in IDaaSErrorMapping.callbackCodes {
            let outcome = row.mapsTo.map { "`\($0.rawValue)`" } ?? "—"
            let line = "| `\(row.code)` | \(row.callbacks) | \(row.meaning) | \(outcome) |"
            #expect(lines.contains { $0 == line }, "no line \(line)")
        }
    }
}
