import Foundation
import GatewayCore
import HTTPTypes

/// Identity Toolkit v1 on the wire: paths, headers and the camelCase JSON bodies, shared by the
/// provider (which encodes requests and decodes answers) and the emulator (the other way round).
///
/// Field names follow the v1 discovery document as docs/vendors/firebase.md §2 ([SPEC]) gives them.
enum FirebaseWire {
    // MARK: paths

    /// The production host, which the Auth Emulator also uses as its first path segment (docs/vendors/firebase.md §4).
    static let identityToolkitHost = "identitytoolkit.googleapis.com"
    static let sendVerificationCodePath = "/v1/accounts:sendVerificationCode"
    static let signInWithPhoneNumberPath = "/v1/accounts:signInWithPhoneNumber"
    /// Identity Toolkit v2's multi-factor methods ([SPEC] v2: `accounts.mfaSignIn.start`/`.finalize`,
    /// `accounts.mfaEnrollment.start`/`.finalize`).
    static let mfaSignInStartPath = "/v2/accounts/mfaSignIn:start"
    static let mfaSignInFinalizePath = "/v2/accounts/mfaSignIn:finalize"
    static let mfaEnrollmentStartPath = "/v2/accounts/mfaEnrollment:start"
    static let mfaEnrollmentFinalizePath = "/v2/accounts/mfaEnrollment:finalize"
    /// The email and password first factor: the gateway never calls these; the emulator serves them so that a
    /// sandbox user reaches the second-factor state (a pending credential, or an ID token to enroll with).
    static let signUpPath = "/v1/accounts:signUp"
    static let signInWithPasswordPath = "/v1/accounts:signInWithPassword"
    /// Where Google publishes the keys of Firebase ID tokens in JWK form (docs/vendors/firebase.md §5).
    static let jwksPath = "/www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com"

    // MARK: headers

    /// Localizes the SMS (docs/vendors/firebase.md §1, §5).
    static let localeHeader = HTTPField.Name("X-Firebase-Locale")
    /// Required with `iosReceipt` (docs/vendors/firebase.md §1).
    static let iosBundleHeader = HTTPField.Name("X-Ios-Bundle-Identifier")
    /// The header form of the API key (docs/vendors/firebase.md §1, [SPEC] `apiKeyHeader`).
    static let apiKeyHeader = HTTPField.Name("x-goog-api-key")

