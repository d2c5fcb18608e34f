import Foundation
import GatewayCore
import GatewayKitCrypto
import HTTPTypes
import Logging

/// Firebase phone sign-in (Identity Toolkit v1), emulated on the wire, for the sandbox and for tests.
///
/// Paths are relative to the mount point and follow the Auth Emulator's layout, which puts the production
/// host first (docs/vendors/firebase.md §4):
///
/// - `POST /identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode?key=…`
/// - `POST /identitytoolkit.googleapis.com/v1/accounts:signInWithPhoneNumber?key=…`
/// - `POST /identitytoolkit.googleapis.com/v2/accounts/mfaSignIn:start` and `:finalize`,
///   `POST /identitytoolkit.googleapis.com/v2/accounts/mfaEnrollment:start` and `:finalize`: phone second factors
/// - `POST /identitytoolkit.googleapis.com/v1/accounts:signUp` and `accounts:signInWithPassword`: the email and
///   password first factor, so a sandbox user reaches the second-factor state (an admin sign-up, with the Auth
///   Emulator's `Authorization: Bearer owner`, may also verify the email and enroll phone factors)
/// - `GET /emulator/v1/projects/{projectId}/verificationCodes`: the pending codes, in the Auth Emulator's shape
/// - `GET /www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com`: the key of the
///   ID tokens, in Google's JWK form
///
/// Unlike the Auth Emulator, it behaves like production where the gateway must cope: the API key must be
/// the configured one; a send needs an app-verification proof (any non-empty token passes, the literal
/// ``FirebaseSandbox/rejectedProofToken`` is refused); codes expire (``defaultCodeLifetime``, our choice:
/// Firebase publishes no lifetime); a session allows ``defaultMaxWrongCodes`` wrong codes (our choice:
/// Firebase documents no cap) and then answers `TOO_MANY_ATTEMPTS_TRY_LATER` until it expires; an optional
/// per-number hourly quota answers `QUOTA_EXCEEDED`; ID tokens are RS256-signed with a key made in memory on
/// first use (never saved: a restarted sandbox has a new key). Test numbers send nothing
/// and need no proof. Errors use Google's envelope. Every code "sent" is recorded in the ``SandboxOutbox``.
/// The fault switch applies to the Identity Toolkit paths, not to the inspection endpoints.
public final class FirebaseEmulator: ContextEmulator {
    /// How long a code stays valid unless told otherwise: 5 minutes. Firebase does not publish the
    /// lifetime (docs/vendors/firebase.md §5, uncertain); this is the sandbox's choice.
    public static let defaultCodeLifetime: TimeInterval = 300
    /// Wrong codes a session takes before it is locked: our choice, Firebase documents none.
    public static let defaultMaxWrongCodes = 5
    /// How long a first factor's pending credential lasts: 5 minutes, our choice (Firebase publishes none).
    public static let defaultPendingCredentialLifetime: TimeInterval = 300
    /// Second factors one user may enroll: our choice (Firebase answers `SECOND_FACTOR_LIMIT_EXCEEDED` past its
    /// own limit, which the sources read do not give).
    public static let maxSecondFactors = 5

    /// The fault switch tests and the sandbox use to make this emulated Firebase misbehave.
    public let faults = FaultSwitch()
    /// Rows of ``FirebaseErrorMapping/table`` armed to answer the next call of their operation (tests only).
    package let errors = EmulatorErrorSwitch()

    let apiKey: String
    let projectID: String
    let testNumbers: FirebaseTestNumbers
    let codeLifetime: TimeInterval
    let maxWrongCodes: Int
    let maxSendsPerNumberPerHour: Int?
    let pendingCredentialLifetime: TimeInterval
    /// The clock, outbox, logger and callback sender the emulator was built with.
    public let context: EmulatorContext
    /// Sessions, users and send times, as rows read and written per call (``FirebaseEmulatorState``).
    let state: any EmulatorTable
    /// The ID-token key, made on first use (a sign-in or a key-set request): an RSA key takes a noticeable
    /// moment to make, and most sandboxes and tests never need one.
    private let signingKey: LazyRS256SigningKey

