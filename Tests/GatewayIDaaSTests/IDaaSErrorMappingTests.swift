import Foundation
import GatewayCore
import Testing

@testable import GatewayIDaaS

extension IDaaSErrorMapping.Row: CustomTestStringConvertible {
    public var testDescription: String { "\(value) → \(mapsTo.rawValue)" }
}

@Suite("IDaaS error mapping")
struct IDaaSErrorMappingTests {
    static func map(_ code: String?, message: String = "验证码错误 +8613800138000", status: Int = 400) -> GatewayError {
        IDaaSErrorMapping.map(
            body: IDaaSWire.ErrorBody(errorCode: code, errorMsg: message), httpStatus: status, providerID: "idaas",
            operation: "sms_login")
    }

    @Test(
        "every row maps its code (a prefix row, a code in its group) and keeps the vendor code, never the text",
        arguments: IDaaSErrorMapping.rows)
    func everyRow(_ row: IDaaSErrorMapping.Row) {
        let code = row.match == .exact ? row.value : row.value + "9999"
        let error = Self.map(code)
        #expect(error.code == row.mapsTo)
        #expect(error.vendor == GatewayError.VendorDetail(providerID: "idaas", code: code, httpStatus: 400))
        #expect(error.message.contains(code))
        #expect(!error.message.contains("+86"))
        #expect(!error.message.contains("验证码"))
        #expect(!row.source.isEmpty)
        #expect(!row.note.isEmpty)
    }

    /// Every code idaas.md §3 lists, with what the gateway answers for it.
    static let documented: [(String, GatewayError.Code)] = [
        ("IDAAS.SDK.PARAM.0001", .invalidRequest), ("IDAAS.SDK.PARAM.0023", .invalidToken),
        ("IDAAS.SDK.CAPTCHA.0002", .appVerificationFailed), ("IDAAS.SDK.CAPTCHA.0006", .deliveryFailed),
        ("IDAAS.SDK.CAPTCHA.0007", .incorrectCode), ("SDK.COMMON.1001", .providerRejected),
        ("SDK.COMMON.1003", .invalidRequest), ("SDK.COMMON.1012", .providerAuthFailed),
        ("SDK.COMMON.1013", .notEnrolled), ("SDK.LOGIN.1002", .notEnrolled), ("SDK.LOGIN.1003", .accountLocked),
        ("SDK.LOGIN.1004", .providerError), ("SDK.LOGIN.1005", .incorrectCode), ("USER.0001", .notEnrolled),
    ]

    @Test("every code of idaas.md §3 has an exact row with the documented outcome")
    func documentedCodes() {
        for (code, expected) in Self.documented {
            let row = IDaaSErrorMapping.row(for: code)
            #expect(row?.match == .exact, "\(code)")
            #expect(row?.mapsTo == expected, "\(code)")
            #expect(Self.map(code).code == expected, "\(code)")
        }
    }

    /// The seed SDK's groups and the server's: a code no row lists falls to its group (idaas.md §3.1).
    @Test(
        "unlisted codes fall back by group prefix",
        arguments: [
            ("IDAAS.SDK.COMMON.0042", GatewayError.Code.invalidRequest),
            ("IDAAS.SDK.LOGIN.0007", .denied), ("IDAAS.SDK.SMS.0003", .deliveryFailed),
            ("IDAAS.SDK.SOCIAL.0001", .providerError), ("IDAAS.SDK.PWD.0010", .denied),
            ("IDAAS.SDK.MFA.0002", .denied), ("IDAAS.SDK.PARAM.0099", .invalidRequest),
            ("IDAAS.SDK.CAPTCHA.0042", .appVerificationFailed), ("SDK.COMMON.9999", .invalidRequest),
            ("SDK.LOGIN.9999", .denied), ("SDK.SMS.1", .deliveryFailed), ("SDK.MFA.1", .denied),
        ])
    func prefixFallback(_ code: String, _ expected: GatewayError.Code) {
        #expect(IDaaSErrorMapping.row(for: code)?.match == .prefix)
        #expect(Self.map(code).code == expected)
    }

    @Test("a code no group knows is provider_error; every IDaaS error is 400, so the status never decides")
    func unknownCode() {
        let error = Self.map("SOMETHING.ELSE.1")
        #expect(error.code == .providerError)
        #expect(error.vendor?.code == "SOMETHING.ELSE.1")
        // The same code at 400 and the known code at 400: the body decides.
        #expect(Self.map("IDAAS.SDK.CAPTCHA.0007").code == .incorrectCode)
        #expect(Self.map("IDAAS.SDK.CAPTCHA.0006").code == .deliveryFailed)
    }

    @Test("without a readable code the HTTP status decides; an unbounded code is not kept")
    func statusFallback() {
        #expect(Self.map(nil, status: 503).code == .providerUnavailable)
        #expect(Self.map(nil, status: 500).code == .providerUnavailable)
        #expect(Self.map(nil, status: 401).code == .providerAuthFailed)
        #expect(Self.map(nil, status: 429).code == .providerRateLimited)
        #expect(Self.map(nil, status: 400).code == .providerError)
        let error = Self.map("not a code; +8613800138000", status: 400)
        #expect(error.vendor?.code == nil)
        #expect(!error.message.contains("+86"))
        let oauth = IDaaSErrorMapping.map(
            body: IDaaSWire.ErrorBody(error: "SDK.LOGIN.1003"), httpStatus: 400, providerID: "idaas", operation: "x")
        #expect(oauth.code == .accountLocked)
    }

    @Test("a decoded error body reads error_code and error_msg")
    func decodesBody() throws {
        let body = try JSONDecoder().decode(
            IDaaSWire.ErrorBody.self,
            from: Data(#"{"error_code":"IDAAS.SDK.CAPTCHA.0007","error_msg":"Incorrect verification code"}"#.utf8))
        #expect(body.code == "IDAAS.SDK.CAPTCHA.0007")
    }
}
