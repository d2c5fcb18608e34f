import Foundation

/// A verification as the gateway answers it (`Verification`, and `CheckResult` with the token).
public struct Verification: Sendable, Hashable {
    /// The gateway's id (`vf_…`).
    public var id: String
    /// The status; every status but `pending` is final.
    public var status: VerificationStatus
    /// E.164 for a phone number; the email address or the user identity for `email` and `push`.
    public var to: String
    /// The channel in use: a vendor's workflow may move it.
    public var channel: Channel
    /// The provider that sent it (`twilio`).
    public var provider: String
    /// What the app must do next; only while the verification is pending.
    public var nextAction: NextAction?
    /// Fallback channels not used yet, in order.
    public var fallbackChannels: [Channel]
    /// The vendor's bounded reason code for the last status it reported (`DENIED`), if any.
    public var statusReason: String?
    /// The language the vendor used for the message, if it said.
    public var contentLanguage: String?
    /// When the code stops working.
    public var expiresAt: Date
    /// Checks left.
    public var attemptsRemaining: Int
    /// Sends so far, the start included; zero when nothing was sent (a challenge waits, or a test number).
    public var sends: Int
    /// When the verification was started.
    public var createdAt: Date
    /// When it last changed.
    public var updatedAt: Date
    /// The routing rule that matched: a route's name, `channel:<channel>`, `default`, `forced` or `test_number`.
    public var route: String?
    /// Whether `to` is a configured test number: no vendor was called.
    public var testNumber: Bool
    /// The caller's own reference from the start.
    public var clientRef: String?
    /// The caller's metadata from the start.
    public var metadata: [String: String]
    /// What the start's risk step found for the app to act on (`["sim_swap": "recent"]` on a `step_up` route: ask
    /// for a second factor); empty when nothing was found.
    public var risk: [String: String] = [:]
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

    /// Whether the status can no longer change.
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
    /// When the challenge stops taking answers, if the vendor says.
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
    /// The URL to open.
    public var url: URL
    /// Request it over the mobile network (on iOS: a cellular-only `NWParameters` or
    /// `URLRequest.allowsExpensiveNetworkAccess` with Wi-Fi off for the request).
    public var cellularOnly: Bool
}

/// An `await_approval`: a push to an enrolled device.
public struct ApprovalWait: Sendable, Hashable {
    /// The text the device shows, when the provider knows it.
    public var message: String?
    /// When the push stops taking an answer, if the vendor says.
    public var expiresAt: Date?
}

/// What to start: `POST /v1/verifications`.
public struct StartRequest: Sendable, Hashable {
    /// A phone number (international, or national with `region`), an email address, or a push identity.
    public var to: String
    /// Where the user is (ISO 3166-1 alpha-2), for a `to` in national form.
    public var region: String?
    /// The first channel; the gateway's default, `sms`, when nil.
    public var channel: Channel?
    /// Channels to use after ``channel``, in order (at most 4, none equal to it).
    public var fallbackChannels: [Channel]
    /// Preferred content languages, most preferred first (IETF tags): Sinch's `languages`.
    public var locales: [String]
    /// The app's proof, for vendors that need one.
    public var appVerification: AppVerification?
    /// The code length (4 to 10), where the vendor lets a request choose it.
    public var codeLength: Int?
    /// The caller's own reference (at most 128 characters), echoed back.
    public var clientRef: String?
    /// Free-form metadata kept with the verification, never sent to a vendor (at most 20 entries).
    public var metadata: [String: String]
    /// Forces a provider, bypassing routing.
    public var provider: String?
    /// The end user's device, for vendors that want it.
    public var clientContext: ClientContext?
    /// Push: the factor to challenge and the prompt it shows.
    public var pushPrompt: PushPrompt?
    /// Push: the enrolled factor to challenge; the identity's only factor when nil.
    public var pushFactorID: String?
    /// The multi-factor step the verification is (Firebase): a second-factor sign-in or an enrollment.
    public var multiFactor: MultiFactor?

    /// A request to verify `to`; everything else is the gateway's default unless given.
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
    /// The kind of proof (`type`).
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case recaptcha, captcha
        case recaptchaEnterprise = "recaptcha_enterprise"
        case iosReceipt = "ios_receipt"
        case playIntegrity = "play_integrity"
    }
    /// Which kind of proof ``token`` is.
    public var kind: Kind
    /// The proof's token (for `iosReceipt`, the receipt).
    public var token: String
    /// Required with `iosReceipt`.
    public var secret: String?

    /// A proof of `kind`; `secret` only with `iosReceipt`.
    public init(kind: Kind, token: String, secret: String? = nil) {
        self.kind = kind
        self.token = token
        self.secret = secret
    }
}

/// The end user's device, as the vendor wants to see it (IDaaS's device headers, Firebase's client type).
public struct ClientContext: Sendable, Hashable {
    /// The kind of app the user is in.
    public enum Platform: String, Sendable, Hashable { case ios, android, web }
    /// The end user's IP address (not the back end's).
    public var ip: String?
    /// The user agent of the end user's browser or app.
    public var userAgent: String?
    /// A stable id of the app installation or device.
    public var deviceID: String?
    /// The kind of app the user is in (Firebase's client type differs between them).
    public var platform: Platform?

    /// A context with what the back end knows of the device.
    public init(ip: String? = nil, userAgent: String? = nil, deviceID: String? = nil, platform: Platform? = nil) {
        self.ip = ip
        self.userAgent = userAgent
        self.deviceID = deviceID
        self.platform = platform
    }
}

/// What a Verify Push challenge shows on the device.
public struct PushPrompt: Sendable, Hashable {
    /// The main text of the prompt.
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

    /// A prompt showing `message`, with optional detail lines and hidden details.
    public init(message: String, details: [(label: String, value: String)] = [], hiddenDetails: [String: String] = [:])
    {
        self.message = message
        self.detailPairs = details.map { Detail(label: $0.label, value: $0.value) }
        self.hiddenDetails = hiddenDetails
    }
}

/// The token a device's SDK enrols a push factor with (`POST /v1/factors/access-tokens`): a server call.
public struct FactorAccessToken: Sendable, Hashable {
    /// The provider that issued the token.
    public var provider: String
    /// The user identity the factor is enrolled for.
    public var identity: String
    /// The token the SDK enrols with.
    public var token: String
    /// The kind of factor (`push`).
    public var factorType: String
    /// When the token stops working.
    public var expiresAt: Date
    /// What else the SDK needs (Twilio: `service_sid`, `base_url`, `access_token_sid`).
    public var details: [String: JSONValue]
}

/// A message the sandbox's emulators "sent" (`GET /sandbox/outbox`): what the user's phone would receive.
public struct SandboxMessage: Sendable, Hashable {
    /// The plugin id of the emulated vendor (`twilio`).
    public var provider: String
    /// `sms`, `voice`, `whatsapp`, `email`, `push`, `flash_call` or `silent_auth`.
    public var kind: String
    /// The vendor's name for the channel (Twilio's `call` for voice).
    public var channel: String
    /// The recipient, as the vendor got it.
    public var to: String
    /// The code the user would type; for a flash call, the caller number; nil for a push.
    public var code: String?
    /// The message as the user would read it.
    public var text: String
    /// The language ``text`` is written in, when the emulator chose one.
    public var language: String?
    /// When the emulator sent it.
    public var sentAt: Date
}