    /// Builds an emulator of one Firebase project.
    ///
    /// - Parameters:
    ///   - context: the clock, the outbox the "sent" codes go to, and the logger.
    ///   - apiKey: the only Web API key accepted.
    ///   - projectID: the project (ID token audience, `verificationCodes` path).
    ///   - testNumbers: fictional numbers and their fixed 6-digit codes; at most 10 are kept (Firebase's
    ///     limit), and malformed entries are dropped with a warning.
    ///   - codeLifetime: seconds before a code answers `SESSION_EXPIRED`.
    ///   - maxWrongCodes: wrong codes before a session answers `TOO_MANY_ATTEMPTS_TRY_LATER`.
    ///   - maxSendsPerNumberPerHour: sends allowed to one number per hour before `QUOTA_EXCEEDED`; `nil`
    ///     for no limit (test numbers never count).
    ///   - pendingCredentialLifetime: seconds a first factor's pending credential lasts before a multi-factor
    ///     sign-in answers `INVALID_MFA_PENDING_CREDENTIAL`.
    public init(
        context: EmulatorContext,
        apiKey: String = FirebaseSandbox.apiKey,
        projectID: String = FirebaseSandbox.projectID,
        testNumbers: [String: String] = FirebaseSandbox.testNumbers,
        codeLifetime: TimeInterval = FirebaseEmulator.defaultCodeLifetime,
        maxWrongCodes: Int = FirebaseEmulator.defaultMaxWrongCodes,
        maxSendsPerNumberPerHour: Int? = nil,
        pendingCredentialLifetime: TimeInterval = FirebaseEmulator.defaultPendingCredentialLifetime
    ) {
        self.pendingCredentialLifetime = pendingCredentialLifetime
        self.apiKey = apiKey
        self.projectID = projectID
        let (numbers, rejected) = FirebaseTestNumbers.lenient(testNumbers)
        self.testNumbers = numbers
        self.codeLifetime = codeLifetime
        self.maxWrongCodes = max(1, maxWrongCodes)
        self.maxSendsPerNumberPerHour = maxSendsPerNumberPerHour
        self.context = context
        signingKey = LazyRS256SigningKey(
            keyIDBytes: 20, logger: context.logger, failure: "firebase sandbox could not make its token signing key")
        let table = context.persistence.table(FirebaseEmulatorState.table)
        self.state = table
        let now = context.clock.now
        table.moveSaved(context.persistence.load(), context: context, "firebase sandbox state") {
            try FirebaseEmulatorState(rows: $0, now: now).move($1)
        }
        if rejected > 0 {
            logger.warning("firebase sandbox ignored test numbers", metadata: ["count": "\(rejected)"])
        }
    }

    /// Runs `body` on the state as of `now` in one transaction, after pruning what is due; `nil` when the
    /// sandbox's file failed (logged), which callers answer with Google's 500.
    func withState<T: Sendable>(now: Date, _ body: @escaping @Sendable (FirebaseEmulatorState) throws -> T) async -> T?
    {
        await state.attempt("firebase sandbox state", logger: logger, now: now, body)
    }

    /// Google's answer when the emulated backend fails.
    static func backendError() -> TransportResponse {
        error(500, message: "Internal error encountered.", status: "INTERNAL", reason: "backendError")
    }

    /// The token signer, made the first time it is needed; `nil` only if the system could not make an RSA
    /// key (sign-ins then answer 500, and the next one tries again).
    var signer: FirebaseIDTokenSigner? { signingKey.current.map(FirebaseIDTokenSigner.init(key:)) }

    /// Answers one request as Identity Toolkit (or the Auth Emulator's inspection API) would; what it
    /// changed is saved within the call's transaction.
    public func handle(_ request: EmulatorRequest) async -> EmulatorResponse {
        await route(request)
    }

