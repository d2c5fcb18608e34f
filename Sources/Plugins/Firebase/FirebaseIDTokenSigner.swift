import Foundation
import GatewayCore
import GatewayKitCrypto

/// Signs the emulator's Firebase ID tokens as Google does: JWTs with `alg: RS256` and a `kid`, verifiable
/// with the key the emulator publishes in JWK form (docs/vendors/firebase.md §5, [ADMIN] `_token_gen.py`).
///
/// The Auth Emulator itself issues unsigned tokens (docs/vendors/firebase.md §4); this sandbox signs them with the
/// kit's ``RS256SigningKey`` (2048 bits, made on first use, a 40-digit `kid`), so code that verifies real Firebase
/// tokens can be pointed at it unchanged except for the key URL. The key lives only in memory: a restarted sandbox
/// has a new one.
struct FirebaseIDTokenSigner: Sendable {
    /// The claims of an ID token: a phone sign-in's, or an email and password user's (with the second factor
    /// it passed, after a multi-factor sign-in or enrollment).
    struct Claims: Codable, Sendable, Equatable {
        var iss: String
        var aud: String
        var authTime: Int
        var userID: String
        var sub: String
        var iat: Int
        var exp: Int
        var phoneNumber: String?
        var email: String?
        var emailVerified: Bool?
        var firebase: FirebaseClaim

        struct FirebaseClaim: Codable, Sendable, Equatable {
            var identities: [String: [String]]
            var signInProvider: String
            /// `phone` once the user passed a phone second factor ([EMU] `FirebaseJwtPayload`).
            var signInSecondFactor: String?
            /// The enrollment id of that factor.
            var secondFactorIdentifier: String?

            enum CodingKeys: String, CodingKey {
                case identities
                case signInProvider = "sign_in_provider"
                case signInSecondFactor = "sign_in_second_factor"
                case secondFactorIdentifier = "second_factor_identifier"
            }
        }

        enum CodingKeys: String, CodingKey {
            case iss, aud, sub, iat, exp, firebase, email
            case authTime = "auth_time"
            case userID = "user_id"
            case phoneNumber = "phone_number"
            case emailVerified = "email_verified"
        }

        /// The claims Firebase puts in a token of `localID`: issuer and audience from the project, `sub` =
        /// `user_id` = the uid, one hour of validity.
        private init(projectID: String, localID: String, issuedAt: Date, firebase: FirebaseClaim) {
            let now = Int(issuedAt.timeIntervalSince1970)
            iss = "https://securetoken.google.com/\(projectID)"
            aud = projectID
            authTime = now
            userID = localID
            sub = localID
            iat = now
            exp = now + FirebaseIDTokenSigner.lifetime
            self.firebase = firebase
        }

        /// A phone sign-in's token.
        init(projectID: String, localID: String, phoneNumber: String, issuedAt: Date) {
            self.init(
                projectID: projectID, localID: localID, issuedAt: issuedAt,
                firebase: FirebaseClaim(identities: ["phone": [phoneNumber]], signInProvider: "phone"))
            self.phoneNumber = phoneNumber
        }

        /// An email and password user's token; `secondFactor` is the enrollment id of the phone factor the user
        /// passed (a multi-factor sign-in) or just enrolled.
        init(
            projectID: String, localID: String, email: String, emailVerified: Bool, secondFactor: String?,
            issuedAt: Date
        ) {
            self.init(
                projectID: projectID, localID: localID, issuedAt: issuedAt,
                firebase: FirebaseClaim(
                    identities: ["email": [email]], signInProvider: "password",
                    signInSecondFactor: secondFactor == nil ? nil : "phone", secondFactorIdentifier: secondFactor))
            self.email = email
            self.emailVerified = emailVerified
        }
    }

    /// Why ``verify(_:projectID:now:)`` refused a token.
    enum Refusal: Error, Equatable {
        /// Not a JWS of this key, or not for this project: Identity Toolkit's `INVALID_ID_TOKEN`.
        case invalid
        /// Past its `exp`: `TOKEN_EXPIRED`.
        case expired
    }

    /// Seconds an ID token is valid, as Firebase's (`expiresIn` "3600").
    static let lifetime = 3600

    let key: RS256SigningKey

    /// A compact JWS: base64url(header).base64url(claims).base64url(RSASSA-PKCS1-v1_5 SHA-256 signature).
    func sign(_ claims: Claims) throws -> String { try key.sign(claims) }

    /// The claims of a token this key signed for `projectID`, if it is valid at `now`: an RS256 JWS whose `kid`
    /// is this key's and whose signature verifies, with the project's issuer and audience, not expired.
    func verify(_ token: String, projectID: String, now: Date) throws(Refusal) -> Claims {
        guard let claims = key.verified(token)?.claims(Claims.self), claims.aud == projectID,
            claims.iss == "https://securetoken.google.com/\(projectID)", !claims.sub.isEmpty
        else { throw .invalid }
        guard Double(claims.exp) > now.timeIntervalSince1970 else { throw .expired }
        return claims
    }
}
