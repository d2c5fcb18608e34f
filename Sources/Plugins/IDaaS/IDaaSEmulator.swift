import Foundation
import GatewayCore
import GatewayKitCrypto
import HTTPTypes
import Logging

/// BambooCloud IDaaS's SDK login family, emulated on the wire for the sandbox and for tests (docs/vendors/idaas.md §2).
///
/// Paths are the vendor's, relative to the mount point:
/// - `GET /api/v2/sdk/country-codes`: the tenant's area codes
/// - `GET /api/v2/sdk/captcha`: a new slider (a real PNG background with a cut-out at a random place, and the piece)
/// - `POST /api/v2/sdk/captcha/verify`: `{point_json, token, sender}`; an x within ``defaultTolerance`` pixels of the
///   cut-out passes and gives `captcha_token` = token `---` point_json, good for one SMS to `sender`
/// - `POST /api/v2/sdk/sms/send`: `{mobile, type, captcha_token}` → 200, empty; the code goes to the outbox
/// - `POST /api/v2/sdk/login/mobile-verify-code`: `{mobile, verify_code}` → session token and an RS256 ID token
/// - `POST /api/v2/sdk/sso/session-token/id-token`: header `session-token` → a new ID token and a rotated session token
/// - `GET /api/v1/oauth2/keys`: the ID tokens' key set (JWKS)
/// - `GET /sandbox/captchas/{token}`: a pending slider's answer — for automated tests only, IDaaS has nothing like it
///
/// Every `/api/v2/sdk/` call needs `X-client-id` (the configured one: else `IDAAS.SDK.COMMON.1012`) and the required
/// device headers `X-operating-sys-version`, `X-device-fingerprint`, `X-agent` (else `IDAAS.SDK.PARAM.0001`,
/// docs/vendors/idaas.md §1). Errors are HTTP 400 `{error_code, error_msg}`. A wrong slider spends the slider. Codes
/// live ``defaultCodeLifetime``; ``defaultMaxWrongCodes`` wrong codes in a row lock the user for
/// ``defaultLockDuration`` (the lockout of docs/vendors/idaas.md §3.2, our numbers). The fault switch applies to the
/// `/api/` paths.
public final class IDaaSEmulator: ContextEmulator {
    public static let defaultTolerance = 5
    public static let defaultCaptchaLifetime: TimeInterval = 120
    public static let defaultCodeLifetime: TimeInterval = 300
    public static let defaultMaxWrongCodes = 5
    public static let defaultLockDuration: TimeInterval = 1800
    /// The documented example's `expire` (docs/vendors/idaas.md §2.4).
    public static let sessionLifetime = 432_000
    /// ID tokens live 2 hours by default (docs/vendors/idaas.md §2.4, [OA-*]).
    public static let idTokenLifetime = 7200

    public let faults = FaultSwitch()
    /// Rows of ``IDaaSErrorMapping/table`` armed to answer the next call of their operation (tests only).
    package let errors = EmulatorErrorSwitch()

    let clientID: String
    let statuses: [String: String]
    let undeliverable: Set<String>
    let tolerance: Int
    let codeLifetime: TimeInterval
    let maxWrongCodes: Int
    let lockDuration: TimeInterval
    /// The clock, outbox, logger and callback sender the emulator was built with.
    public let context: EmulatorContext
    /// Captchas, grants, codes, users and sessions, as rows read and written per call (``IDaaSEmulatorState``).
    let state: any EmulatorTable
    /// The ID-token key (a 32-digit `kid`), made on first use.
    private let signingKey: LazyRS256SigningKey

