import Foundation
import GatewayCore
import HTTPTypes

/// BambooCloud IDaaS's SDK REST family (`/api/v2/sdk/*`, the calls its AuthnCenter mobile SDKs wrap) on the
/// wire: default paths, header names and the JSON bodies, shared by the provider (which encodes requests and
/// decodes answers) and the emulator (the other way round). Every path and header name here is only a default,
/// each one a provider setting (docs/vendors/idaas.md §4, §5). The calls' bodies are snake_case
/// (``SnakeCaseJSON``); the captcha, area-code and key-set answers are camelCase, read as they are.
enum IDaaSWire {
    // MARK: default paths (docs/vendors/idaas.md §2, §4)

    static let areaCodesPath = "/api/v2/sdk/country-codes"
    static let captchaPath = "/api/v2/sdk/captcha"
    static let captchaVerifyPath = "/api/v2/sdk/captcha/verify"
    static let smsSendPath = "/api/v2/sdk/sms/send"
    static let smsLoginPath = "/api/v2/sdk/login/mobile-verify-code"
    static let refreshPath = "/api/v2/sdk/sso/session-token/id-token"
    /// ASSUMED for CIAM: seen in third-party code for a bccastle tenant (docs/vendors/idaas.md §2.7, [JWKS-3P]).
    static let jwksPath = "/api/v1/oauth2/keys"

    // MARK: default header names (docs/vendors/idaas.md §1)

    static let clientIDHeader = "X-client-id"
    static let osHeader = "X-operating-sys-version"
    static let fingerprintHeader = "X-device-fingerprint"
    static let ipHeader = "X-device-ip"
    static let agentHeader = "X-agent"
    static let languageHeader = "X-L"
    /// The refresh call's session header (docs/vendors/idaas.md §2.5).
    static let sessionTokenHeader = "session-token"

    // MARK: values

    /// `type` of `sms/send` for a login code (docs/vendors/idaas.md §2.3).
    static let loginSMSType = "LOGIN_SMS"
    /// `captcha_token` is the captcha token, this joiner and the `point_json` (docs/vendors/idaas.md §2.2).
    static let captchaTokenJoiner = "---"
    /// y is always 5.0 in the documented examples (docs/vendors/idaas.md §2.2).
    static let sliderY = 5.0

    /// `status` values of the login answer (docs/vendors/idaas.md §2.4).
    enum LoginStatus: String, Sendable, CaseIterable {
        case success = "SUCCESS"
        case passwordWarn = "PASSWORD_WARN"
        case passwordExpired = "PASSWORD_EXPIRED"
        case mfaAuth = "MFA_AUTH"
        case accessDenied = "ACCESS_DENIED"
    }

    // MARK: bodies

    /// `GET /api/v2/sdk/captcha` answer (docs/vendors/idaas.md §2.1; camelCase as documented): the fields read, the
    /// documented example's others being ignored.
    struct CaptchaResponse: Codable, Sendable, Equatable {
        var secretKey: String?
        var originalImageBase64: String?
        var point: Point?
        var jigsawImageBase64: String?
        var token: String?
        var result: Bool?
    }

    struct Point: Codable, Sendable, Equatable {
        var x: Double
        var y: Double
    }

    /// `POST /api/v2/sdk/captcha/verify` request (docs/vendors/idaas.md §2.2): `point_json` is a JSON *string*.
    struct CaptchaVerifyRequest: Codable, Sendable, Equatable {
        var pointJson: String?
        var token: String?
        var sender: String?
    }

    struct CaptchaVerifyResponse: Codable, Sendable, Equatable {
        var captchaToken: String?
    }

    /// `POST /api/v2/sdk/sms/send` request (docs/vendors/idaas.md §2.3). Success is 200 with an empty body.
    struct SMSSendRequest: Codable, Sendable, Equatable {
        var mobile: String?
        var type: String?
        var captchaToken: String?
    }

    /// `POST /api/v2/sdk/login/mobile-verify-code` request (docs/vendors/idaas.md §2.4).
    struct SMSLoginRequest: Codable, Sendable, Equatable {
        var mobile: String?
        var verifyCode: String?
    }

    /// The login answer and the refresh answer (docs/vendors/idaas.md §2.4, §2.5). `expire` is a number of seconds.
    struct TokenResponse: Codable, Sendable, Equatable {
        var sessionToken: String?
        var expire: Int?
        var status: String?
        var idToken: String?
        /// Sent with `MFA_AUTH` (docs/vendors/idaas.md §2.4) in the `X-state-token` flow; read when present.
        var stateToken: String?
    }

    /// `GET /api/v2/sdk/country-codes` answer (docs/vendors/idaas.md §2.6).
    struct AreaCodesResponse: Codable, Sendable, Equatable {
        var phoneAreaCodeDefinitions: [AreaCode]?
        /// The tenant's preferred entry: in the documented example the `countryCode` of one entry (`CN`).
        var preferredAreaCode: String?
    }

    struct AreaCode: Codable, Sendable, Equatable {
        var areaCode: String
        var displayMapping: [String: String]?
        var countryCode: String?
        var mobileRegex: String?
        var areaCodeSuffixes: [String]?
    }

    /// The error body of every IDaaS error, HTTP 400 (docs/vendors/idaas.md §1). The OAuth endpoints may answer
    /// `{error, error_description}` instead ([MAITUX]); both are read.
    struct ErrorBody: Codable, Sendable, Equatable {
        var errorCode: String?
        var errorMsg: String?
        var error: String?

        /// The structured code: `error_code`, else the OAuth `error`.
        var code: String? { errorCode ?? error }
    }

    /// The claims the gateway reads from an ID token: the registered ones, the user information the SDK's
    /// `getUserInfoFromIdTokenWithIdToken` returns (`id`, `name`, `userName`, `mobile`, `email`, [BC-IOS]),
    /// `api` as observed ([MAITUX]) and `phone_number`.
    struct IDTokenClaims: Codable, Sendable, Equatable {
        var iss: String?
        var sub: String?
        var aud: JWTAudience?
        var exp: Double?
        var iat: Double?
        /// A JSON *string* holding the user (`userName`), as observed ([MAITUX]).
        var api: String?
        var phoneNumber: String?
        /// The user's id at the tenant.
        var id: String?
        var name: String?
        var userName: String?
        /// `+86-13808603636` in the documented example.
        var mobile: String?
        var email: String?

        enum CodingKeys: String, CodingKey {
            case iss, sub, aud, exp, iat, api, id, name, userName, mobile, email
            case phoneNumber = "phone_number"
        }
    }
}
