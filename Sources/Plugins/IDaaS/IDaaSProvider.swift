import Foundation
import GatewayCore
import Logging

/// BambooCloud IDaaS SMS login behind the gateway's provider contract (docs/vendors/idaas.md §2, docs/idaas.md).
///
/// A start (and a resend) answers a slider to solve, nothing sent, once the number passed the tenant's area codes;
/// solving it verifies the position at IDaaS with the verification's own number as `sender` and sends the SMS (a
/// refused slider answers a fresh one, never an SMS). The check is the SMS login: `SUCCESS` and `PASSWORD_WARN`
/// approve once the ID token verifies against the tenant's JWKS; `MFA_AUTH`, `PASSWORD_EXPIRED` and `ACCESS_DENIED`
/// end the verification as `denied`. Every call carries the client id and the device headers of ``IDaaSDevice``,
/// kept in the verification's state so a check sends what the start sent.
/// IDaaS has no cancel or status call: it adopts neither protocol.
struct IDaaSProvider: VendorHTTPProvider, ResendingProvider, ChallengingProvider, ActionProvider {
    static let challengeKind = "slider_captcha"

    let configuration: IDaaSConfiguration
    let client: VendorHTTPClient
    let cache = IDaaSTenantCache()

    var capabilities: ProviderCapabilities {
        ProviderCapabilities(
            channels: [.sms], servedRegions: cache.servedRegions ?? configuration.defaultRegions, issuesTokens: true,
            resendKeepsCode: false)
    }

    var actions: [ProviderAction] {
        [
            ProviderAction(
                name: "refresh_id_token",
                summary: "A new ID token from a session token; the returned session_token replaces the old one.",
                requiredInputs: ["session_token"]),
            ProviderAction(
                name: "verify_id_token",
                summary: "Verifies an ID token (signature against the tenant's keys, expiry, audience).",
                requiredInputs: ["id_token"]),
        ]
    }

    init(context: ProviderContext) throws(ConfigurationError) {
        configuration = try IDaaSConfiguration(settings: context.settings, providerID: context.providerID)
        client = VendorHTTPClient(vendor: "IDaaS", context: context, baseURL: configuration.baseURL)
    }

    /// Reads the area codes at startup (unless `area_codes_preload: false`), so routing and `/v1/countries`
    /// know the tenant's regions from the first request. A failed read leaves the default regions; the list
    /// is then read on the first start that needs it (``mobile(for:)``).
    func warmUp() async {
        guard configuration.preloadAreaCodes else { return }
        do {
            _ = try await areaCodeList()
        } catch {
            logger.warning(
                "idaas area codes could not be read at startup; the first start reads them",
                metadata: ["provider.id": "\(id)", "error.code": "\(error.code.rawValue)"])
        }
    }

    // MARK: start and challenge

    func prepare(_ request: StartVerification) async throws(GatewayError) -> ProviderChallenge? {
        guard request.channel == .sms else {
            throw GatewayError(.unsupportedChannel, "IDaaS signs in with SMS codes only.")
        }
        guard let number = request.destination.phoneNumber else {
            throw GatewayError(.invalidRequest, "IDaaS SMS login needs a phone number.")
        }
        let mobile = try await mobile(for: number)
        let device = IDaaSDevice(
            context: request.clientContext, subject: number.e164, locales: request.locales,
            configuration: configuration)
        let challenge = try await newChallenge(mobile: mobile, device: device, sentAt: nil)
        logger.info(
            "idaas slider issued",
            metadata: ["provider.id": "\(id)", "to": "\(number.masked)", "device": "\(device.masked)"])
        return challenge
    }

    /// The engine always calls ``prepare(_:)`` first; a direct start answers the same challenge.
    func start(_ request: StartVerification) async throws(GatewayError) -> ProviderStartResult {
        guard let challenge = try await prepare(request) else { throw GatewayError.internal() }
        return ProviderStartResult(
            reference: nil, state: challenge.state, expiresAt: challenge.challenge.expiresAt, sentNothing: true,
            nextAction: .solveChallenge(challenge.challenge))
    }

