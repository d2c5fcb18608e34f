import Foundation
import GatewayCore
import Testing

@testable import GatewayFirebase

@Suite("Firebase error mapping")
struct FirebaseErrorMappingTests {
    typealias Envelope = FirebaseWire.ErrorEnvelope

    /// A Google error body with `message` and, optionally, a Google-level reason.
    static func envelope(_ message: String, reason: String = "invalid", status: String? = nil) -> Envelope {
        Envelope(
            error: Envelope.Body(
                code: 400, message: message,
                errors: [Envelope.Item(message: message, domain: "global", reason: reason)], status: status))
    }

    static func map(_ envelope: Envelope?, status: Int = 400) -> GatewayError {
        FirebaseErrorMapping.map(envelope: envelope, httpStatus: status, retryAfter: nil, providerID: "firebase")
    }

    @Test(
        "every row maps its structured field to its code, keeps the vendor code and never echoes the detail",
        arguments: FirebaseErrorMapping.rows)
    func everyRow(_ row: VendorErrorRow) {
        let detail = "Exceeded something for +16505553434"
        let body: Envelope
        switch row.field {
        case .serverString: body = Self.envelope("\(row.value) : \(detail)")
        case .reason:
            body = Self.envelope("API key not valid. \(detail)", reason: row.value, status: "INVALID_ARGUMENT")
        }
        let error = Self.map(body)
        #expect(error.code == row.mapsTo)
        #expect(error.vendor == GatewayError.VendorDetail(providerID: "firebase", code: row.value, httpStatus: 400))
        #expect(!error.message.contains("+1650"))
        #expect(!error.message.contains("Exceeded"))
        #expect(error.message.contains(row.value))
        #expect(!row.source.isEmpty)
        #expect((17000...18000).contains(row.ios.rawValue))
        #expect(row.iosClientSide.map { (17000...18000).contains($0.rawValue) } ?? true)
    }

    /// Every server string of docs/vendors/firebase.md §3 (the §3.2 table, the reCAPTCHA Enterprise family spelled out
    /// from the iOS codes 17200–17207, and the §3.1 key reasons) with the iOS `AuthErrorCode` the doc gives for it: the
    /// server-side mapping, or 17999 when the iOS switch does not know the string.
    static let documented: [(String, Int)] = [
        ("INVALID_PHONE_NUMBER", 17042), ("MISSING_PHONE_NUMBER", 17999), ("MISSING_SESSION_INFO", 17999),
        ("MISSING_CODE", 17999), ("INVALID_SESSION_INFO", 17046), ("INVALID_CODE", 17044),
        ("SESSION_EXPIRED", 17051), ("CODE_EXPIRED", 17999), ("INVALID_TEMPORARY_PROOF", 17999),
        ("TOO_MANY_ATTEMPTS_TRY_LATER", 17010), ("QUOTA_EXCEEDED", 17052), ("CAPTCHA_CHECK_FAILED", 17056),
        ("INVALID_APP_CREDENTIAL", 17048), ("MISSING_APP_CREDENTIAL", 17047), ("MISSING_CLIENT_IDENTIFIER", 17093),
        ("APP_NOT_VERIFIED", 17055), ("MISSING_IOS_APP_TOKEN", 17053), ("OPERATION_NOT_ALLOWED", 17006),
        ("USER_DISABLED", 17005), ("PHONE_NUMBER_EXISTS", 17999), ("UNSUPPORTED_FIRST_FACTOR", 17089),
        ("UNSUPPORTED_TENANT_OPERATION", 17073), ("TENANT_ID_MISMATCH", 17072), ("INVALID_ID_TOKEN", 17017),
        ("TOKEN_EXPIRED", 17021), ("USER_NOT_FOUND", 17011), ("PROJECT_DISABLED", 17999),
        ("RECAPTCHA_NOT_ENABLED", 17200), ("MISSING_RECAPTCHA_TOKEN", 17201), ("INVALID_RECAPTCHA_TOKEN", 17202),
        ("INVALID_RECAPTCHA_ACTION", 17203), ("MISSING_CLIENT_TYPE", 17204), ("MISSING_RECAPTCHA_VERSION", 17205),
        ("INVALID_RECAPTCHA_VERSION", 17206), ("INVALID_REQ_TYPE", 17207),
        ("keyInvalid", 17023), ("ipRefererBlocked", 17028),
    ]

