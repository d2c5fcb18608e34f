import Foundation

/// A provider whose codes the gateway issues itself and sends through a plain messaging API.
///
/// Routing, failover, breakers, experiments, limits, idempotency and the front doors see an ordinary provider:
/// start sends a message, check compares the code, resend sends the same code again (or a new one with
/// ``OwnCodeSettings/newCodeOnResend``). Attempts, expiry and a double-submitted check are the engine's, as for
/// every provider. What is stored with the verification is ``OwnCodeState``: a random seed and the MAC of the
/// code under ``OwnCodeSettings/key``, never the code (docs/own-codes.md).
public struct OwnCodeProvider: VerificationProvider, ResendingProvider, CallbackReceivingProvider {
    /// The provider id from the configuration (`twilio_messaging`).
    public let id: String
    /// SMS only; regions follow from the sender table.
    public let capabilities: ProviderCapabilities
    /// The messaging API behind it.
    public let sender: any MessageSender
    /// The key, code format, templates and senders.
    public let settings: OwnCodeSettings
    private let clock: any WallClock
    private let seedSource: @Sendable () -> [UInt8]

    /// A provider `id` that sends through `sender`; seeds come from the system's secure generator unless tests
    /// pass `seedSource`.
    public init(
        id: String, sender: any MessageSender, settings: OwnCodeSettings, clock: any WallClock,
        seedSource: (@Sendable () -> [UInt8])? = nil
    ) {
        self.id = id
        self.sender = sender
        self.settings = settings
        self.clock = clock
        self.seedSource = seedSource ?? Self.secureSeed
        self.keyID = Data(settings.key.authenticationCode(for: Array("own-code/v1/key-id".utf8)).prefix(8))
            .base64EncodedString()
        self.capabilities = ProviderCapabilities(
            channels: [.sms], excludedRegions: settings.senders.excludedRegions,
            servedRegions: settings.senders.servedRegions, resendKeepsCode: !settings.newCodeOnResend,
            takesCustomCode: true,
            segmentsPerMessage: settings.catalog.segments(format: settings.format, minutes: settings.validityMinutes),
            withheld: sender is any ReceiptReadingSender ? [] : [.callbacks])
    }

    /// Reads the delivery receipts in a callback of the sender's vendor, which the engine records on the
    /// verifications' timelines (docs/own-codes.md, "Receipts"). Offered only over a ``ReceiptReadingSender``.
    public func handleCallback(_ callback: VendorCallback, lookup: VerificationLookup) async throws(GatewayError)
        -> CallbackReply
    {
        guard let reader = sender as? any ReceiptReadingSender else {
            throw GatewayError(.notFound, "Provider `\(id)` takes no callbacks.")
        }
        return CallbackReply(updates: [], receipts: try reader.receipts(in: callback))
    }

    /// Issues a code (or takes the start's ``StartVerification/customCode``) and sends it.
    public func start(_ request: StartVerification) async throws(GatewayError) -> ProviderStartResult {
        guard request.channel == .sms else {
            throw GatewayError(.unsupportedChannel, "Provider \(id) sends its own codes by SMS only.")
        }
        guard case .phone(let number) = request.destination else {
            throw GatewayError(.unsupportedDestination, "Provider \(id) sends to phone numbers only.")
        }
        var format = settings.format
        if let length = request.codeLength { format.length = min(max(length, 4), 10) }
        var state = OwnCodeState(seed: "", digest: "", keyID: keyID, format: format, expiresAt: nil, sends: [])
        if let customCode = request.customCode {
            guard let custom = OwnCodeFormat.custom(customCode) else {
                throw GatewayError(
                    .invalidRequest, "A custom code is 4 to 10 digits, or letters and digits without 0, O, 1, I, L.")
            }
            state.format = custom.format
            issue(&state, custom: custom.code)
        } else {
            issue(&state)
        }
        let send = try await deliver(state, to: number, locales: request.locales, reference: request.verificationID)
        state.sends.append(send)
        return ProviderStartResult(
            reference: send.messageID, state: ProviderState(ownCode: state), expiresAt: state.expiresAt,
            contentLanguage: send.locale, channel: .sms, billedSegments: send.segments)
    }

