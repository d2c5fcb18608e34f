import Foundation
import GatewayCore
import Testing

@testable import GatewayIDaaS

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
    func everyRow(_ row: VendorErrorRow) throws {
        let value = try #require(row.code)
        let code = row.match == .exact ? value : value + "9999"
        let status = IDaaSErrorMapping.vendorStatus(of: value)
        #expect(row.httpStatus == nil && row.operation == nil, "the body's code decides, on any call")
        let error = Self.map(code, status: status)
        #expect(error.code == row.mapsTo)
        #expect(error.vendor == GatewayError.VendorDetail(providerID: "idaas", code: code, httpStatus: status))
        #expect(error.message.contains(code))
        #expect(!error.message.contains("+86"))
        #expect(!error.message.contains("验证码"))
        #expect(!row.source.isEmpty && !row.name.isEmpty)
    }

    /// What the gateway answers for each code of the SDK's return-code table, written out: the IDaaS HTTP status,
    /// the gateway code, and that code's HTTP status, class and retryability.
    struct Expected: Sendable, CustomTestStringConvertible {
        var suffix: String
        var vendorStatus: Int
        var code: GatewayError.Code
        var httpStatus: Int
        var errorClass: GatewayError.ErrorClass
        var retryable: Bool

        init(
            _ suffix: String, _ vendorStatus: Int, _ code: GatewayError.Code, _ httpStatus: Int,
            _ errorClass: GatewayError.ErrorClass, retryable: Bool
        ) {
            self.suffix = suffix
            self.vendorStatus = vendorStatus
            self.code = code
            self.httpStatus = httpStatus
            self.errorClass = errorClass
            self.retryable = retryable
        }

        var testDescription: String { "\(suffix) → \(code.rawValue)" }
    }

    static let sdkTable: [Expected] = [
        Expected("COMMON.1001", 400, .providerRejected, 502, .providerPermanent, retryable: false),
        Expected("COMMON.1002", 400, .invalidRequest, 400, .caller, retryable: false),
        Expected("COMMON.1003", 400, .invalidRequest, 400, .caller, retryable: false),
        Expected("COMMON.1004", 400, .providerRejected, 502, .providerPermanent, retryable: false),
        Expected("COMMON.1005", 400, .expired, 410, .verification, retryable: false),
        Expected("COMMON.1006", 400, .invalidRequest, 400, .caller, retryable: false),
        Expected("COMMON.1007", 400, .invalidRequest, 400, .caller, retryable: false),
        Expected("COMMON.1008", 500, .providerUnavailable, 502, .providerTransient, retryable: true),
        Expected("COMMON.1009", 400, .providerRejected, 502, .providerPermanent, retryable: false),
        Expected("COMMON.1010", 400, .providerRejected, 502, .providerPermanent, retryable: false),
        Expected("COMMON.1011", 400, .providerRejected, 502, .providerPermanent, retryable: false),
        Expected("COMMON.1012", 400, .providerAuthFailed, 502, .providerPermanent, retryable: false),
        Expected("COMMON.1013", 400, .notEnrolled, 422, .caller, retryable: false),
        Expected("COMMON.1014", 400, .providerRejected, 502, .providerPermanent, retryable: false),
        Expected("LOGIN.1001", 400, .providerError, 502, .providerTransient, retryable: true),
        Expected("LOGIN.1002", 400, .notEnrolled, 422, .caller, retryable: false),
        Expected("LOGIN.1003", 400, .accountLocked, 403, .caller, retryable: false),
        Expected("LOGIN.1004", 400, .providerError, 502, .providerTransient, retryable: true),
        Expected("LOGIN.1005", 400, .incorrectCode, 422, .verification, retryable: false),
        Expected("LOGIN.1006", 400, .providerRejected, 502, .providerPermanent, retryable: false),
        Expected("LOGIN.1007", 400, .providerRejected, 502, .providerPermanent, retryable: false),
        Expected("LOGIN.1008", 400, .providerRejected, 502, .providerPermanent, retryable: false),
        Expected("SMS.1001", 400, .providerRejected, 502, .providerPermanent, retryable: false),
        Expected("SMS.1002", 400, .appVerificationFailed, 403, .caller, retryable: false),
        Expected("SMS.1003", 400, .appVerificationFailed, 403, .caller, retryable: false),
        Expected("SMS.1004", 400, .appVerificationFailed, 403, .caller, retryable: false),
        Expected("SMS.1005", 400, .incorrectCode, 422, .verification, retryable: false),
        Expected("SMS.1006", 400, .incorrectCode, 422, .verification, retryable: false),
        Expected("SMS.1007", 400, .providerRejected, 502, .providerPermanent, retryable: false),
        Expected("SMS.1008", 400, .deliveryFailed, 502, .providerTransient, retryable: true),
        Expected("SOCIAL.1001", 400, .providerError, 502, .providerTransient, retryable: true),
        Expected("SOCIAL.1002", 400, .providerError, 502, .providerTransient, retryable: true),
        Expected("PWD.1001", 400, .denied, 403, .verification, retryable: false),
        Expected("PWD.1002", 400, .denied, 403, .verification, retryable: false),
        Expected("PWD.1003", 400, .denied, 403, .verification, retryable: false),
        Expected("PWD.1004", 400, .denied, 403, .verification, retryable: false),
        Expected("PWD.1005", 400, .denied, 403, .verification, retryable: false),
        Expected("PWD.1006", 400, .denied, 403, .verification, retryable: false),
        Expected("PWD.1007", 400, .denied, 403, .verification, retryable: false),
        Expected("PWD.1008", 400, .denied, 403, .verification, retryable: false),
        Expected("MFA.1001", 400, .denied, 403, .verification, retryable: false),
        Expected("MFA.1002", 400, .providerRejected, 502, .providerPermanent, retryable: false),
        Expected("MFA.1003", 400, .providerRejected, 502, .providerPermanent, retryable: false),
    ]

    @Test(
        "every code of the SDK's return-code table has an exact row in both families with the right outcome",
        arguments: sdkTable)
    func sdkCode(_ expected: Expected) throws {
        let entry = try #require(IDaaSErrorMapping.sdkCodes.first { "\($0.group).\($0.number)" == expected.suffix })
        #expect(entry.httpStatus == expected.vendorStatus)
        for code in ["IDAAS.SDK." + expected.suffix, "SDK." + expected.suffix] {
            let row = try #require(IDaaSErrorMapping.row(for: code))
            #expect(row.match == .exact, "\(code)")
            #expect(IDaaSErrorMapping.vendorStatus(of: code) == expected.vendorStatus)
            let error = Self.map(code, status: expected.vendorStatus)
            #expect(error.code == expected.code, "\(code)")
            #expect(error.httpStatus == expected.httpStatus, "\(code)")
            #expect(error.errorClass == expected.errorClass, "\(code)")
            #expect(error.isRetryable == expected.retryable, "\(code)")
            #expect(error.vendor?.code == code)
            #expect(error.vendor?.httpStatus == expected.vendorStatus)
        }
    }

    @Test("the table is the SDK's whole table: 43 codes, no code twice, every one written out above")
    func wholeTable() {
        let codes = IDaaSErrorMapping.sdkCodes.map { "\($0.group).\($0.number)" }
        #expect(codes.count == 43)
        #expect(Set(codes).count == codes.count)
        #expect(Set(codes) == Set(Self.sdkTable.map(\.suffix)))
        let groups = Dictionary(grouping: IDaaSErrorMapping.sdkCodes, by: \.group).mapValues(\.count)
        #expect(groups == ["COMMON": 14, "LOGIN": 8, "SMS": 8, "SOCIAL": 2, "PWD": 8, "MFA": 3])
        let exact = IDaaSErrorMapping.rows.filter { $0.match == .exact }.compactMap(\.code)
        #expect(Set(exact).count == exact.count, "an exact row is listed twice")
    }

    @Test("wrong codes are incorrect_code; lockouts account_locked; configuration codes a misconfigured provider")
    func classes() {
        for code in ["SMS.1005", "SMS.1006", "LOGIN.1005"] {
            #expect(Self.map("IDAAS.SDK." + code).code == .incorrectCode)
        }
        for code in ["SMS.1002", "SMS.1003", "SMS.1004"] {
            #expect(Self.map("IDAAS.SDK." + code).code == .appVerificationFailed)
        }
        #expect(Self.map("IDAAS.SDK.COMMON.1008", status: 500).isRetryable)
        let configuration = [
            "COMMON.1009", "COMMON.1010", "COMMON.1011", "COMMON.1014", "LOGIN.1006", "LOGIN.1007", "LOGIN.1008",
            "MFA.1002", "MFA.1003", "SMS.1007",
        ]
        for code in configuration {
            #expect(Self.map("IDAAS.SDK." + code).errorClass == .providerPermanent, "\(code)")
            #expect(Self.map("SDK." + code).errorClass == .providerPermanent, "\(code)")
        }
        #expect(Self.map("IDAAS.SDK.LOGIN.1003").code == .accountLocked)
    }

    /// The codes docs/vendors/idaas.md §3 lists outside the SDK's table, with what the gateway answers for them.
    static let documented: [(String, GatewayError.Code)] = [
        ("IDAAS.SDK.PARAM.0001", .invalidRequest), ("IDAAS.SDK.PARAM.0023", .invalidToken),
        ("IDAAS.SDK.CAPTCHA.0002", .appVerificationFailed), ("IDAAS.SDK.CAPTCHA.0006", .deliveryFailed),
        ("IDAAS.SDK.CAPTCHA.0007", .incorrectCode), ("SDK.COMMON.1001", .providerRejected),
        ("SDK.COMMON.1003", .invalidRequest), ("SDK.COMMON.1012", .providerAuthFailed),
        ("SDK.COMMON.1013", .notEnrolled), ("SDK.LOGIN.1002", .notEnrolled), ("SDK.LOGIN.1003", .accountLocked),
        ("SDK.LOGIN.1004", .providerError), ("SDK.LOGIN.1005", .incorrectCode), ("USER.0001", .notEnrolled),
    ]

    @Test("every code of docs/vendors/idaas.md §3 has an exact row with the documented outcome")
    func documentedCodes() {
        for (code, expected) in Self.documented {
            let row = IDaaSErrorMapping.row(for: code)
            #expect(row?.match == .exact, "\(code)")
            #expect(row?.mapsTo == expected, "\(code)")
            #expect(Self.map(code).code == expected, "\(code)")
        }
    }

    @Test(
        "every SDK callback code has its row: success none, otherwise the gateway code with its status",
        arguments: [
            ("0", nil, nil), ("1", GatewayError.Code.invalidRequest, 400), ("102", .providerError, 502),
            ("103", .invalidToken, 422), ("105", .appVerificationFailed, 403), ("106", .invalidToken, 422),
            ("107", .invalidToken, 422),
        ] as [(String, GatewayError.Code?, Int?)])
    func callbackCode(_ code: String, _ expected: GatewayError.Code?, _ status: Int?) throws {
        let row = try #require(IDaaSErrorMapping.callback(code))
        #expect(row.mapsTo == expected)
        #expect(row.mapsTo?.httpStatus == status)
        #expect(!row.meaning.isEmpty && !row.callbacks.isEmpty)
        #expect(IDaaSErrorMapping.callbackCodes.count == 7)
    }

    /// The SDK's groups and the server's: a code no row lists falls to its group (docs/vendors/idaas.md §3.1).
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
        let body = try SnakeCaseJSON.decoder.decode(
            IDaaSWire.ErrorBody.self,
            from: Data(#"{"error_code":"IDAAS.SDK.CAPTCHA.0007","error_msg":"Incorrect verification code"}"#.utf8))
        #expect(body.code == "IDAAS.SDK.CAPTCHA.0007")
    }
}