    /// The strings of the multi-factor methods (Identity Toolkit v2): what the Auth Emulator answers there
    /// (`operations.ts`) and what the iOS SDK maps (`AuthBackend.swift`: 17081–17089; 17999 where its switch does
    /// not know the string).
    static let multiFactor: [(String, Int)] = [
        ("MISSING_MFA_PENDING_CREDENTIAL", 17081), ("MISSING_MFA_ENROLLMENT_ID", 17082), ("MISSING_CREDENTIAL", 17999),
        ("INVALID_MFA_PENDING_CREDENTIAL", 17083), ("INVALID_PROJECT_ID", 17999), ("MFA_ENROLLMENT_NOT_FOUND", 17084),
        ("SECOND_FACTOR_EXISTS", 17087), ("SECOND_FACTOR_LIMIT_EXCEEDED", 17088), ("UNVERIFIED_EMAIL", 17086),
        ("MISSING_ID_TOKEN", 17999), ("INVALID_ARGUMENT", 17999),
    ]

    @Test(
        "every server string of docs/vendors/firebase.md §3 and of the multi-factor methods has exactly one row, with the iOS AuthErrorCode"
    )
    func everyDocumentedStringHasARow() {
        let values = FirebaseErrorMapping.rows.map(\.value)
        #expect(Set(values).count == values.count, "no string has two rows")
        let documented = Self.documented + Self.multiFactor
        #expect(Set(values) == Set(documented.map(\.0)), "the table and the sources list the same strings")
        for (value, ios) in documented {
            #expect(FirebaseErrorMapping.rows.first { $0.value == value }?.ios.rawValue == ios, "\(value)")
        }
    }

    @Test("the choices the brief and docs/design.md §5 fix are kept")
    func keyChoices() {
        let expected: [String: GatewayError.Code] = [
            "INVALID_CODE": .incorrectCode, "INVALID_SESSION_INFO": .expired, "SESSION_EXPIRED": .expired,
            "TOO_MANY_ATTEMPTS_TRY_LATER": .rateLimited, "QUOTA_EXCEEDED": .providerRateLimited,
            "CAPTCHA_CHECK_FAILED": .appVerificationFailed, "INVALID_APP_CREDENTIAL": .appVerificationFailed,
            "MISSING_APP_CREDENTIAL": .appVerificationRequired, "MISSING_CLIENT_IDENTIFIER": .appVerificationRequired,
            "OPERATION_NOT_ALLOWED": .providerRejected, "INVALID_PHONE_NUMBER": .invalidPhoneNumber,
            "keyInvalid": .providerAuthFailed,
            // Multi-factor: the caller's inputs, which the provider ends a verification on at a check.
            "INVALID_MFA_PENDING_CREDENTIAL": .invalidToken, "MFA_ENROLLMENT_NOT_FOUND": .notEnrolled,
            "INVALID_ID_TOKEN": .invalidToken, "TOKEN_EXPIRED": .invalidToken, "SECOND_FACTOR_EXISTS": .invalidRequest,
            "SECOND_FACTOR_LIMIT_EXCEEDED": .invalidRequest, "UNVERIFIED_EMAIL": .invalidRequest,
            "MISSING_MFA_PENDING_CREDENTIAL": .providerError,
        ]
        for (value, code) in expected {
            #expect(FirebaseErrorMapping.rows.first { $0.value == value }?.mapsTo == code, "\(value)")
        }
    }