    /// Compares `code` with the stored digest: `approved` or `pending` (a wrong code, which the engine counts).
    public func check(_ verification: ProviderVerification, code: String) async throws(GatewayError)
        -> ProviderCheckResult
    {
        guard let state = verification.state.ownCodeState, let seed = state.seedBytes, let stored = state.digestBytes
        else {
            throw GatewayError(.internal, "The stored own-code state of this verification is damaged.")
        }
        guard state.keyID == keyID else {
            // Issued under a secret the gateway no longer holds (rotated): no code can match.
            throw GatewayError(.expired, "This code was issued under a previous secret; start a new verification.")
        }
        // The engine expires the verification first; the code keeps its own expiry all the same.
        if let expiresAt = state.expiresAt, clock.now >= expiresAt {
            throw GatewayError(.expired, "This code has expired; start a new verification.")
        }
        guard let entered = state.format.normalized(code) else { return ProviderCheckResult(status: .pending) }
        return ProviderCheckResult(
            status: settings.key.matches(entered, seed: seed, stored: stored) ? .approved : .pending)
    }

    /// Sends the code again: the same one, or a new one (whose digest replaces the old) with
    /// ``OwnCodeSettings/newCodeOnResend``.
    public func resend(_ verification: ProviderVerification, request: ResendRequest) async throws(GatewayError)
        -> ProviderStartResult
    {
        guard case .phone(let number) = verification.destination else {
            throw GatewayError(.unsupportedDestination, "Provider \(id) sends to phone numbers only.")
        }
        if let channel = request.channel, channel != .sms {
            throw GatewayError(.unsupportedChannel, "Provider \(id) sends its own codes by SMS only.")
        }
        guard var state = verification.state.ownCodeState else {
            throw GatewayError(.internal, "The stored own-code state of this verification is damaged.")
        }
        guard state.keyID == keyID else {
            throw GatewayError(
                .invalidRequest,
                "This verification's code was issued under another secret than provider \(id)'s; resend without "
                    + "`provider`, or start a new verification.")
        }
        // A code the caller chose stays the one it chose.
        if settings.newCodeOnResend, state.sealedCode == nil { issue(&state) }
        let send = try await deliver(state, to: number, locales: verification.locales, reference: verification.id)
        state.sends.append(send)
        return ProviderStartResult(
            reference: send.messageID, state: ProviderState(ownCode: state),
            expiresAt: settings.newCodeOnResend && state.sealedCode == nil ? state.expiresAt : nil,
            contentLanguage: send.locale, channel: .sms, billedSegments: send.segments)
    }

    /// Gives `state` a new code: a new seed, the digest of its code (derived from the seed, or `custom`, which
    /// is then kept sealed), and the validity from now.
    private func issue(_ state: inout OwnCodeState, custom: String? = nil) {
        let seed = seedSource()
        let code = custom ?? settings.key.code(seed: seed, format: state.format)
        state.seed = Data(seed).base64EncodedString()
        state.digest = Data(settings.key.digest(code: code, seed: seed)).base64EncodedString()
        state.sealedCode = custom.map { Data(settings.key.seal(code: $0, seed: seed)).base64EncodedString() }
        state.expiresAt = clock.now.addingTimeInterval(Double(settings.validity.components.seconds))
    }

    /// The code of `state`, to send: unsealed when the caller chose it, else derived from the seed.
    private func code(of state: OwnCodeState, seed: [UInt8]) throws(GatewayError) -> String {
        guard let sealed = state.sealedCode else { return settings.key.code(seed: seed, format: state.format) }
        guard let bytes = Data(base64Encoded: sealed),
            let code = settings.key.unseal(Array(bytes), seed: seed), state.format.normalized(code) == code
        else { throw GatewayError(.internal, "The stored own-code state of this verification is damaged.") }
        return code
    }