    /// The language subtag of the first usable preference (`es` for `es-ES`, `pt` for `pt_BR`), lower-cased,
    /// as `X-Firebase-Locale` takes a language code. `nil` when no preference has a 2-3 letter language.
    static func language(from preferences: [String]) -> String? {
        for preference in preferences {
            let tag = preference.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "_", with: "-")
            guard let subtag = tag.split(separator: "-").first else { continue }
            let language = subtag.lowercased()
            if ASCIIText.isToken(language, length: 2...3), language.allSatisfy(\.isLetter) { return language }
        }
        return nil
    }

    // MARK: values

    static let clientTypeWeb = "CLIENT_TYPE_WEB"
    /// Identity Toolkit's `clientType` values (docs/vendors/firebase.md §2.1).
    static let clientTypes: Set<String> = [
        "CLIENT_TYPE_UNSPECIFIED", clientTypeWeb, "CLIENT_TYPE_ANDROID", "CLIENT_TYPE_IOS",
    ]

    /// The `clientType` for the app's platform: what each client SDK sends (iOS always `CLIENT_TYPE_IOS`);
    /// web when the backend did not say.
    static func clientType(for platform: ClientContext.Platform?) -> String {
        switch platform {
        case .ios: return "CLIENT_TYPE_IOS"
        case .android: return "CLIENT_TYPE_ANDROID"
        case .web, nil: return clientTypeWeb
        }
    }
    static let recaptchaEnterprise = "RECAPTCHA_ENTERPRISE"

    // MARK: bodies

    /// `accounts:sendVerificationCode` request (docs/vendors/firebase.md §2.1), and v2's `StartMfaPhoneRequestInfo`
    /// (the same fields but `tenantId`, [SPEC]): the number (for an enrollment's) and the app-verification proof.
    /// Absent fields are omitted. The emulator alone reads `safetyNetToken`: the gateway no longer sends SafetyNet.
    struct SendVerificationCodeRequest: Codable, Sendable, Equatable {
        var phoneNumber: String?
        var recaptchaToken: String?
        var captchaResponse: String?
        var clientType: String?
        var recaptchaVersion: String?
        var iosReceipt: String?
        var iosSecret: String?
        var playIntegrityToken: String?
        var safetyNetToken: String?
        var tenantId: String?
    }

    /// The answer of a send: `accounts:sendVerificationCode`'s `sessionInfo` (the opaque session the SDKs call the
    /// verification ID), or v2's, in `phoneResponseInfo` (`mfaSignIn:start`) or `phoneSessionInfo`
    /// (`mfaEnrollment:start`).
    struct SendResponse: Codable, Sendable, Equatable {
        var sessionInfo: String?
        var phoneResponseInfo: Session?
        var phoneSessionInfo: Session?

        struct Session: Codable, Sendable, Equatable {
            var sessionInfo: String?
        }
    }

    /// `accounts:signInWithPhoneNumber` request (docs/vendors/firebase.md §2.2). The gateway sends only `sessionInfo`
    /// and `code`; the other fields are decoded by the emulator so it can answer them as Firebase does.
    struct SignInWithPhoneNumberRequest: Codable, Sendable, Equatable {
        var sessionInfo: String?
        var code: String?
        var temporaryProof: String?
        var phoneNumber: String?
        var idToken: String?
    }

    /// A sign-in's answer. `accounts:signInWithPhoneNumber`'s: tokens, or a temporary proof when the phone is
    /// verified but already linked to another account (docs/vendors/firebase.md §2.2). Both v2 finalize methods':
    /// the user's new tokens, `idToken` and `refreshToken` (after an enrollment, tokens that reflect it).
    struct SignInResponse: Codable, Sendable, Equatable {
        var idToken: String?
        var refreshToken: String?
        /// Seconds, as a string in Google's JSON (int64); a number is accepted too.
        var expiresIn: LenientString?
        var localId: String?
        var isNewUser: Bool?
        var phoneNumber: String?
        var temporaryProof: String?
        var temporaryProofExpiresIn: LenientString?
    }

    // MARK: multi-factor bodies (Identity Toolkit v2)

    /// `accounts/mfaSignIn:start` request: the first factor's pending credential and the factor to verify.
    struct StartMfaSignInRequest: Codable, Sendable, Equatable {
        var mfaPendingCredential: String?
        var mfaEnrollmentId: String?
        var phoneSignInInfo: SendVerificationCodeRequest?
        var tenantId: String?
    }

    /// `accounts/mfaEnrollment:start` request: the signed-in user's ID token and the number to enroll.
    struct StartMfaEnrollmentRequest: Codable, Sendable, Equatable {
        var idToken: String?
        var phoneEnrollmentInfo: SendVerificationCodeRequest?
        var tenantId: String?
    }

    /// `FinalizeMfaPhoneRequestInfo`: the session and the code the user typed.
    struct FinalizeMfaPhoneRequestInfo: Codable, Sendable, Equatable {
        var sessionInfo: String?
        var code: String?
        var phoneNumber: String?
        var androidVerificationProof: String?
    }

    /// `accounts/mfaSignIn:finalize` request.
    struct FinalizeMfaSignInRequest: Codable, Sendable, Equatable {
        var mfaPendingCredential: String?
        var mfaEnrollmentId: String?
        var phoneVerificationInfo: FinalizeMfaPhoneRequestInfo?
        var tenantId: String?
    }

    /// `accounts/mfaEnrollment:finalize` request.
    struct FinalizeMfaEnrollmentRequest: Codable, Sendable, Equatable {
        var idToken: String?
        var phoneVerificationInfo: FinalizeMfaPhoneRequestInfo?
        var displayName: String?
        var tenantId: String?
    }

    // MARK: first-factor bodies (the emulator's; Identity Toolkit v1)

    /// `GoogleCloudIdentitytoolkitV1MfaFactor`: a factor an admin `accounts:signUp` enrolls.
    struct MfaFactor: Codable, Sendable, Equatable {
        var phoneInfo: String?
        var displayName: String?
    }

    /// `GoogleCloudIdentitytoolkitV1MfaEnrollment`: an enrolled factor, as a first-factor sign-in lists it (the
    /// number obfuscated but for its last four digits).
    struct MfaEnrollment: Codable, Sendable, Equatable {
        var mfaEnrollmentId: String?
        var displayName: String?
        var phoneInfo: String?
        var enrolledAt: String?
    }

    /// `accounts:signUp` and `accounts:signInWithPassword` request: a client's (email and password) or, for a
    /// sign-up, an admin's, which may also set the email verified and enroll phone factors.
    struct FirstFactorRequest: Codable, Sendable, Equatable {
        var email: String?
        var password: String?
        var displayName: String?
        var emailVerified: Bool?
        var mfaInfo: [MfaFactor]?
        var returnSecureToken: Bool?
    }

    /// `accounts:signUp` and `accounts:signInWithPassword` answer: tokens, or, for a user with second factors
    /// signing in, the pending credential and the factors to choose from.
    struct FirstFactorResponse: Codable, Sendable, Equatable {
        var kind: String?
        var localId: String?
        var email: String?
        var displayName: String?
        var registered: Bool?
        var idToken: String?
        var refreshToken: String?
        var expiresIn: LenientString?
        var mfaPendingCredential: String?
        var mfaInfo: [MfaEnrollment]?
    }

    /// `GET /emulator/v1/projects/{projectId}/verificationCodes` (docs/vendors/firebase.md §4).
    struct VerificationCodesResponse: Codable, Sendable, Equatable {
        var verificationCodes: [VerificationCode]

        struct VerificationCode: Codable, Sendable, Equatable {
            var code: String
            var phoneNumber: String
            var sessionInfo: String
        }
    }

    /// Google's error envelope (docs/vendors/firebase.md §3.1).
    struct ErrorEnvelope: Codable, Sendable, Equatable {
        var error: Body

        struct Body: Codable, Sendable, Equatable {
            var code: Int?
            /// `SERVER_CODE`, optionally followed by `" : detail"`; for Google-level errors, plain text.
            var message: String?
            var errors: [Item]?
            /// The canonical status (`INVALID_ARGUMENT`, `PERMISSION_DENIED`), present on some errors.
            var status: String?
        }

        struct Item: Codable, Sendable, Equatable {
            var message: String?
            var domain: String?
            var reason: String?
        }
    }

    /// The structured server code of an error `message`: the part before the first `:` (iOS and
    /// admin-python split there, JS at `" : "`, which is the same for every observed message), when it
    /// has the shape of a server code (`A`-`Z`, digits, `_`). Google-level messages ("API key not
    /// valid…") have no server code and give `nil`; the detail text is never used.
    static func serverCode(fromMessage message: String?) -> String? {
        guard let message else { return nil }
        let head = message.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let code = head.trimmingCharacters(in: .whitespaces)
        guard ASCIIText.isToken(code, length: 1...80, extra: "_"), code == code.uppercased(),
            code.first?.isLetter == true
        else { return nil }
        return code
    }

    /// A JSON value Google writes as a string (int64 fields such as `expiresIn`) that a client should also
    /// accept as a number.
    struct LenientString: Codable, Sendable, Equatable {
        var value: String

        init(_ value: String) { self.value = value }

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) {
                value = text
            } else if let number = try? container.decode(Int64.self) {
                value = String(number)
            } else {
                value = String(try container.decode(Double.self))
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(value)
        }
    }
}