    @Test(
        "the server string is the part of the message before the colon, with or without spaces",
        arguments: [
            ("QUOTA_EXCEEDED : Exceeded quota.", "QUOTA_EXCEEDED"),
            ("QUOTA_EXCEEDED : Too many recent phone auth attempts. Please try again later.", "QUOTA_EXCEEDED"),
            ("TOO_MANY_ATTEMPTS_TRY_LATER:Too many unsuccessful login attempts.", "TOO_MANY_ATTEMPTS_TRY_LATER"),
            ("INVALID_PHONE_NUMBER : Invalid format.", "INVALID_PHONE_NUMBER"),
            ("INVALID_CODE", "INVALID_CODE"),
            ("  SESSION_EXPIRED  ", "SESSION_EXPIRED"),
            ("API key not valid. Please pass a valid API key.", nil),
            ("The request is missing a valid API key.", nil),
            ("invalid_code : lower case is not a server string", nil),
            ("", nil),
            (" : detail only", nil),
        ] as [(String, String?)])
    func serverStringOfMessage(_ message: String, _ expected: String?) {
        #expect(FirebaseWire.serverCode(fromMessage: message) == expected)
    }

    @Test("the `CODE : detail` form and the bare form map alike")
    func detailForm() {
        for (message, code) in [
            (
                "QUOTA_EXCEEDED : Exceeded per phone number quota for sending verification codes",
                GatewayError.Code.providerRateLimited
            ),
            (
                "OPERATION_NOT_ALLOWED : SMS unable to be sent until this region enabled by the app developer.",
                .providerRejected
            ),
            (
                "TOO_MANY_ATTEMPTS_TRY_LATER : Too many unsuccessful login attempts. Please try again later.",
                .rateLimited
            ),
            ("INVALID_APP_CREDENTIAL", .appVerificationFailed),
        ] {
            let error = Self.map(Self.envelope(message))
            #expect(error.code == code, "\(message)")
            #expect(error.vendor?.code == FirebaseWire.serverCode(fromMessage: message))
        }
    }

    @Test(
        "an unknown server string falls back by HTTP status and is kept as the vendor code",
        arguments: [
            (400, GatewayError.Code.providerRejected), (401, .providerAuthFailed), (403, .providerAuthFailed),
            (404, .notFound), (429, .providerRateLimited), (500, .providerUnavailable), (503, .providerUnavailable),
            (302, .providerError),
        ])
    func unknownStringFallsBack(_ status: Int, _ code: GatewayError.Code) {
        let error = Self.map(Self.envelope("SOMETHING_NEW : a detail"), status: status)
        #expect(error.code == code)
        #expect(error.vendor?.code == "SOMETHING_NEW")
        #expect(error.vendor?.httpStatus == status)
    }

    @Test("a body that is not Google's envelope falls back by status with no vendor code")
    func noEnvelope() {
        let error = Self.map(nil, status: 502)
        #expect(error.code == .providerUnavailable)
        #expect(error.vendor?.code == nil)
        #expect(error.message.contains("HTTP 502"))
    }

    @Test("the Auth Emulator's missing-key 403 is provider_auth_failed; a long free-text reason is not kept")
    func missingKey() {
        let forbidden = Self.map(
            Self.envelope("The request is missing a valid API key.", reason: "forbidden", status: "PERMISSION_DENIED"),
            status: 403)
        #expect(forbidden.code == .providerAuthFailed)
        #expect(forbidden.vendor?.code == "forbidden")
        let odd = Self.map(Self.envelope("Something", reason: "a reason with spaces and +16505553434"), status: 400)
        #expect(odd.vendor?.code == nil)
    }

    @Test("a known server string wins over a known reason")
    func serverStringFirst() {
        let error = Self.map(Self.envelope("INVALID_CODE", reason: "keyInvalid"))
        #expect(error.code == .incorrectCode)
        #expect(error.vendor?.code == "INVALID_CODE")
    }

    @Test("Retry-After is carried when Google sends it")
    func retryAfter() {
        let error = FirebaseErrorMapping.map(
            envelope: Self.envelope("QUOTA_EXCEEDED"), httpStatus: 429, retryAfter: 30, providerID: "firebase")
        #expect(error.retryAfter == 30)
    }
}
