import Foundation
import GatewayCore
import Testing

@Suite("GatewayError")
struct GatewayErrorTests {
    /// The taxonomy as docs/design.md §5 documents it, written out so any change in the source fails a test.
    struct Documented: Sendable, CustomTestStringConvertible {
        var code: GatewayError.Code
        var wire: String
        var status: Int
        var errorClass: GatewayError.ErrorClass
        var retryable: Bool

        init(
            _ code: GatewayError.Code, _ wire: String, _ status: Int, _ errorClass: GatewayError.ErrorClass,
            retryable: Bool
        ) {
            self.code = code
            self.wire = wire
            self.status = status
            self.errorClass = errorClass
            self.retryable = retryable
        }

        var testDescription: String { wire }
    }

    static let documented: [Documented] = [
        // caller
        Documented(.invalidRequest, "invalid_request", 400, .caller, retryable: false),
        Documented(.invalidPhoneNumber, "invalid_phone_number", 400, .caller, retryable: false),
        Documented(.unsupportedChannel, "unsupported_channel", 400, .caller, retryable: false),
        Documented(.unsupportedDestination, "unsupported_destination", 400, .caller, retryable: false),
        Documented(.appVerificationRequired, "app_verification_required", 400, .caller, retryable: false),
        Documented(.appVerificationFailed, "app_verification_failed", 403, .caller, retryable: false),
        Documented(.unauthorized, "unauthorized", 401, .caller, retryable: false),
        Documented(.forbidden, "forbidden", 403, .caller, retryable: false),
        Documented(.rateLimited, "rate_limited", 429, .caller, retryable: true),
        Documented(.idempotencyConflict, "idempotency_conflict", 409, .caller, retryable: true),
        Documented(.idempotencyOutcomeUnknown, "idempotency_outcome_unknown", 409, .caller, retryable: false),
        // blocked: fraud or geo block, never failed over
        Documented(.destinationBlocked, "destination_blocked", 403, .blocked, retryable: false),
        Documented(.recentSimSwap, "recent_sim_swap", 403, .blocked, retryable: false),
        // verification
        Documented(.incorrectCode, "incorrect_code", 422, .verification, retryable: false),
        Documented(.maxAttemptsReached, "max_attempts_reached", 429, .verification, retryable: false),
        Documented(.expired, "expired", 410, .verification, retryable: false),
        Documented(.notFound, "not_found", 404, .verification, retryable: false),
        Documented(.alreadyApproved, "already_approved", 409, .verification, retryable: false),
        Documented(.canceled, "canceled", 409, .verification, retryable: false),
        Documented(.concurrentVerification, "concurrent_verification", 409, .verification, retryable: true),
        Documented(.maxSendsReached, "max_sends_reached", 429, .verification, retryable: false),
        // provider, transient: fail over before the vendor accepted
        Documented(.providerUnavailable, "provider_unavailable", 502, .providerTransient, retryable: true),
        Documented(.providerTimeout, "provider_timeout", 504, .providerTransient, retryable: true),
        Documented(.providerRateLimited, "provider_rate_limited", 502, .providerTransient, retryable: true),
        Documented(.deliveryFailed, "delivery_failed", 502, .providerTransient, retryable: true),
        Documented(.providerError, "provider_error", 502, .providerTransient, retryable: true),
        // provider, permanent: configuration or account
        Documented(.providerAuthFailed, "provider_auth_failed", 502, .providerPermanent, retryable: false),
        Documented(
            .providerInsufficientFunds, "provider_insufficient_funds", 502, .providerPermanent, retryable: false),
        Documented(.providerRejected, "provider_rejected", 502, .providerPermanent, retryable: false),
        // contracts v2
        Documented(.notEnrolled, "not_enrolled", 422, .caller, retryable: false),
        Documented(.accountLocked, "account_locked", 403, .caller, retryable: false),
        Documented(.invalidToken, "invalid_token", 422, .caller, retryable: false),
        Documented(.denied, "denied", 403, .verification, retryable: false),
        Documented(.invalidState, "invalid_state", 409, .verification, retryable: false),
        // gateway
        Documented(.noProviderAvailable, "no_provider_available", 503, .gateway, retryable: true),
        Documented(.storeUnavailable, "store_unavailable", 503, .gateway, retryable: true),
        Documented(.internal, "internal", 500, .gateway, retryable: false),
    ]

    @Test("every code has its documented wire name, HTTP status, class and retryability", arguments: documented)
    func documentedCode(_ row: Documented) {
        #expect(row.code.rawValue == row.wire)
        #expect(row.code.httpStatus == row.status)
        #expect(row.code.errorClass == row.errorClass)
        #expect(row.code.isRetryable == row.retryable)
        #expect(GatewayError.Code(rawValue: row.wire) == row.code)
    }

    @Test("the documented table covers every code exactly once")
    func tableIsComplete() {
        let documentedCodes = Self.documented.map(\.code)
        #expect(documentedCodes.count == Set(documentedCodes).count)
        #expect(Set(documentedCodes) == Set(GatewayError.Code.allCases))
    }

    @Test("codes are unique snake_case strings")
    func codesAreUniqueSnakeCase() throws {
        let raw = GatewayError.Code.allCases.map(\.rawValue)
        #expect(Set(raw).count == raw.count)
        let snakeCase = try Regex("^[a-z]+(_[a-z]+)*$")
        for value in raw {
            #expect(value.wholeMatch(of: snakeCase) != nil, "`\(value)` is not snake_case")
        }
    }

    @Test("error classes have snake_case wire names")
    func errorClassWireNames() {
        #expect(
            GatewayError.ErrorClass.allCases.map(\.rawValue).sorted() == [
                "blocked", "caller", "gateway", "provider_permanent", "provider_transient", "verification",
            ])
    }

    @Test("an error reports the class, status and retryability of its code", arguments: GatewayError.Code.allCases)
    func errorForwardsItsCode(_ code: GatewayError.Code) {
        let error = GatewayError(code, "message")
        #expect(error.errorClass == code.errorClass)
        #expect(error.httpStatus == code.httpStatus)
        #expect(error.isRetryable == code.isRetryable)
        #expect(error.sendMayHaveHappened == false)
    }

    @Test("the description names the code and the vendor's detail")
    func descriptionShowsVendorDetail() {
        let error = GatewayError(
            .providerRejected, "The vendor refused.",
            vendor: GatewayError.VendorDetail(providerID: "twilio", code: "60200", httpStatus: 400))
        #expect(error.description == "provider_rejected: The vendor refused. [twilio 60200 http=400]")
        #expect(GatewayError(.internal, "Boom.").description == "internal: Boom.")
    }

    @Test("codes and vendor details survive a JSON round trip")
    func codableRoundTrip() throws {
        let detail = GatewayError.VendorDetail(providerID: "sinch", code: "40003", httpStatus: 422)
        let data = try JSONEncoder().encode(detail)
        #expect(try JSONDecoder().decode(GatewayError.VendorDetail.self, from: data) == detail)
        let code = try JSONEncoder().encode([GatewayError.Code.maxSendsReached])
        #expect(String(decoding: code, as: UTF8.self) == #"["max_sends_reached"]"#)
    }

    @Test("the convenience constructors carry their code")
    func conveniences() {
        #expect(GatewayError.invalidRequest("bad").code == .invalidRequest)
        #expect(GatewayError.notFound().code == .notFound)
        #expect(GatewayError.internal().code == .internal)
    }
}
