import Foundation
import GatewayCore
import Testing

@testable import GatewayVonage

extension VendorErrorRow: CustomTestStringConvertible {
    public var testDescription: String {
        "\(vocabulary) \(httpStatus.map(String.init) ?? "") \(code ?? "-") \(operation ?? "any") → \(mapsTo.rawValue)"
    }
}

@Suite("Vonage error mapping")
struct VonageErrorMappingTests {
    /// The v2 problems of docs/vendors/vonage.md §2.4 (status, `x-errors` id) and the v1 codes of §1.5 with their
    /// endpoints.
    static let documentedV2: Set<String> = [
        "400 invalid-code", "401 unauthorized", "401 jwt-expired", "402 low-balance", "403 forbidden", "404 not-found",
        "404 request-not-found", "409 concurrent", "409 no-code", "409 conflict", "409 no-events", "410 expired",
        "410 gone", "412 precondition-failed", "412 network-error", "422 invalid-params", "422 msisdn-error",
        "429 throttled", "500 internal-error", "409 fragment-exists", "404 template-fragment-not-found",
        "404 template-not-found", "409 template-exists", "409 not-empty-template", "403 max-templates",
    ]
    static let documentedV1: [Int] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 16, 17, 18, 19, 20, 29, 101]

    static func problem(_ fragment: String?, invalid: [String] = []) -> VonageWire.Problem {
        VonageWire.Problem(
            type: fragment.map { "https://www.developer.vonage.com/api-errors/verify-v2#" + $0 }, title: "t",
            detail: "d",
            instance: "i", invalidParameters: invalid.isEmpty ? nil : invalid.map { .init(name: $0, reason: "bad") })
    }

    @Test("each v2 row maps its status and type on its operation", arguments: VonageErrorMapping.v2Rows)
    func v2Row(_ row: VendorErrorRow) throws {
        let status = try #require(row.httpStatus)
        let error = VonageErrorMapping.mapV2(
            status: status, problem: Self.problem(row.code), operation: VendorOperation(row.operation ?? "start"),
            retryAfter: nil, providerID: "vonage-eu")
        #expect(error.code == row.mapsTo)
        #expect(error.vendor == .init(providerID: "vonage-eu", code: row.code, httpStatus: status))
        #expect(error.message.contains("Vonage"))
        #expect(row.source == "docs/vendors/vonage.md §2.4")
    }

    @Test("every documented v2 problem has a row, and every row is documented")
    func v2Coverage() {
        let rows = Set(VonageErrorMapping.v2Rows.map { "\($0.httpStatus ?? 0) \($0.code ?? "")" })
        #expect(rows == Self.documentedV2)
    }

    @Test("a 422 whose invalid_parameters names `to` is a bad number; other parameters are a bad request")
    func invalidTo() {
        for name in ["to", "workflow[0].to"] {
            let error = VonageErrorMapping.mapV2(
                status: 422, problem: Self.problem("invalid-params", invalid: [name]), operation: .start,
                retryAfter: nil,
                providerID: "vonage")
            #expect(error.code == .invalidPhoneNumber)
        }
        let brand = VonageErrorMapping.mapV2(
            status: 422, problem: Self.problem("invalid-params", invalid: ["brand"]), operation: .start,
            retryAfter: nil,
            providerID: "vonage")
        #expect(brand.code == .invalidRequest)
    }

    @Test("type URLs on other hosts and statuses without a body map by status; Retry-After is kept")
    func fallbacks() {
        let other = VonageErrorMapping.mapV2(
            status: 410,
            problem: VonageWire.Problem(type: "https://developer.nexmo.com/api-errors#gone"), operation: .check,
            retryAfter: nil, providerID: "vonage")
        #expect(other.code == .maxAttemptsReached && other.attemptsRemaining == 0)
        let unknown = VonageErrorMapping.mapV2(
            status: 503, problem: nil, operation: .start, retryAfter: 7, providerID: "vonage")
        #expect(unknown.code == .providerUnavailable && unknown.retryAfter == 7)
        #expect(
            VonageErrorMapping.mapV2(status: 409, problem: nil, operation: .start, retryAfter: nil, providerID: "v")
                .code == .concurrentVerification)
        #expect(
            VonageErrorMapping.mapV2(status: 418, problem: nil, operation: .start, retryAfter: nil, providerID: "v")
                .code == .providerRejected)
    }

    @Test("each v1 row maps its status code on its operation", arguments: VonageErrorMapping.v1Rows)
    func v1Row(_ row: VendorErrorRow) throws {
        let code = try #require(row.code.flatMap { Int($0) })
        for operation in row.operation.map({ [VendorOperation($0)] }) ?? [.start, .check, .cancel] {
            let error = VonageErrorMapping.mapV1(code: code, operation: operation, providerID: "vonage")
            #expect(error.code == row.mapsTo, "\(code) on \(operation.name)")
            #expect(error.vendor == .init(providerID: "vonage", code: row.code, httpStatus: 200))
        }
    }

    @Test("every documented v1 code 1–29 and 101 has a row; status 6 and 19 differ by endpoint")
    func v1Coverage() {
        #expect(Set(VonageErrorMapping.v1Rows.compactMap { $0.code.flatMap { Int($0) } }) == Set(Self.documentedV1))
        #expect(VonageErrorMapping.mapV1(code: 6, operation: .start, providerID: "v").code == .unsupportedDestination)
        #expect(VonageErrorMapping.mapV1(code: 6, operation: .check, providerID: "v").code == .notFound)
        #expect(VonageErrorMapping.mapV1(code: 17, operation: .check, providerID: "v").code == .maxAttemptsReached)
        #expect(VonageErrorMapping.mapV1(code: 19, operation: .cancel, providerID: "v").code == .invalidState)
        #expect(VonageErrorMapping.mapV1(code: 99, operation: .check, providerID: "v").code == .providerError)
    }

    @Test("each VerifyError case of the Nexmo iOS SDK has its gateway code", arguments: VonageErrorMapping.sdkRows)
    func sdkRow(_ row: VendorErrorRow) throws {
        #expect(VonageErrorMapping.sdkError(rawValue: try #require(row.code.flatMap { Int($0) })) == row.mapsTo)
    }

    @Test("the SDK table has the 16 VerifyError cases, 1 to 16, with their names")
    func sdkCoverage() {
        #expect(VonageErrorMapping.sdkRows.map(\.code) == (1...16).map(String.init))
        #expect(VonageErrorMapping.sdkRows.first?.name == "verificationAlreadyStarted")
        #expect(VonageErrorMapping.sdkRows.last?.name == "networkError")
    }
}
