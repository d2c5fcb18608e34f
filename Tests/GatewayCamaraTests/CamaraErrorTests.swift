import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

@testable import GatewayCamara

@Suite("CAMARA: every error row")
struct CamaraErrorTests {
    static let apiAndTokenRows = CamaraErrorMapping.table.rows.filter { $0.vocabulary != "authorize" }
    static let authorizeRows = CamaraErrorMapping.table.rows(in: "authorize")

    @Test("An API or token-endpoint error answers as its row says", arguments: apiAndTokenRows)
    func answered(_ row: VendorErrorRow) async throws {
        let h = try CamaraHarness()
        var armed = row
        // API errors on the SIM swap call, OAuth errors on the token request before it.
        armed.operation = row.vocabulary == "oauth" ? "token" : "sim_swap_check"
        h.emulator.errors.arm(armed)
        do throws(GatewayError) {
            _ = try await h.provider.simSwapped(try PhoneNumber(parsing: "+447400300001"), withinHours: 72)
            Issue.record("\(row.name): no error")
        } catch {
            #expect(error.code == row.mapsTo, "\(row.name)")
            #expect(error.errorClass == row.errorClass && error.isRetryable == row.isRetryable, "\(row.name)")
            #expect(error.vendor?.code == row.code && error.vendor?.httpStatus == row.httpStatus, "\(row.name)")
            #expect(!error.sendMayHaveHappened)
        }
    }

    @Test("An authorization error in the redirect fails the silent step with its reason", arguments: authorizeRows)
    func redirected(_ row: VendorErrorRow) async throws {
        let h = try CamaraHarness()
        var armed = row
        armed.operation = "authorize"
        h.emulator.errors.arm(armed)
        let reply = try await h.silentVerification("+447400300002").reply
        #expect(reply.updates.map(\.change.status) == [.failed])
        #expect(reply.updates.first?.change.reason == "authorize:" + (row.code ?? ""))
        #expect(CamaraErrorMapping.authorizationError(row.code ?? "", providerID: "camara").code == row.mapsTo)
    }

    @Test("A failure after the redirect (the verify call) fails the step with the vendor's code as the reason")
    func verifyFails() async throws {
        let h = try CamaraHarness()
        h.emulator.errors.arm(
            VendorErrorRow(
                code: "NUMBER_VERIFICATION.USER_NOT_AUTHENTICATED_BY_MOBILE_NETWORK", httpStatus: 403,
                operation: "number_verify", name: "not by network", mapsTo: .denied, source: "test"))
        let reply = try await h.silentVerification("+447400300003").reply
        #expect(
            reply.updates.first?.change.reason == "camara:NUMBER_VERIFICATION.USER_NOT_AUTHENTICATED_BY_MOBILE_NETWORK")
    }

    @Test("Every row has its line in docs/errors.md, with a note")
    func documented() throws {
        let lines = try ErrorsDoc.section("## CAMARA")
        #expect(!lines.isEmpty)
        for row in CamaraErrorMapping.table.rows {
            let status = row.vocabulary == "authorize" ? "302" : String(row.httpStatus ?? 0)
            ErrorsDoc.expectNotedLine("| `\(row.code ?? "")` | \(status) | `\(row.mapsTo.rawValue)` |", in: lines)
        }
    }

    @Test("Every code of the vendor note's error tables has a row")
    func everyDocumentedCode() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let note = try String(contentsOf: root.appendingPathComponent("docs/vendors/camara.md"), encoding: .utf8)
        let codes = Set(CamaraErrorMapping.table.rows(in: "").compactMap(\.code))
        // The API error tables: `| 400 | `INVALID_ARGUMENT` |`-style rows list the codes.
        var documented: Set<String> = []
        for line in note.split(separator: "\n") where line.hasPrefix("| 4") {
            for cell in line.split(separator: "|").dropFirst() {
                for part in cell.split(separator: "`").enumerated() where part.offset % 2 == 1 {
                    let code = String(part.element)
                    if code.uppercased() == code, code.first?.isLetter == true { documented.insert(code) }
                }
            }
        }
        #expect(documented == codes)
    }
}
