import Foundation

/// A verification as the gateway answers it (`Verification`, and `CheckResult` with the token).
public struct Verification: Sendable, Hashable {
    public var id: String
    public var status: VerificationStatus
    /// E.164 for a phone number; the email address or the user identity for `email` and `push`.
    public var to: String
    /// The channel in use: a vendor's workflow may move it.
    public var channel: Channel
    public var provider: String
    /// What the app must do next; only while the verification is pending.
    public var nextAction: NextAction?
    public var fallbackChannels: [Channel]
    public var statusReason: String?
    public var contentLanguage: String?
    public var expiresAt: Date
    public var attemptsRemaining: Int
    public var sends: Int
    public var createdAt: Date
    public var updatedAt: Date
    public var route: String?
    public var testNumber: Bool
    public var clientRef: String?
    public var metadata: [String: String]
    /// The gateway's ES256 JWT (verify it with `/.well-known/jwks.json`): in the answer of the check that
    /// approved, or in the first read after an approval by callback or refresh, and only there.
    public var token: String?
    /// The vendor's own tokens, with `token` (Firebase's `idToken`, IDaaS's `session_token`…).
    public var providerTokens: [String: JSONValue]
    /// The secret that authorizes an app for this verification's own steps (read, challenge, check, resend), in
    /// the start's answer only: the back end hands it to the app with `id` (``Credential/clientSecret(_:)``).
    /// Nil from a gateway that does not issue client secrets.
    public var clientSecret: String?
}

/// `Verification.status`. Every status but `pending` is final.
public enum VerificationStatus: String, Sendable, Hashable, CaseIterable {
    case pending, approved, denied, canceled, expired, failed, blocked
    case maxAttemptsReached = "max_attempts_reached"

    public var isFinal: Bool { self != .pending }
}

/// A channel of `POST /v1/verifications`.
public enum Channel: String, Sendable, Hashable, CaseIterable {
    case sms, voice, whatsapp, email, push, flashcall
    case silentAuth = "silent_auth"
}

/// What the app must do before the verification can finish (`next_action`).
public enum NextAction: Sendable, Hashable {
    /// Show the challenge and answer it (`VerificationClient.answerChallenge`); nothing was sent yet.
    case solveChallenge(Challenge)
    /// A missed call arrives; check its caller number as the code.
    case interceptCall(CallInterception)
    /// Open the URL, over mobile data when `cellularOnly`, following its redirects.
    case openURL(URLOpening)
    /// The user approves or denies a prompt on an enrolled device; poll `status(refresh: true)`.
    case awaitApproval(ApprovalWait)
}

/// A `solve_challenge`: its kind, the plugin's data (images, the answer's fields) and when it expires.
public struct Challenge: Sendable, Hashable {
    /// The plugin's name for the kind of challenge (`slider_captcha`).
    public var kind: String
    /// What the app shows; for a slider, `background_png_base64`, `piece_png_base64` and `answer`.
    public var data: JSONValue
    public var expiresAt: Date?

    /// The answer's fields and what each means (`data.answer`), as the plugin describes them.
    public var answerFields: [String: String] {
        (data["answer"]?.objectValue ?? [:]).compactMapValues(\.stringValue)
    }

    /// Every image of the challenge (members of `data` named `…_png_base64`), decoded, by the name before that
    /// suffix (`background`, `piece`).
    public var pngImages: [String: Data] {
        var images: [String: Data] = [:]
        for (name, value) in data.objectValue ?? [:] where name.hasSuffix("_png_base64") {
            if let text = value.stringValue, let bytes = Data(base64Encoded: text) {
                images[String(name.dropLast("_png_base64".count))] = bytes
            }
        }
        return images
    }
}

/// An `intercept_call`: a flash call's caller number is the code.
public struct CallInterception: Sendable, Hashable {
    /// The caller number with `*` for the code's digits, or the vendor's regular expression.
    public var callerPattern: String
    /// How long to wait for the call.
    public var timeoutSeconds: Int
}

/// An `open_url`: silent network authentication.
public struct URLOpening: Sendable, Hashable {
    public var url: URL
    /// Request it over the mobile network (on iOS: a cellular-only `NWParameters` or
    /// `URLRequest.allowsExpensiveNetworkAccess` with Wi-Fi off for the request).
    public var cellularOnly: Bool
}

/// An `await_approval`: a push to an enrolled device.
public struct ApprovalWait: Sendable, Hashable {
    public var message: String?
    public var expiresAt: Date?
}

/// What to start: `POST /v1/verifications`.
public struct StartRequest: Sendable, Hashable {
    /// A phone number (international, or national with `region`), an email address, or a push identity.
    public var to: String
    public var region: String?
    public var channel: Channel?
    public var fallbackChannels: [Channel]
    /// Preferred content languages, most preferred first (IETF tags): Sinch's `languages`.
    public var locales: [String]
    public var appVerification: AppVerification?
    public var codeLength: Int?
    public var clientRef: String?
    public var metadata: [String: String]
    /// Forces a provider, bypassing routing.
    public var provider: String?
    public var clientContext: ClientContext?
    /// Push: the factor to challenge and the prompt it shows.
    public var pushPrompt: PushPrompt?
    public var pushFactorID: String?
    /// The multi-factor step the verification is (Firebase): a second-factor sign-in or an enrollment.
    public var multiFactor: MultiFactor?