    func submitChallenge(_ verification: ProviderVerification, answer: ChallengeAnswer) async throws(GatewayError)
        -> ProviderStartResult
    {
        var state = try verification.state.decode(IDaaSVerificationState.self)
        guard let token = state.captchaToken else {
            throw GatewayError(.invalidState, "This verification has no open slider.")
        }
        guard let x = answer.answer["x"]?.numberValue, x.isFinite, (0...10_000).contains(x) else {
            throw GatewayError(
                .invalidRequest, "The answer must be {\"x\": <the cut-out's left edge, in background pixels>}.")
        }
        let pointJSON = "{\"x\":\(Self.decimal(x)),\"y\":\(Self.decimal(IDaaSWire.sliderY))}"
        do throws(GatewayError) {
            let response = try await call(
                .post, .captchaVerify,
                body: IDaaSWire.CaptchaVerifyRequest(pointJson: pointJSON, token: token, sender: state.mobile),
                device: state.device)
            let verified = try client.decodeSnakeCase(
                IDaaSWire.CaptchaVerifyResponse.self, from: response, operation: .captchaVerify)
            guard let captchaToken = verified.captchaToken, !captchaToken.isEmpty else {
                throw client.malformed(.captchaVerify, httpStatus: response.status.code)
            }
            _ = try await call(
                .post, .smsSend,
                body: IDaaSWire.SMSSendRequest(
                    mobile: state.mobile, type: configuration.smsType, captchaToken: captchaToken),
                device: state.device)
        } catch  where Self.needsFreshSlider(error) {
            // The slider or the captcha token was refused (expired, used): a new slider, never a send without one.
            logger.info(
                "idaas slider refused: a new one, nothing sent",
                metadata: ["provider.id": "\(id)", "to": "\(verification.destination.masked)"])
            return try await freshChallenge(state)
        }
        state.captchaToken = nil
        state.sentAt = clock.now
        logger.info("idaas code sent", metadata: ["provider.id": "\(id)", "to": "\(verification.destination.masked)"])
        return ProviderStartResult(
            reference: nil, state: try ProviderState(state), contentLanguage: configuration.smsLanguage, channel: .sms)
    }

    /// A refused slider or captcha token: a wrong or unreadable position (`SMS.1002`–`1004`, `CAPTCHA.*`) or an
    /// expired token (`COMMON.1005`). The app gets a fresh slider; nothing was sent.
    static func needsFreshSlider(_ error: GatewayError) -> Bool {
        error.code == .appVerificationFailed || error.code == .expired
    }

    /// A new slider for the same number and device, with nothing sent.
    func freshChallenge(_ state: IDaaSVerificationState, channel: Channel? = nil) async throws(GatewayError)
        -> ProviderStartResult
    {
        let challenge = try await newChallenge(mobile: state.mobile, device: state.device, sentAt: state.sentAt)
        return ProviderStartResult(
            reference: nil, state: challenge.state, channel: channel, sentNothing: true,
            nextAction: .solveChallenge(challenge.challenge))
    }

    /// `GET /api/v2/sdk/captcha` as a `slider_captcha` challenge: the background and the piece as base64 PNG.
    func newChallenge(mobile: String, device: IDaaSDevice, sentAt: Date?) async throws(GatewayError)
        -> ProviderChallenge
    {
        let response = try await call(.get, .captcha, device: device)
        let captcha = try client.decode(IDaaSWire.CaptchaResponse.self, from: response, operation: .captcha)
        guard let token = captcha.token, !token.isEmpty, let background = captcha.originalImageBase64,
            !background.isEmpty, let piece = captcha.jigsawImageBase64, !piece.isEmpty
        else { throw client.malformed(.captcha, httpStatus: response.status.code) }
        let state = IDaaSVerificationState(captchaToken: token, mobile: mobile, device: device, sentAt: sentAt)
        let data: JSONValue = [
            "background_png_base64": .string(Self.stripDataURL(background)),
            "piece_png_base64": .string(Self.stripDataURL(piece)),
            "answer": ["x": "the left edge of the cut-out in the background, in background pixels"],
        ]
        return ProviderChallenge(
            challenge: NextAction.Challenge(
                kind: Self.challengeKind, data: data,
                expiresAt: clock.now.addingTimeInterval(configuration.challengeLifetime)),
            state: try ProviderState(state))
    }

    // MARK: check