    /// - Parameters:
    ///   - statuses: E.164 numbers whose right code answers another login `status` (``IDaaSSandbox/statuses``).
    ///   - undeliverable: numbers whose SMS fails with `IDAAS.SDK.CAPTCHA.0006`.
    public init(
        context: EmulatorContext,
        clientID: String = IDaaSSandbox.clientID,
        statuses: [String: String] = IDaaSSandbox.statuses,
        undeliverable: Set<String> = [IDaaSSandbox.undeliverable],
        tolerance: Int = IDaaSEmulator.defaultTolerance,
        codeLifetime: TimeInterval = IDaaSEmulator.defaultCodeLifetime,
        maxWrongCodes: Int = IDaaSEmulator.defaultMaxWrongCodes,
        lockDuration: TimeInterval = IDaaSEmulator.defaultLockDuration
    ) {
        self.clientID = clientID
        self.statuses = statuses
        self.undeliverable = undeliverable
        self.tolerance = max(0, tolerance)
        self.codeLifetime = codeLifetime
        self.maxWrongCodes = max(1, maxWrongCodes)
        self.lockDuration = lockDuration
        self.context = context
        signingKey = LazyRS256SigningKey(
            keyIDBytes: 16, logger: context.logger, failure: "idaas sandbox could not make its token signing key")
        let table = context.persistence.table(IDaaSEmulatorState.table)
        self.state = table
        let now = context.clock.now
        table.moveSaved(context.persistence.load(), context: context, "idaas sandbox state") {
            try IDaaSEmulatorState(rows: $0, now: now).move($1)
        }
    }

    /// Runs `body` on the state as of `now` in one transaction, after pruning what is due; `nil` when the
    /// sandbox's file failed (logged), which callers answer with IDaaS's 500.
    func withState<T: Sendable>(
        now: Date, _ body: @escaping @Sendable (IDaaSEmulatorState) throws -> T
    ) async -> T? {
        await state.attempt("idaas sandbox state", logger: logger, now: now, body)
    }

    var signer: RS256SigningKey? { signingKey.current }

    /// Answers one request as the IDaaS server would; what it changed is saved within the call's
    /// transaction.
    public func handle(_ request: EmulatorRequest) async -> EmulatorResponse {
        await route(request)
    }

    private func route(_ request: EmulatorRequest) async -> EmulatorResponse {
        let path = request.path
        if let operation = Self.operations[path], let row = errors.take(operation: operation.name) {
            return .response(Self.answer(row))
        }
        if path == IDaaSWire.jwksPath {
            guard request.method == .get else { return .response(Self.notFound()) }
            return await withFaults(serverError: Self.serverError) {
                guard let signer else { return .response(Self.serverError(500)) }
                return .response(Self.json(signer.keySet))
            }
        }
        if path.hasPrefix("/sandbox/captchas/"), request.method == .get {
            return .response(await captchaAnswer(String(path.dropFirst("/sandbox/captchas/".count))))
        }
        let handler: ((EmulatorRequest) async -> TransportResponse)?
        switch (request.method, path) {
        case (.get, IDaaSWire.areaCodesPath): handler = areaCodes
        case (.get, IDaaSWire.captchaPath): handler = captcha
        case (.post, IDaaSWire.captchaVerifyPath): handler = verifyCaptcha
        case (.post, IDaaSWire.smsSendPath): handler = sendSMS
        case (.post, IDaaSWire.smsLoginPath): handler = login
        case (.post, IDaaSWire.refreshPath): handler = refresh
        default: handler = nil
        }
        guard let handler else { return .response(Self.notFound()) }
        return await withFaults(serverError: Self.serverError) {
            if let refusal = self.headerRefusal(request) { return .response(refusal) }
            return .response(await handler(request))
        }
    }

    /// The provider's operation behind each path, for the error switch.
    static let operations = Dictionary(
        uniqueKeysWithValues: IDaaSConfiguration.pathSettings.map { ($0.path, $0.operation) })

    /// An armed row as IDaaS answers it: its code with the documented status (400, `COMMON.1008` 500).
    static func answer(_ row: VendorErrorRow) -> TransportResponse {
        let code = row.code ?? "SYSTEM_ERROR"
        return json(
            IDaaSWire.ErrorBody(errorCode: code, errorMsg: row.name),
            status: HTTPResponse.Status(code: IDaaSErrorMapping.vendorStatus(of: code)), snakeCase: true)
    }

    /// The client id and the required device headers (docs/vendors/idaas.md §1).
    func headerRefusal(_ request: EmulatorRequest) -> TransportResponse? {
        func header(_ name: String) -> String? {
            HTTPField.Name(name).flatMap { request.headerFields[$0] }.flatMap { $0.isEmpty ? nil : $0 }
        }
        guard let client = header(IDaaSWire.clientIDHeader), ConstantTime.equals(client, clientID) else {
            return Self.refusal("IDAAS.SDK.COMMON.1012", "The application does not exist or the ClientId is wrong.")
        }
        for name in [IDaaSWire.osHeader, IDaaSWire.fingerprintHeader, IDaaSWire.agentHeader] where header(name) == nil {
            return Self.refusal("IDAAS.SDK.PARAM.0001", "Device information is incomplete.")
        }
        return nil
    }