    public init(
        to: String, region: String? = nil, channel: Channel? = nil, fallbackChannels: [Channel] = [],
        locales: [String] = [], appVerification: AppVerification? = nil, codeLength: Int? = nil,
        clientRef: String? = nil, metadata: [String: String] = [:], provider: String? = nil,
        clientContext: ClientContext? = nil, pushPrompt: PushPrompt? = nil, pushFactorID: String? = nil,
        multiFactor: MultiFactor? = nil
    ) {
        self.to = to
        self.region = region
        self.channel = channel
        self.fallbackChannels = fallbackChannels
        self.locales = locales
        self.appVerification = appVerification
        self.codeLength = codeLength
        self.clientRef = clientRef
        self.metadata = metadata
        self.provider = provider
        self.clientContext = clientContext
        self.pushPrompt = pushPrompt
        self.pushFactorID = pushFactorID
        self.multiFactor = multiFactor
    }
}

/// A multi-factor step (the start's `multi_factor`; routing considers only providers that run it, Firebase in
/// the seeds). The approval's `providerTokens` are the user's new `idToken` and `refreshToken`. The values stay
/// in the gateway until the vendor finalizes the step and are never shown again.
public enum MultiFactor: Sendable, Hashable {
    /// The phone second factor of a sign-in whose first factor answered `mfaPendingCredential`;
    /// `enrollmentID` is the factor's `mfaEnrollmentId`, and the start's `to` must be its number.
    case signIn(pendingCredential: String, enrollmentID: String)
    /// Enrolling the start's `to` as a second factor of the signed-in user whose Firebase ID token this is.
    case enroll(idToken: String, displayName: String? = nil)
}

/// A proof that the request comes from the customer's app (Firebase's reCAPTCHA, App Attest receipt…).
public struct AppVerification: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case recaptcha, captcha
        case recaptchaEnterprise = "recaptcha_enterprise"
        case iosReceipt = "ios_receipt"
        case playIntegrity = "play_integrity"
    }
    public var kind: Kind
    public var token: String
    /// Required with `iosReceipt`.
    public var secret: String?

    public init(kind: Kind, token: String, secret: String? = nil) {
        self.kind = kind
        self.token = token
        self.secret = secret
    }
}

/// The end user's device, as the vendor wants to see it (IDaaS's device headers, Firebase's client type).
public struct ClientContext: Sendable, Hashable {
    public enum Platform: String, Sendable, Hashable { case ios, android, web }
    public var ip: String?
    public var userAgent: String?
    public var deviceID: String?
    public var platform: Platform?

    public init(ip: String? = nil, userAgent: String? = nil, deviceID: String? = nil, platform: Platform? = nil) {
        self.ip = ip
        self.userAgent = userAgent
        self.deviceID = deviceID
        self.platform = platform
    }
}

/// What a Verify Push challenge shows on the device.
public struct PushPrompt: Sendable, Hashable {
    public var message: String
    /// Label and value pairs shown under the message, in order.
    public var details: [(label: String, value: String)] {
        get { detailPairs.map { ($0.label, $0.value) } }
        set { detailPairs = newValue.map { Detail(label: $0.label, value: $0.value) } }
    }
    /// Kept with the challenge, not shown.
    public var hiddenDetails: [String: String]
    var detailPairs: [Detail]

    struct Detail: Sendable, Hashable {
        var label: String
        var value: String
    }

    public init(message: String, details: [(label: String, value: String)] = [], hiddenDetails: [String: String] = [:])
    {
        self.message = message
        self.detailPairs = details.map { Detail(label: $0.label, value: $0.value) }
        self.hiddenDetails = hiddenDetails
    }
}

/// The token a device's SDK enrols a push factor with (`POST /v1/factors/access-tokens`): a server call.
public struct FactorAccessToken: Sendable, Hashable {
    public var provider: String
    public var identity: String
    public var token: String
    public var factorType: String
    public var expiresAt: Date
    /// What else the SDK needs (Twilio: `service_sid`, `base_url`, `access_token_sid`).
    public var details: [String: JSONValue]
}

/// A message the sandbox's emulators "sent" (`GET /sandbox/outbox`): what the user's phone would receive.
public struct SandboxMessage: Sendable, Hashable {
    public var provider: String
    /// `sms`, `voice`, `whatsapp`, `email`, `push`, `flash_call` or `silent_auth`.
    public var kind: String
    public var channel: String
    public var to: String
    /// The code the user would type; for a flash call, the caller number; nil for a push.
    public var code: String?
    public var text: String
    public var language: String?
    public var sentAt: Date
}
