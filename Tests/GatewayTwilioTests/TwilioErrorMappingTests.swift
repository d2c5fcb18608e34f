import GatewayCore
import Testing

@testable import GatewayTwilio

@Suite("Twilio error mapping")
struct TwilioErrorMappingTests {
    /// Every code in the vendor notes `docs/vendors/twilio.md` §4.2 (ranges expanded) and §5 (the push SDK's
    /// 60401–60407).
    static let documentedCodes: [Int] = [
        20003, 20403, 20404, 20429, 20500, 20503,
        21211, 21408, 21610, 21612, 21614, 30450,
        // docs/vendors/twilio-messaging.md §7.
        14107, 20005, 21606, 21608, 21617, 30001, 30002, 30003, 30004, 30005, 30006, 30007, 30008, 30018, 30022,
        30023, 30032, 30034,
        60001, 60008, 60200, 60201, 60202, 60203, 60204, 60205, 60206,
        60207, 60208, 60209, 60210, 60211, 60212, 60213, 60214, 60215, 60216, 60217,
        60218, 60219, 60220, 60221, 60222, 60223, 60224, 60225, 60226, 60227, 60228, 60229, 60238,
        60300, 60301, 60302, 60305, 60306, 60307, 60308, 60309, 60310, 60311, 60312, 60313, 60314, 60315,
        60317, 60318, 60322, 60323, 60324, 60325, 60326, 60329, 60330, 60331, 60333, 60383, 60390,
        60401, 60402, 60403, 60404, 60405, 60406, 60407,
        60408, 60409, 60410, 60411, 60413, 60500, 60519, 60531, 60600, 60602, 60603, 60604, 60605, 60610,
        68008,
    ]

    @Test(
        "each row maps its Twilio code to its gateway code and keeps the vendor code",
        arguments: TwilioErrorMapping.rows)
    func row(_ row: VendorErrorRow) throws {
        let code = try #require(row.code.flatMap { Int($0) })
        let error = TwilioErrorMapping.map(code: code, httpStatus: 400, retryAfter: nil, providerID: "twilio-eu")
        #expect(error.code == row.mapsTo)
        #expect(
            error.vendor == GatewayError.VendorDetail(providerID: "twilio-eu", code: row.code, httpStatus: 400))
        #expect(error.message.contains(String(code)))
        #expect(row.source.hasPrefix("[") && row.source.hasSuffix("]"))
        #expect(!row.name.isEmpty)
    }

    @Test("every code documented in docs/vendors/twilio.md §4.2 and §5 has exactly one row, and no row is undocumented")
    func coverage() {
        let rowCodes = TwilioErrorMapping.rows.compactMap { $0.code.flatMap { Int($0) } }
        #expect(Set(rowCodes).count == rowCodes.count, "a code has two rows")
        let missing = Set(Self.documentedCodes).subtracting(rowCodes).sorted()
        let extra = Set(rowCodes).subtracting(Self.documentedCodes).sorted()
        #expect(missing.isEmpty, "codes without a row: \(missing)")
        #expect(extra.isEmpty, "rows for undocumented codes: \(extra)")
    }

    @Test(
        "the codes the design names map as it says",
        arguments: [
            (20003, GatewayError.Code.providerAuthFailed), (20404, .notFound), (20429, .providerRateLimited),
            (20500, .providerUnavailable), (20503, .providerUnavailable), (21211, .invalidPhoneNumber),
            (60200, .invalidRequest), (21408, .providerRejected), (60220, .providerRejected),
            (60238, .providerRejected),
            (21610, .destinationBlocked), (21612, .unsupportedDestination), (21614, .unsupportedDestination),
            (60205, .unsupportedDestination), (30450, .destinationBlocked), (60410, .destinationBlocked),
            (60413, .destinationBlocked), (60605, .destinationBlocked), (60202, .maxAttemptsReached),
            (60203, .maxSendsReached), (60212, .concurrentVerification), (60204, .providerRejected),
            (60217, .providerRejected), (60223, .providerRejected), (60323, .expired), (60324, .incorrectCode),
            (60308, .maxAttemptsReached), (60310, .maxAttemptsReached), (60309, .maxSendsReached),
            (60312, .providerRateLimited), (60326, .providerRateLimited), (60401, .providerUnavailable),
            (60402, .providerError), (60404, .invalidRequest), (60407, .appVerificationFailed),
        ])
    func designChoices(code: Int, expected: GatewayError.Code) {
        #expect(TwilioErrorMapping.row(for: code)?.mapsTo == expected)
    }

    @Test(
        "fraud and geo blocks are in the blocked class, so the router never fails them over",
        arguments: [
            30450, 60410, 60413, 60605,
        ])
    func blocksAreTerminal(code: Int) {
        let error = TwilioErrorMapping.map(code: code, httpStatus: 403, retryAfter: nil, providerID: "twilio")
        #expect(error.errorClass == .blocked)
    }

    @Test(
        "an unknown or missing code falls back on the HTTP status",
        arguments: [
            (401, GatewayError.Code.providerAuthFailed), (403, .providerAuthFailed), (404, .notFound),
            (429, .providerRateLimited), (500, .providerUnavailable), (503, .providerUnavailable),
            (599, .providerUnavailable), (400, .providerRejected), (409, .providerRejected), (422, .providerRejected),
            (302, .providerError),
        ])
    func fallback(status: Int, expected: GatewayError.Code) {
        let unknown = TwilioErrorMapping.map(code: 99_999, httpStatus: status, retryAfter: nil, providerID: "twilio")
        #expect(unknown.code == expected)
        #expect(unknown.vendor?.code == "99999")
        let missing = TwilioErrorMapping.map(code: nil, httpStatus: status, retryAfter: nil, providerID: "twilio")
        #expect(missing.code == expected)
        #expect(missing.vendor == GatewayError.VendorDetail(providerID: "twilio", code: nil, httpStatus: status))
    }

    @Test("a known code wins over the HTTP status, and Retry-After is kept")
    func codeWins() {
        let error = TwilioErrorMapping.map(code: 60203, httpStatus: 429, retryAfter: 60, providerID: "twilio")
        #expect(error.code == .maxSendsReached)
        #expect(error.retryAfter == 60)
        let limited = TwilioErrorMapping.map(code: nil, httpStatus: 429, retryAfter: 12, providerID: "twilio")
        #expect(limited.code == .providerRateLimited)
        #expect(limited.retryAfter == 12)
    }

    @Test("max_attempts_reached from Twilio leaves no attempts")
    func noAttemptsLeft() {
        #expect(
            TwilioErrorMapping.map(code: 60202, httpStatus: 429, retryAfter: nil, providerID: "t").attemptsRemaining
                == 0)
        #expect(
            TwilioErrorMapping.map(code: 60200, httpStatus: 400, retryAfter: nil, providerID: "t").attemptsRemaining
                == nil)
    }
}