    // MARK: area codes and captcha

    func areaCodes(_ request: EmulatorRequest) -> TransportResponse {
        Self.json(
            IDaaSWire.AreaCodesResponse(
                phoneAreaCodeDefinitions: IDaaSSandbox.areaCodes, preferredAreaCode: IDaaSSandbox.preferredAreaCode))
    }

    func captcha(_ request: EmulatorRequest) async -> TransportResponse {
        let puzzle = IDaaSPuzzle()
        let token = EmulatorRandom.hex(bytes: 16)
        let now = clock.now
        let captcha = IDaaSEmulatorState.Captcha(
            answerX: puzzle.x, answerY: puzzle.y, expiresAt: now.addingTimeInterval(Self.defaultCaptchaLifetime))
        guard await withState(now: now, { state in try state.setCaptcha(token, captcha) }) != nil else {
            return Self.serverError(500)
        }
        return Self.json(
            IDaaSWire.CaptchaResponse(
                secretKey: EmulatorRandom.hex(bytes: 8), originalImageBase64: puzzle.background.base64EncodedString(),
                point: nil, jigsawImageBase64: puzzle.piece.base64EncodedString(), token: token, result: false))
    }

    func captchaAnswer(_ token: String) async -> TransportResponse {
        let now = clock.now
        guard let found = await withState(now: now, { state in try state.captcha(token) }) else {
            return Self.serverError(500)
        }
        guard let captcha = found, captcha.expiresAt > now else { return Self.notFound() }
        return Self.json(IDaaSWire.Point(x: Double(captcha.answerX), y: Double(captcha.answerY)))
    }

    func verifyCaptcha(_ request: EmulatorRequest) async -> TransportResponse {
        guard let body = request.json(IDaaSWire.CaptchaVerifyRequest.self, decoder: SnakeCaseJSON.decoder),
            let token = body.token, !token.isEmpty, let pointJSON = body.pointJson, let sender = body.sender,
            !sender.isEmpty
        else { return Self.refusal("IDAAS.SDK.PARAM.0002", "Parameter error.") }
        guard let number = Self.e164(mobile: sender) else {
            return Self.refusal("IDAAS.SDK.PARAM.0003", "The mobile number format is wrong.")
        }
        let point = try? JSONDecoder().decode(IDaaSWire.Point.self, from: Data(pointJSON.utf8))
        let now = clock.now
        let tolerance = tolerance
        let answer = await withState(now: now) { state -> TransportResponse in
            guard let captcha = try state.captcha(token), captcha.expiresAt > now else {
                return Self.refusal("IDAAS.SDK.CAPTCHA.0001", "The captcha has expired; get a new one.")
            }
            // One answer per slider, right or wrong.
            try state.setCaptcha(token, nil)
            guard let point, abs(point.x - Double(captcha.answerX)) <= Double(tolerance) else {
                return Self.refusal("IDAAS.SDK.CAPTCHA.0002", "Graphic captcha verification failed.")
            }
            let captchaToken = token + IDaaSWire.captchaTokenJoiner + pointJSON
            try state.setGrant(
                captchaToken, .init(sender: number, expiresAt: now.addingTimeInterval(Self.defaultCaptchaLifetime)))
            return Self.json(IDaaSWire.CaptchaVerifyResponse(captchaToken: captchaToken), snakeCase: true)
        }
        return answer ?? Self.serverError(500)
    }

    // MARK: SMS

