import Foundation
import GatewayCore
import Logging

extension TwilioEmulator {
    /// The channels the emulator delivers on (`sna` and `auto` are not emulated: 60200).
    static let channels: Set<String> = ["sms", "call", "whatsapp", "email"]

    /// `POST …/Verifications`: a new verification, or another send of the pending one for this `To`.
    func start(_ form: [String: String], now: Date) async -> TransportResponse {
        guard let to = form["To"], !to.isEmpty else { return Self.invalidParameter("To") }
        guard let channel = form["Channel"], Self.channels.contains(channel) else {
            return Self.invalidParameter("Channel")
        }
        guard Self.isValid(to: to, channel: channel) else { return Self.invalidParameter("To") }
        if let locale = form["Locale"], !locale.isEmpty,
            !TwilioLocale.supported.contains(where: { $0.caseInsensitiveCompare(locale) == .orderedSame })
        {
            return Self.invalidParameter("Locale")
        }
        let attempt = TwilioEmulatorState.SendAttempt(time: now, channel: channel, attemptSID: "VL" + Self.randomHex())
        let created = TwilioEmulatorState.Verification(
            sid: "VE" + Hex.timeOrdered(now: now), to: to, channel: channel, code: Self.randomCode(), status: "pending",
            checks: 0, sendAttempts: [attempt], createdAt: now, updatedAt: now, deleted: false)
        guard
            let outcome = await withState(
                now: now,
                { state -> Result<TwilioEmulatorState.Verification, StartRefusal> in
                    if var pending = try state.current(for: to, statuses: ["pending"]) {
                        guard pending.sendAttempts.count < TwilioWire.maxSends else { return .failure(.maxSends) }
                        pending.sendAttempts.append(attempt)
                        pending.channel = channel
                        pending.updatedAt = now
                        try state.put(pending)
                        return .success(pending)
                    }
                    try state.put(created)
                    return .success(created)
                })
        else { return Self.serverError(500) }
        switch outcome {
        case .failure:
            return Self.error(429, code: 60203, message: "Max send attempts reached")
        case .success(let verification):
            // Written in the locale the provider asked for, which is the language it reports.
            let message = SandboxMessages.verificationCode(verification.code, language: form["Locale"])
            outbox.record(
                SandboxOutbox.Message(
                    // Twilio's `call` is the gateway's voice: the kind says so, the channel keeps Twilio's name.
                    provider: "twilio", kind: TwilioWire.channel(named: channel).map(SandboxOutbox.Message.Kind.init),
                    channel: channel, to: to, code: verification.code, text: message.text,
                    language: message.language, sentAt: now))
            logger.debug(
                "twilio sandbox sent a code",
                metadata: [
                    "channel": "\(channel)", "to": "\(Self.mask(to))",
                    "twilio.sends": "\(verification.sendAttempts.count)",
                ])
            return Self.json(201, Self.resource(verification))
        }
    }

    /// Why a start was refused inside its transaction.
    enum StartRefusal: Error {
        case maxSends
    }

    /// What a check found, decided inside its transaction and answered outside it.
    private enum CheckOutcome: Sendable {
        case notFound
        case maxChecks
        case checked(TwilioEmulatorState.Verification)
    }

    /// `POST …/VerificationCheck`: a wrong code is a 200 with `pending`; the sixth check is 60202.
    func check(_ form: [String: String], now: Date) async -> TransportResponse {
        guard let code = form["Code"], TwilioWire.codeLengths.contains(code.count) else {
            return Self.invalidParameter("Code")
        }
        let sid = form["VerificationSid"].flatMap { $0.isEmpty ? nil : $0 }
        let to = form["To"].flatMap { $0.isEmpty ? nil : $0 }
        guard sid != nil || to != nil else {
            return Self.error(400, code: 60221, message: "No target verification specified")
        }
        guard
            let outcome = await withState(
                now: now,
                { state -> CheckOutcome in
                    let live: Set<String> = ["pending", "max_attempts_reached"]
                    let found: TwilioEmulatorState.Verification?
                    if let sid {
                        found = try state.verification(sid).flatMap {
                            !$0.deleted && live.contains($0.status) ? $0 : nil
                        }
                    } else if let to {
                        found = try state.current(for: to, statuses: live)
                    } else {
                        found = nil
                    }
                    guard var verification = found else { return .notFound }
                    guard verification.checks < TwilioWire.maxChecks else {
                        verification.status = "max_attempts_reached"
                        verification.updatedAt = now
                        try state.put(verification)
                        return .maxChecks
                    }
                    verification.checks += 1
                    verification.updatedAt = now
                    if ConstantTime.equals(code, verification.code) {
                        verification.status = "approved"
                        verification.deleted = true
                    }
                    try state.put(verification)
                    return .checked(verification)
                })
        else { return Self.serverError(500) }
        switch outcome {
        case .notFound: return Self.notFound()
        case .maxChecks: return Self.error(429, code: 60202, message: "Max check attempts reached")
        case .checked(let verification): return Self.json(200, Self.checkResource(verification))
        }
    }

