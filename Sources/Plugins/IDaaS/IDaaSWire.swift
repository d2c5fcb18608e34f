import Foundation
import GatewayCore
import HTTPTypes

/// BambooCloud IDaaS's SDK REST family (`/api/v2/sdk/*`, the calls its AuthnCenter mobile SDKs wrap) on the
/// wire: default paths, header names and the JSON bodies, shared by the provider (which encodes requests and
/// decodes answers) and the emulator (the other way round). Facts: the vendor notes (docs/idaas.md); every path and
/// header name here is only a default, each one is a provider setting (docs/vendors/idaas.md §4, §5).
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

    /// `GET /api/v2/sdk/captcha` answer (docs/vendors/idaas.md §2.1; camelCase as documented). Unused fields are
    /// decoded leniently: every field is optional.
    struct CaptchaResponse: Codable, Sendable, Equatable {
        var captchaId: String?
        var projectCode: String?
        var captchaOriginalPath: String?
        var captchaFontType: String?
        var captchaFontSize: Int?
        var secretKey: String?
        var originalImageBase64: String?
        var point: Point?
        var jigsawImageBase64: String?
        var wordList: [String]?
        var pointList: [Point]?
        var pointJson: String?
        var token: String?
        var result: Bool?
        var captchaVerification: String?
    }

    struct Point: Codable, Sendable, Equatable {
        var x: Double
        var y: Double
    }

    /// `POST /api/v2/sdk/captcha/verify` request (docs/vendors/idaas.md §2.2): `point_json` is a JSON *string*.
    struct CaptchaVerifyRequest: Codable, Sendable, Equatable {
        var pointJSON: String?
        var token: String?
        var sender: String?

        enum CodingKeys: String, CodingKey {
            case pointJSON = "point_json"
            case token, sender
        }
    }

    struct CaptchaVerifyResponse: Codable, Sendable, Equatable {
        var captchaToken: String?

        enum CodingKeys: String, CodingKey {
            case captchaToken = "captcha_token"
        }
    }

    /// `POST /api/v2/sdk/sms/send` request (docs/vendors/idaas.md §2.3). Success is 200 with an empty body.
    struct SMSSendRequest: Codable, Sendable, Equatable {
        var mobile: String?
        var type: String?
        var captchaToken: String?

        enum CodingKeys: String, CodingKey {
            case mobile, type
            case captchaToken = "captcha_token"
        }
    }

    /// `POST /api/v2/sdk/login/mobile-verify-code` request (docs/vendors/idaas.md §2.4).
    struct SMSLoginRequest: Codable, Sendable, Equatable {
        var mobile: String?
        var verifyCode: String?

        enum CodingKeys: String, CodingKey {
            case mobile
            case verifyCode = "verify_code"
        }
    }

    /// The login answer and the refresh answer (docs/vendors/idaas.md §2.4, §2.5). `expire` is a number of seconds.
    struct TokenResponse: Codable, Sendable, Equatable {
        var sessionToken: String?
        var expire: Int?
        var status: String?
        var idToken: String?
        /// Sent with `MFA_AUTH` (docs/vendors/idaas.md §2.4) in the `X-state-token` flow; read when present.
        var stateToken: String?

        enum CodingKeys: String, CodingKey {
            case sessionToken = "session_token"
            case expire, status
            case idToken = "id_token"
            case stateToken = "state_token"
        }
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

        enum CodingKeys: String, CodingKey {
            case errorCode = "error_code"
            case errorMsg = "error_msg"
            case error
        }

        /// The structured code: `error_code`, else the OAuth `error`.
        var code: String? { errorCode ?? error }
    }

    /// A JSON Web Key Set (RFC 7517), RSA keys only.
    struct JWKSet: Codable, Sendable, Equatable {
        var keys: [JWK]
    }

    struct JWK: Codable, Sendable, Equatable {
        var kty: String
        var alg: String?
        var use: String?
        var kid: String?
        var n: String?
        var e: String?
    }

    /// The claims the gateway reads from an ID token: the registered ones, the user information the SDK's
    /// `getUserInfoFromIdTokenWithIdToken` returns (`id`, `name`, `userName`, `mobile`, `email`, [BC-IOS]),
    /// `api` as observed ([MAITUX]) and `phone_number`.
    struct IDTokenClaims: Codable, Sendable, Equatable {
        var iss: String?
        var sub: String?
        var aud: Audience?
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

        init(
            iss: String? = nil, sub: String? = nil, aud: Audience? = nil, exp: Double? = nil, iat: Double? = nil,
            api: String? = nil, phoneNumber: String? = nil, id: String? = nil, name: String? = nil,
            userName: String? = nil, mobile: String? = nil, email: String? = nil
        ) {
            self.iss = iss
            self.sub = sub
            self.aud = aud
            self.exp = exp
            self.iat = iat
            self.api = api
            self.phoneNumber = phoneNumber
            self.id = id
            self.name = name
            self.userName = userName
            self.mobile = mobile
            self.email = email
        }

        enum CodingKeys: String, CodingKey {
            case iss, sub, aud, exp, iat, api, id, name, userName, mobile, email
            case phoneNumber = "phone_number"
        }
    }

    /// `aud` is a string or an array of strings (RFC 7519 §4.1.3).
    struct Audience: Codable, Sendable, Equatable {
        var values: [String]

        init(_ values: [String]) { self.values = values }

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let one = try? container.decode(String.self) {
                values = [one]
            } else {
                values = try container.decode([String].self)
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            if values.count == 1 { try container.encode(values[0]) } else { try container.encode(values) }
        }
    }

    /// The error code shape IDaaS uses (`IDAAS.SDK.CAPTCHA.0007`, `SDK.LOGIN.1003`, `USER.0001`): bounded,
    /// letters, digits, `.` and `_`, so it is safe to keep and log.
    static func isBoundedCode(_ value: String) -> Bool {
        (1...64).contains(value.count)
            && value.unicodeScalars.allSatisfy {
                ("A"..."Z").contains($0) || ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "."
                    || $0 == "_"
            }
    }
}