    func sendSMS(_ request: EmulatorRequest) async -> TransportResponse {
        guard let body = request.json(IDaaSWire.SMSSendRequest.self, decoder: SnakeCaseJSON.decoder),
            let mobile = body.mobile, let type = body.type, let captchaToken = body.captchaToken, !captchaToken.isEmpty
        else { return Self.refusal("IDAAS.SDK.PARAM.0002", "Parameter error.") }
        guard type == IDaaSWire.loginSMSType else {
            return Self.refusal("IDAAS.SDK.PARAM.0004", "Unsupported SMS type.")
        }
        guard let number = Self.e164(mobile: mobile) else {
            return Self.refusal("IDAAS.SDK.PARAM.0003", "The mobile number format is wrong.")
        }
        let now = clock.now
        let code = EmulatorRandom.code()
        let undeliverable = undeliverable.contains(number)
        let pending = IDaaSEmulatorState.Code(code: code, expiresAt: now.addingTimeInterval(codeLifetime))
        let outcome = await withState(now: now) { state -> TransportResponse? in
            guard var grant = try state.grant(captchaToken), grant.expiresAt > now else {
                return Self.refusal("IDAAS.SDK.CAPTCHA.0001", "The captcha token is invalid or expired.")
            }
            guard !grant.used, grant.sender == number else {
                return Self.refusal(
                    "IDAAS.SDK.CAPTCHA.0003", "The captcha token was not issued for this number or was used.")
            }
            grant.used = true
            try state.setGrant(captchaToken, grant)
            if undeliverable {
                return Self.refusal("IDAAS.SDK.CAPTCHA.0006", "Failed to send the verification code.")
            }
            try state.setCode(number, pending)
            return nil
        }
        guard let outcome else { return Self.serverError(500) }
        if let refusal = outcome { return refusal }
        // The tenant's template, in Chinese whatever `X-L` says (X-L localizes error_msg only).
        let text = "您的验证码是\(code)，\(Int(codeLifetime / 60))分钟内有效。"
        outbox.record(
            SandboxOutbox.Message(
                provider: "idaas", kind: .sms, channel: "sms", to: number, code: code, text: text, language: "zh",
                sentAt: now))
        logger.info("idaas sandbox sent a code", metadata: ["to": "\(PhoneNumber.mask(number))"])
        return TransportResponse(status: .ok)
    }

    // MARK: login and refresh

    private enum LoginOutcome: Sendable {
        case refused(TransportResponse)
        case status(String)
        case signedIn(userID: String, number: String, sessionToken: String, status: String)
    }

    func login(_ request: EmulatorRequest) async -> TransportResponse {
        guard let body = request.json(IDaaSWire.SMSLoginRequest.self, decoder: SnakeCaseJSON.decoder),
            let mobile = body.mobile, let code = body.verifyCode, !code.isEmpty
        else { return Self.refusal("IDAAS.SDK.PARAM.0002", "Parameter error.") }
        guard let number = Self.e164(mobile: mobile) else {
            return Self.refusal("IDAAS.SDK.PARAM.0003", "The mobile number format is wrong.")
        }
        let now = clock.now
        let newUserID = EmulatorRandom.hex(bytes: 12)
        let sessionToken = EmulatorRandom.hex(bytes: 24)
        let (maxWrongCodes, lockDuration, statuses) = (maxWrongCodes, lockDuration, statuses)
        guard
            let outcome = await withState(
                now: now,
                { state -> LoginOutcome in
                    var user = try state.user(number) ?? .init(id: newUserID)
                    if let until = user.lockedUntil, until > now {
                        return .refused(Self.refusal("IDAAS.SDK.LOGIN.1003", "The account is locked."))
                    }
                    guard let pending = try state.code(number), pending.expiresAt > now else {
                        return .refused(Self.refusal("IDAAS.SDK.CAPTCHA.0008", "The verification code has expired."))
                    }
                    guard ConstantTime.equals(code, pending.code) else {
                        user.failures += 1
                        if user.failures >= maxWrongCodes {
                            user.failures = 0
                            user.lockedUntil = now.addingTimeInterval(lockDuration)
                            try state.setCode(number, nil)
                            try state.setUser(number, user)
                            return .refused(Self.refusal("IDAAS.SDK.LOGIN.1003", "The account is locked."))
                        }
                        try state.setUser(number, user)
                        return .refused(Self.refusal("IDAAS.SDK.CAPTCHA.0007", "Incorrect verification code."))
                    }
                    try state.setCode(number, nil)
                    user.failures = 0
                    user.lockedUntil = nil
                    try state.setUser(number, user)
                    let status = statuses[number] ?? IDaaSWire.LoginStatus.success.rawValue
                    guard
                        status == IDaaSWire.LoginStatus.success.rawValue
                            || status == IDaaSWire.LoginStatus.passwordWarn.rawValue
                    else { return .status(status) }
                    try state.setSession(
                        sessionToken,
                        .init(
                            userID: user.id, phoneNumber: number,
                            expiresAt: now.addingTimeInterval(TimeInterval(Self.sessionLifetime))))
                    return .signedIn(userID: user.id, number: number, sessionToken: sessionToken, status: status)
                })
        else { return Self.serverError(500) }
        switch outcome {
        case .refused(let response):
            return response
        case .status(let status):
            let stateToken = status == IDaaSWire.LoginStatus.mfaAuth.rawValue ? EmulatorRandom.hex(bytes: 16) : nil
            return Self.json(IDaaSWire.TokenResponse(status: status, stateToken: stateToken), snakeCase: true)
        case .signedIn(let userID, let number, let sessionToken, let status):
            guard let idToken = idToken(userID: userID, number: number, now: now) else { return Self.serverError(500) }
            return Self.json(
                IDaaSWire.TokenResponse(
                    sessionToken: sessionToken, expire: Self.sessionLifetime, status: status, idToken: idToken),
                snakeCase: true)
        }
    }