    private func route(_ request: EmulatorRequest) async -> EmulatorResponse {
        let path = request.path.removingPercentEncoding ?? request.path
        let toolkit = "/" + FirebaseWire.identityToolkitHost
        if let operation = Self.operations[String(path.dropFirst(toolkit.count))], path.hasPrefix(toolkit),
            let row = errors.take(operation: operation.name)
        {
            return .response(Self.answer(row))
        }
        switch path {
        case toolkit + FirebaseWire.sendVerificationCodePath:
            guard request.method == .post else { return .response(Self.notFound()) }
            return await withFaults(serverError: Self.serverError) { .response(await sendVerificationCode(request)) }
        case toolkit + FirebaseWire.signInWithPhoneNumberPath:
            guard request.method == .post else { return .response(Self.notFound()) }
            return await withFaults(serverError: Self.serverError) { .response(await signInWithPhoneNumber(request)) }
        case toolkit + FirebaseWire.mfaSignInStartPath, toolkit + FirebaseWire.mfaSignInFinalizePath,
            toolkit + FirebaseWire.mfaEnrollmentStartPath, toolkit + FirebaseWire.mfaEnrollmentFinalizePath,
            toolkit + FirebaseWire.signUpPath, toolkit + FirebaseWire.signInWithPasswordPath:
            guard request.method == .post else { return .response(Self.notFound()) }
            let method = String(path.dropFirst(toolkit.count))
            return await withFaults(serverError: Self.serverError) { .response(await multiFactor(method, request)) }
        case FirebaseWire.jwksPath:
            guard request.method == .get else { return .response(Self.notFound()) }
            guard let signer else { return .response(Self.backendError()) }
            return .response(Self.json(signer.key.keySet))
        default:
            let parts = path.split(separator: "/").map(String.init)
            if request.method == .get, parts.count == 5, parts[0] == "emulator", parts[1] == "v1",
                parts[2] == "projects", parts[4] == "verificationCodes"
            {
                return .response(await verificationCodes(project: parts[3]))
            }
            return .response(Self.notFound())
        }
    }

    /// The provider's operation behind each Identity Toolkit method, for the error switch.
    static let operations: [String: VendorOperation] = [
        FirebaseWire.sendVerificationCodePath: .send, FirebaseWire.signInWithPhoneNumberPath: .signIn,
        FirebaseWire.mfaSignInStartPath: .mfaSignInStart, FirebaseWire.mfaSignInFinalizePath: .mfaSignInFinalize,
        FirebaseWire.mfaEnrollmentStartPath: .mfaEnrollmentStart,
        FirebaseWire.mfaEnrollmentFinalizePath: .mfaEnrollmentFinalize,
    ]

    /// An armed row as Identity Toolkit answers it: a server string as a business error (400), a Google-level
    /// reason in the envelope's `errors` (400, as for a key that is not valid).
    static func answer(_ row: VendorErrorRow) -> TransportResponse {
        guard row.field == .reason else { return refusal(row.value) }
        return error(
            400, message: "API key not valid. Please pass a valid API key.", status: "INVALID_ARGUMENT",
            reason: row.value, domain: "usageLimits")
    }

    // MARK: inspection

    /// `GET /emulator/v1/projects/{projectId}/verificationCodes`: the codes still waiting, oldest first. As
    /// in the Auth Emulator, another project is simply empty.
    func verificationCodes(project: String) async -> TransportResponse {
        let now = clock.now
        var pending: [FirebaseWire.VerificationCodesResponse.VerificationCode] = []
        if project == projectID {
            guard
                let waiting = await withState(
                    now: now,
                    { state in
                        try state.waitingSessions().map {
                            FirebaseWire.VerificationCodesResponse.VerificationCode(
                                code: $0.session.code, phoneNumber: $0.session.phoneNumber, sessionInfo: $0.sessionInfo)
                        }
                    })
            else { return Self.backendError() }
            pending = waiting
        }
        return Self.json(FirebaseWire.VerificationCodesResponse(verificationCodes: pending))
    }

    // MARK: authentication

    /// `nil` when the request carries the project's API key (`?key=` or `x-goog-api-key`); otherwise
    /// Google's answer: 403 `PERMISSION_DENIED` for a missing key (as the Auth Emulator), 400 with reason
    /// `keyInvalid` for a wrong one (docs/vendors/firebase.md §3.1).
    func apiKeyRefusal(_ request: EmulatorRequest) -> TransportResponse? {
        var key = request.queryItems["key"]
        if key?.isEmpty ?? true, let name = FirebaseWire.apiKeyHeader { key = request.headerFields[name] }
        guard let key, !key.isEmpty else {
            return Self.error(
                403, message: "The request is missing a valid API key.", status: "PERMISSION_DENIED",
                reason: "forbidden")
        }
        guard ConstantTime.equals(key, apiKey) else {
            return Self.error(
                400, message: "API key not valid. Please pass a valid API key.", status: "INVALID_ARGUMENT",
                reason: "keyInvalid", domain: "usageLimits")
        }
        return nil
    }
}
