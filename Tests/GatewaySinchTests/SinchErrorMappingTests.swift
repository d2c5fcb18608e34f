import GatewayCore
import Testing

@testable import GatewaySinch

@Suite("Sinch error mapping")
struct SinchErrorMappingTests {
    /// Every errorCode of docs/vendors/sinch.md §4.2, written out again here so a row cannot silently disappear.
    static let documented: [(Int, GatewayError.Code)] = [
        (40001, .invalidRequest), (40002, .invalidRequest), (40003, .invalidRequest), (40004, .providerAuthFailed),
        (40005, .invalidPhoneNumber), (40100, .providerAuthFailed), (40101, .providerAuthFailed),
        (40102, .providerAuthFailed), (40103, .providerAuthFailed), (40104, .providerAuthFailed),
        (40105, .providerAuthFailed), (40106, .providerAuthFailed), (40107, .providerAuthFailed),
        (40108, .providerAuthFailed), (40200, .providerInsufficientFunds), (40300, .destinationBlocked),
        (40301, .providerAuthFailed), (40302, .providerRejected), (40303, .providerRejected), (40400, .notFound),
        (40900, .providerRejected), (42200, .providerRejected), (42201, .providerRejected), (42202, .providerRejected),
        (42900, .providerRateLimited), (42901, .rateLimited), (50000, .providerUnavailable), (50100, .providerError),
        (50101, .providerError), (50300, .providerUnavailable), (50301, .providerRejected),
    ]