    func check(_ verification: ProviderVerification, code: String) async throws(GatewayError) -> ProviderCheckResult {
        guard !code.isEmpty else { throw GatewayError(.invalidRequest, "`code` is required.") }
        let state = try verification.state.decode(IDaaSVerificationState.self)
        // A resend's open slider leaves the code already sent valid: IDaaS replaces it only with a new send.
        guard state.captchaToken == nil || state.sentAt != nil else {
            throw GatewayError(.invalidState, "Nothing was sent yet: answer the slider first.")
        }
        let response: TransportResponse
        do {
            response = try await call(
                .post, .smsLogin,
                body: IDaaSWire.SMSLoginRequest(mobile: state.mobile, verifyCode: code), device: state.device)
        } catch  where error.code == .incorrectCode {
            return ProviderCheckResult(status: .pending)
        }
        let answer = try client.decodeSnakeCase(IDaaSWire.TokenResponse.self, from: response, operation: .smsLogin)
        let status = answer.status ?? IDaaSWire.LoginStatus.success.rawValue
        func refused(_ message: String) -> GatewayError {
            GatewayError(
                .denied, message, vendor: GatewayError.VendorDetail(providerID: id, code: status, httpStatus: 200),
                retryable: false)
        }
        switch IDaaSWire.LoginStatus(rawValue: status) {
        case .success, .passwordWarn:
            let tokens = try await verifiedTokens(answer, operation: .smsLogin)
            return ProviderCheckResult(status: .approved, tokens: tokens)
        case .mfaAuth:
            throw refused(
                "The code was right, but IDaaS asks for a second factor (MFA_AUTH), which the gateway does not "
                    + "perform; complete the sign-in with the IDaaS SDK.")
        case .passwordExpired:
            throw refused("The code was right, but IDaaS requires a password change first (PASSWORD_EXPIRED).")
        case .accessDenied:
            throw refused("IDaaS denied this user access to the application (ACCESS_DENIED).")
        case nil:
            throw GatewayError(
                .providerError, "IDaaS answered the sign-in with a status the gateway does not know.",
                vendor: GatewayError.VendorDetail(
                    providerID: id, code: ASCIIText.token(status, extra: "._"), httpStatus: 200))
        }
    }

    // MARK: resend

    /// A new SMS needs a new captcha token (docs/vendors/idaas.md §2.3): the resend answers a fresh slider, and
    /// solving it sends the code. Until then the code already sent stays valid at IDaaS, so checks of it go on.
    func resend(_ verification: ProviderVerification, request: ResendRequest) async throws(GatewayError)
        -> ProviderStartResult
    {
        if let channel = request.channel, channel != .sms {
            throw GatewayError(.unsupportedChannel, "IDaaS signs in with SMS codes only.")
        }
        return try await freshChallenge(try verification.state.decode(IDaaSVerificationState.self), channel: .sms)
    }

    // MARK: actions

    func perform(action: String, input: [String: JSONValue]) async throws(GatewayError) -> [String: JSONValue] {
        switch action {
        case "refresh_id_token":
            guard let sessionToken = input["session_token"]?.stringValue, !sessionToken.isEmpty,
                ASCIIText.isPrintable(sessionToken, max: 4096)
            else { throw GatewayError(.invalidRequest, "`session_token` must be a non-empty string.") }
            var context = ClientContext()
            if let given = input["client_context"] { context = (try? given.decode(as: ClientContext.self)) ?? context }
            let device = IDaaSDevice(
                context: context, subject: "session", locales: [], configuration: configuration)
            let response = try await call(
                .post, .refresh, device: device,
                extra: [(configuration.headers.sessionToken, sessionToken)])
            let answer = try client.decodeSnakeCase(IDaaSWire.TokenResponse.self, from: response, operation: .refresh)
            return try await verifiedTokens(answer, operation: .refresh)
        case "verify_id_token":
            guard let token = input["id_token"]?.stringValue, !token.isEmpty else {
                throw GatewayError(.invalidRequest, "`id_token` must be a non-empty string.")
            }
            switch try await verifyIDToken(token) {
            case .failure(let problem):
                throw GatewayError(
                    problem.code, "The ID token is not valid: \(problem.reason).",
                    vendor: GatewayError.VendorDetail(providerID: id, code: problem.sdkCode, httpStatus: nil))
            case .success(let claims):
                let fields = [
                    "subject": claims.sub, "issuer": claims.iss, "phone_number": claims.phoneNumber, "api": claims.api,
                ]
                var output = fields.compactMapValues { $0.map(JSONValue.string) }
                output["valid"] = .bool(true)
                output["expires_at"] = claims.exp.map(JSONValue.number)
                // The user information the SDK reads from the token ([BC-IOS]), under the gateway's names.
                let user = [
                    "id": claims.id, "name": claims.name, "user_name": claims.userName, "mobile": claims.mobile,
                    "email": claims.email,
                ].compactMapValues { $0.map(JSONValue.string) }
                if !user.isEmpty { output["user"] = .object(user) }
                return output
            }
        default:
            throw GatewayError(.notFound, "Provider \(id) has no action named \(action).")
        }
    }