    /// Rotates the session token and issues a new ID token (docs/vendors/idaas.md §2.5).
    func refresh(_ request: EmulatorRequest) async -> TransportResponse {
        let presented = HTTPField.Name(IDaaSWire.sessionTokenHeader).flatMap { request.headerFields[$0] } ?? ""
        let now = clock.now
        let next = EmulatorRandom.hex(bytes: 24)
        guard
            let rotated = await withState(
                now: now,
                { state -> IDaaSEmulatorState.Session? in
                    guard !presented.isEmpty, let session = try state.session(presented), session.expiresAt > now else {
                        return nil
                    }
                    var renewed = session
                    renewed.expiresAt = now.addingTimeInterval(TimeInterval(Self.sessionLifetime))
                    try state.setSession(presented, nil)
                    try state.setSession(next, renewed)
                    return renewed
                })
        else { return Self.serverError(500) }
        guard let session = rotated else {
            return Self.refusal("IDAAS.SDK.PARAM.0023", "The session token is invalid or has expired.")
        }
        guard let idToken = idToken(userID: session.userID, number: session.phoneNumber, now: now) else {
            return Self.serverError(500)
        }
        return Self.json(
            IDaaSWire.TokenResponse(sessionToken: next, expire: Self.sessionLifetime, idToken: idToken), snakeCase: true
        )
    }

    func idToken(userID: String, number: String, now: Date) -> String? {
        let api = (try? JSONEncoder().encode(["userName": userID, "mobile": number])).flatMap {
            String(data: $0, encoding: .utf8)
        }
        let issued = now.timeIntervalSince1970.rounded(.down)
        let mobile = Self.dashed(number)
        let claims = IDaaSWire.IDTokenClaims(
            iss: IDaaSSandbox.issuer, sub: userID, aud: JWTAudience([clientID]),
            exp: issued + Double(Self.idTokenLifetime), iat: issued, api: api, phoneNumber: number, id: userID,
            name: userID, userName: userID, mobile: mobile, email: "")
        return try? signer?.sign(claims)
    }

    // MARK: values

    /// `+86-13800138000` for `+8613800138000`, with the tenant's area code; the E.164 form otherwise.
    static func dashed(_ number: String) -> String {
        let digits = number.dropFirst()
        let area = IDaaSSandbox.areaCodes.map(\.areaCode).sorted { $0.count > $1.count }
            .first { digits.hasPrefix($0) }
        guard let area else { return number }
        return "+" + area + "-" + digits.dropFirst(area.count)
    }

    /// `+<area code>-<number>` (or, for China, the bare 11 digits: the CN regex makes the prefix optional,
    /// docs/vendors/idaas.md §2.6) as E.164, when it is one of the tenant's area codes.
    static func e164(mobile: String) -> String? {
        if mobile.count == 11, mobile.hasPrefix("1"), mobile.allSatisfy(\.isASCIIDigit) { return "+86" + mobile }
        guard mobile.hasPrefix("+"), let dash = mobile.firstIndex(of: "-") else { return nil }
        let area = mobile[mobile.index(after: mobile.startIndex)..<dash]
        let national = mobile[mobile.index(after: dash)...]
        guard IDaaSSandbox.areaCodes.contains(where: { $0.areaCode == area }), (4...14).contains(national.count),
            national.allSatisfy(\.isASCIIDigit)
        else { return nil }
        return "+" + area + national
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