    /// Renders the code of `state` for `number` and sends it from the number's sender.
    private func deliver(_ state: OwnCodeState, to number: PhoneNumber, locales: [String], reference: String?)
        async throws(GatewayError) -> OwnCodeSend
    {
        guard let seed = state.seedBytes else {
            throw GatewayError(.internal, "The stored own-code state of this verification is damaged.")
        }
        guard let from = settings.senders.sender(for: number.region) else {
            throw GatewayError(
                .unsupportedDestination,
                "Provider \(id) has no sender for \(number.region ?? "this number's country").")
        }
        let code = try code(of: state, seed: seed)
        let message = settings.catalog.render(code: code, locales: locales, minutes: settings.validityMinutes)
        let sent = try await sender.send(
            OutboundMessage(
                to: number, from: from, text: message.text, encoding: message.measurement.encoding,
                segments: message.measurement.segments, reference: reference ?? "", validity: settings.validity))
        return OwnCodeSend(
            provider: id, messageID: sent.messageID, sender: from.value, locale: message.locale,
            encoding: message.measurement.encoding, segments: sent.segments ?? message.measurement.segments,
            status: sent.status, sentAt: clock.now)
    }

    /// Names the key without revealing it: the first 8 bytes of its MAC of a fixed label, Base64. States made under
    /// another key (a rotated secret, another gateway's) are told apart by it. Computed once, with the provider.
    let keyID: String

    private static let secureSeed: @Sendable () -> [UInt8] = {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}

/// What an own-code verification keeps in its provider state: the seed its code derives from, the MAC of the
/// code, the code's format, and each message sent. Never the code.
public struct OwnCodeState: Codable, Sendable, Hashable {
    /// The random seed, Base64.
    public var seed: String
    /// The MAC of the code under the key, bound to the seed, Base64.
    public var digest: String
    /// Which key the code was issued under (not the key: a MAC of a fixed label).
    public var keyID: String
    /// The code's length and alphabet.
    public var format: OwnCodeFormat
    /// When the code stops working.
    public var expiresAt: Date?
    /// Every message sent for the verification, first to last.
    public var sends: [OwnCodeSend]
    /// A code the caller chose (which the seed cannot derive), sealed under the key and the seed
    /// (``OwnCodeKey/seal(code:seed:)``), Base64; `nil` for the gateway's own.
    public var sealedCode: String?

    enum CodingKeys: String, CodingKey {
        case seed, digest, format, sends
        case keyID = "key_id"
        case expiresAt = "expires_at"
        case sealedCode = "sealed_code"
    }

    var seedBytes: [UInt8]? { Data(base64Encoded: seed).map(Array.init) }
    var digestBytes: [UInt8]? { Data(base64Encoded: digest).map(Array.init) }
}

/// One message sent for an own-code verification.
public struct OwnCodeSend: Codable, Sendable, Hashable {
    /// The provider that sent it.
    public var provider: String
    /// The vendor's message id.
    public var messageID: String
    /// The sender it came from.
    public var sender: String
    /// The template's language tag.
    public var locale: String
    /// Its encoding.
    public var encoding: SMSEncoding
    /// The segments it was sent (and billed) in.
    public var segments: Int
    /// The delivery status the vendor last reported.
    public var status: DeliveryStatus
    /// When the vendor accepted it (the gateway's clock); `nil` in states stored before the gateway kept it.
    /// Its `delivered` receipt's arrival less this is the delivery time of the console's figures.
    public var sentAt: Date?

    enum CodingKeys: String, CodingKey {
        case provider, sender, locale, encoding, segments, status
        case messageID = "message_id"
        case sentAt = "sent_at"
    }
}