    // MARK: area codes

    /// The `mobile` string for `number`, refused before any other call when the tenant's area codes lack it
    /// (`unsupported_destination`) or its `mobileRegex` refuses it (`invalid_phone_number`).
    func mobile(for number: PhoneNumber) async throws(GatewayError) -> String {
        let entries = try await areaCodeList().phoneAreaCodeDefinitions ?? []
        let candidates = entries.filter { $0.areaCode == String(number.countryCode) }
        let region = number.region?.uppercased()
        let inRegion = candidates.filter { entry in
            guard let region, let country = entry.countryCode else { return true }
            return country.uppercased() == region
        }
        guard let entry = inRegion.first else {
            throw GatewayError(
                .unsupportedDestination, "The IDaaS tenant's area codes do not include this number's country.")
        }
        if let pattern = entry.mobileRegex, let regex = try? NSRegularExpression(pattern: pattern) {
            let dashed = number.dashedE164
            let range = NSRange(dashed.startIndex..., in: dashed)
            guard regex.firstMatch(in: dashed, range: range) != nil else {
                throw GatewayError(.invalidPhoneNumber, "The IDaaS tenant does not accept this mobile number's form.")
            }
        }
        return configuration.mobileFormat.write(number)
    }

    /// The tenant's area-code list with its preferred entry, cached for ``IDaaSConfiguration/areaCodesTTL``. A
    /// failed read falls back on the last list read, if any.
    func areaCodeList() async throws(GatewayError) -> IDaaSWire.AreaCodesResponse {
        let now = clock.now
        let cached = cache.areaCodes.withLock { $0 }
        if let cached, now.timeIntervalSince(cached.fetchedAt) < configuration.areaCodesTTL { return cached.list }
        do {
            let response = try await call(.get, .areaCodes, device: gatewayDevice)
            let list = try client.decode(IDaaSWire.AreaCodesResponse.self, from: response, operation: .areaCodes)
            cache.areaCodes.withLock { $0 = (list, now) }
            return list
        } catch {
            if let cached { return cached.list }
            throw error
        }
    }

    /// The tenant's area codes as the SDK's country picker shows them (`getInternaltionalAreaCode`, [BC-IOS]),
    /// for `GET /v1/countries?provider=…`: in the tenant's order, with the display names, the `mobileRegex` (which
    /// matches `+<area code>-<number>`), the suffixes, and which entry is preferred. `preferredAreaCode` names a
    /// country code in the documented example; an area code is matched too. An entry whose area code is not a
    /// calling code is left out.
    func countryList() async throws(GatewayError) -> ProviderCountryList? {
        let list = try await areaCodeList()
        let preferred = list.preferredAreaCode.flatMap { $0.isEmpty ? nil : $0.uppercased() }
        var entries: [ProviderCountryList.Entry] = []
        for entry in list.phoneAreaCodeDefinitions ?? [] {
            guard let callingCode = Int(entry.areaCode), (1...999).contains(callingCode) else { continue }
            let region = entry.countryCode.flatMap { $0.isEmpty ? nil : $0.uppercased() }
            let isPreferred = preferred != nil && (preferred == region || preferred == entry.areaCode)
            entries.append(
                ProviderCountryList.Entry(
                    region: region, callingCode: callingCode, displayNames: entry.displayMapping ?? [:],
                    mobilePattern: entry.mobileRegex.flatMap { $0.isEmpty ? nil : $0 },
                    mobilePatternInput: "+\(callingCode)-<number>", callingCodeSuffixes: entry.areaCodeSuffixes ?? [],
                    preferred: isPreferred))
        }
        let preferredRegion = entries.first(where: \.preferred)?.region
        return ProviderCountryList(entries: entries, preferredRegion: preferredRegion)
    }

    /// The device headers of the gateway's own calls (the area codes), which no end user makes.
    var gatewayDevice: IDaaSDevice {
        IDaaSDevice(context: ClientContext(), subject: "gateway", locales: [], configuration: configuration)
    }

    // MARK: helpers

    /// `237.0`: the x with one decimal, as the documented `point_json`.
    static func decimal(_ value: Double) -> String { String(format: "%.1f", value) }

    /// Some deployments prefix the images with `data:image/png;base64,`; the challenge carries bare base64.
    static func stripDataURL(_ value: String) -> String {
        guard value.hasPrefix("data:"), let comma = value.firstIndex(of: ",") else { return value }
        return String(value[value.index(after: comma)...])
    }
}