    @Test("each documented errorCode maps to its taxonomy code", arguments: documented)
    func documentedCode(_ code: Int, _ expected: GatewayError.Code) throws {
        let row = try #require(SinchErrorMapping.row(for: code))
        #expect(row.mapsTo == expected)
        #expect(row.httpStatus == code / 100)
        let error = SinchErrorMapping.map(
            errorCode: code, httpStatus: code / 100, retryAfter: nil, providerID: "sinch-eu")
        #expect(error.code == expected)
        #expect(
            error.vendor
                == GatewayError.VendorDetail(providerID: "sinch-eu", code: String(code), httpStatus: code / 100))
        #expect(error.message.contains(String(code)))
        #expect(row.source.hasPrefix("["))
    }

    @Test("the table has exactly the documented codes, once each")
    func coverage() {
        let codes = SinchErrorMapping.rows.compactMap { $0.code.flatMap { Int($0) } }
        #expect(Set(codes).count == codes.count)
        #expect(Set(codes) == Set(Self.documented.map(\.0)))
    }

    @Test(
        "an unknown errorCode falls back on the HTTP status",
        arguments: [
            (401, GatewayError.Code.providerAuthFailed), (403, .providerAuthFailed), (404, .notFound),
            (429, .providerRateLimited), (500, .providerUnavailable), (418, .providerRejected), (302, .providerError),
        ])
    func fallback(_ status: Int, _ expected: GatewayError.Code) {
        #expect(
            SinchErrorMapping.map(errorCode: 99999, httpStatus: status, retryAfter: 5, providerID: "s").code == expected
        )
        let missing = SinchErrorMapping.map(errorCode: nil, httpStatus: status, retryAfter: nil, providerID: "s")
        #expect(missing.code == expected && missing.vendor?.code == nil)
    }

    /// Every reason of docs/vendors/sinch.md §3.2 with the verification status it gives.
    static let reasons: [(String, VerificationStatus, GatewayError.Code)] = [
        ("Fraud", .blocked, .destinationBlocked), ("Not enough credit", .failed, .providerInsufficientFunds),
        ("Blocked", .blocked, .destinationBlocked), ("Denied by callback", .denied, .denied),
        ("Invalid callback", .denied, .denied), ("Internal error", .failed, .providerError),
        ("Destination denied", .denied, .denied), ("Network error or number unreachable", .failed, .deliveryFailed),
        ("Failed pending", .failed, .deliveryFailed), ("SMS delivery failure", .failed, .deliveryFailed),
        ("Invalid CLI", .pending, .incorrectCode), ("Invalid code", .pending, .incorrectCode),
        ("Expired", .expired, .expired), ("Hung up without entering valid code", .failed, .deliveryFailed),
    ]

    @Test("each reason has its row", arguments: reasons)
    func reason(_ reason: String, _ status: VerificationStatus, _ code: GatewayError.Code) throws {
        let row = try #require(SinchErrorMapping.reasonRow(reason))
        #expect(SinchErrorMapping.status(of: row) == status && row.mapsTo == code)
        #expect(SinchErrorMapping.reasonRow(reason.uppercased()) == row)
    }

    @Test("the reason table holds the 14 documented reasons and no other")
    func reasonCoverage() {
        #expect(Set(SinchErrorMapping.reasons.compactMap(\.code)) == Set(Self.reasons.map(\.0)))
        #expect(SinchErrorMapping.reasons.count == 14)
    }

    static let statuses: [(String, VerificationStatus)] = [
        ("PENDING", .pending), ("SUCCESSFUL", .approved), ("FAIL", .failed), ("FAILED", .failed),
        ("DENIED", .denied), ("ABORTED", .canceled), ("ERROR", .failed),
    ]

    @Test("every status/reason pair maps by the rule: PENDING, SUCCESSFUL and ABORTED alone, else the reason")
    func everyPair() {
        for (status, byStatus) in Self.statuses {
            #expect(SinchErrorMapping.outcome(status: status, reason: nil) == byStatus, "\(status) without a reason")
            #expect(SinchErrorMapping.outcome(status: status, reason: "an undocumented reason") == byStatus)
            for (reason, byReason, _) in Self.reasons {
                let expected = [.pending, .approved, .canceled].contains(byStatus) ? byStatus : byReason
                #expect(
                    SinchErrorMapping.outcome(status: status, reason: reason) == expected, "\(status)/\(reason)")
            }
        }
        #expect(SinchErrorMapping.outcome(status: "UNKNOWN", reason: "Fraud") == nil)
    }

    @Test("the pairs the issue names: FAIL/Invalid code is a wrong code, DENIED/Fraud is blocked")
    func namedPairs() {
        #expect(SinchErrorMapping.outcome(status: "FAIL", reason: "Invalid code") == .pending)
        #expect(SinchErrorMapping.outcome(status: "FAIL", reason: "Invalid CLI") == .pending)
        #expect(SinchErrorMapping.outcome(status: "DENIED", reason: "Fraud") == .blocked)
        #expect(SinchErrorMapping.outcome(status: "DENIED", reason: "Denied by callback") == .denied)
        #expect(SinchErrorMapping.outcome(status: "FAIL", reason: "Expired") == .expired)
        #expect(SinchErrorMapping.outcome(status: "ERROR", reason: "SMS delivery failure") == .failed)
    }

    static let iosConstants: [(String, [Int], GatewayError.Code)] = [
        ("SINVerificationErrorInvalidInput", [1], .invalidRequest),
        ("SINVerificationErrorIncorrectCode", [2], .incorrectCode),
        ("SINVerificationErrorCalloutFailure", [3], .deliveryFailed),
        ("SINVerificationErrorTimeout", [4], .expired),
        ("SINVerificationErrorCancelled", [5], .canceled),
        ("SINVerificationErrorServiceError", [6, 3], .providerError),
    ]

    @Test("each SINVerificationError constant maps by name, whatever its number was", arguments: iosConstants)
    func iosConstant(_ name: String, _ values: [Int], _ code: GatewayError.Code) throws {
        let row = try #require(SinchErrorMapping.iosError(named: name))
        #expect(row.mapsTo == code && row.related["values"] == values.map(String.init).joined(separator: ", "))
        let short = String(name.dropFirst("SINVerificationError".count))
        #expect(SinchErrorMapping.iosError(named: short) == row)
    }

    @Test("the iOS table holds the six constants and no other")
    func iosCoverage() {
        #expect(Set(SinchErrorMapping.iosErrors.map(\.name)) == Set(Self.iosConstants.map(\.0)))
    }
}