    /// `GET …/Verifications/{Sid}`: approved and expired verifications are gone (404). As at Twilio, the
    /// `To` (percent-encoded) may stand in for the `VE…` SID: it names the number's pending verification.
    func fetch(sid: String, now: Date) async -> TransportResponse {
        guard
            let found = await withState(
                now: now,
                { state -> TwilioEmulatorState.Verification? in
                    try Self.verification(state, named: sid).flatMap { $0.deleted ? nil : $0 }
                })
        else { return Self.serverError(500) }
        guard let found else { return Self.notFound() }
        return Self.json(200, Self.resource(found))
    }

    /// `POST …/Verifications/{Sid}` with `Status=canceled|approved`.
    func update(sid: String, form: [String: String], now: Date) async -> TransportResponse {
        guard let status = form["Status"], status == "canceled" || status == "approved" else {
            return Self.invalidParameter("Status")
        }
        guard
            let updated = await withState(
                now: now,
                { state -> TwilioEmulatorState.Verification? in
                    guard var verification = try Self.verification(state, named: sid), !verification.deleted else {
                        return nil
                    }
                    if verification.status == "pending" {
                        verification.status = status
                        verification.updatedAt = now
                        verification.deleted = status == "approved"
                        try state.put(verification)
                    } else if verification.status != status {
                        return nil
                    }
                    return verification
                })
        else { return Self.serverError(500) }
        guard let updated else { return Self.notFound() }
        return Self.json(200, Self.resource(updated))
    }

    /// The verification a `…/Verifications/{Sid}` path names: by its `VE…` SID, or by its `To` (the pending
    /// one of that number), which Twilio's Verification resource takes in the SID's place.
    static func verification(_ state: TwilioEmulatorState, named sid: String) throws -> TwilioEmulatorState
        .Verification?
    {
        if sid.hasPrefix("VE") { return try state.verification(sid) }
        guard let to = sid.removingPercentEncoding, !to.isEmpty else { return nil }
        return try state.current(for: to, statuses: ["pending"])
    }

    /// Runs `body` on the verifications as of `now` in one transaction, after sweeping what is due; `nil`
    /// when the sandbox's file failed (logged), which callers answer with Twilio's 500.
    func withState<T: Sendable>(now: Date, _ body: @escaping @Sendable (TwilioEmulatorState) throws -> T) async -> T? {
        await verifications.attempt("twilio sandbox state", logger: logger, now: now, body)
    }

    // MARK: validation and generation

    /// `To` is E.164 (`^\+[1-9]\d{7,14}$`) for phone channels and an email address for `email`.
    static func isValid(to: String, channel: String) -> Bool {
        if channel == "email" {
            let parts = to.split(separator: "@", omittingEmptySubsequences: false)
            return parts.count == 2 && !parts[0].isEmpty && parts[1].contains(".") && !parts[1].hasPrefix(".")
                && !parts[1].hasSuffix(".") && !to.contains(where: \.isWhitespace)
        }
        let digits = to.dropFirst()
        guard to.first == "+", (8...15).contains(digits.count), digits.first != "0",
            digits.allSatisfy({ $0.isASCII && $0.isNumber })
        else { return false }
        // Twilio looks the number up and answers 60200 for one no numbering plan knows (+44740090001).
        return (try? PhoneNumber(parsing: to))?.isValid == true
    }

    /// Six random digits, as a Verify service with the default code length sends.
    static func randomCode() -> String {
        let number = String(Int.random(in: 0..<1_000_000))
        return String(repeating: "0", count: 6 - number.count) + number
    }

    /// 32 random lower-case hex digits, the body of a Twilio SID.
    static func randomHex() -> String {
        // Two draws from the system generator (one `getrandom` each), not one per digit.
        var generator = SystemRandomNumberGenerator()
        return Hex.lowercase(generator.next() as UInt64) + Hex.lowercase(generator.next() as UInt64)
    }

    /// A destination for logs: a masked phone number or email address.
    static func mask(_ to: String) -> String {
        to.contains("@") ? Destination.email(to).masked : PhoneNumber.mask(to)
    }
}
