import Foundation

/// The SMS-pumping guard (docs/design.md §9): per number prefix, it watches how many starts convert (reach an
/// approval) within a window. A prefix that has taken at least ``minStarts`` starts in the window while
/// converting below ``conversionFloor`` is blocked for ``coolDown``: bots pumping premium or
/// attacker-owned ranges start verifications and never check a code. Blocked starts answer
/// `destination_blocked` (class `blocked`, never failed over) before any vendor is paid.
public struct PumpingGuard: Sendable, Equatable {
    /// Digits of the E.164 number (after `+`) that make its prefix.
    public var prefixDigits: Int
    /// How far back starts and approvals are counted, in seconds.
    public var window: TimeInterval
    /// Starts to a prefix within the window before its conversion is judged: how many starts an attack gets
    /// before the block.
    public var minStarts: Int
    /// Approvals ÷ starts below this blocks the prefix.
    public var conversionFloor: Double
    /// How long a prefix stays blocked once tripped, in seconds.
    public var coolDown: TimeInterval

    /// A guard with the defaults: 6-digit prefixes, one-hour window and cool-down, judged after 20 starts below a 20%
    /// conversion.
    public init(
        prefixDigits: Int = 6, window: TimeInterval = 3600, minStarts: Int = 20, conversionFloor: Double = 0.2,
        coolDown: TimeInterval = 3600
    ) {
        self.prefixDigits = prefixDigits
        self.window = window
        self.minStarts = minStarts
        self.conversionFloor = conversionFloor
        self.coolDown = coolDown
    }

    /// The prefix of `number` this guard counts under.
    public func prefix(of number: PhoneNumber) -> String {
        "+" + String(number.e164.dropFirst().prefix(prefixDigits))
    }
}

/// A prefix the pumping guard (or an operator) blocked.
public struct PrefixBlock: Sendable, Equatable, Codable {
    /// The blocked prefix, `+` and its digits (`+447700`).
    public var prefix: String
    /// When the block began.
    public var blockedAt: Date
    /// When the block ends; starts to the prefix are refused until then.
    public var until: Date
    /// Starts and approvals in the window when it was blocked.
    public var starts: Int
    /// Approvals counted in the window when the prefix was blocked.
    public var approvals: Int
    /// The refused start that tripped the guard, kept as a `blocked` verification whose timeline shows why.
    public var verificationID: String?

    /// A block of `prefix` from `blockedAt` until `until`.
    public init(
        prefix: String, blockedAt: Date, until: Date, starts: Int, approvals: Int, verificationID: String? = nil
    ) {
        self.verificationID = verificationID
        self.prefix = prefix
        self.blockedAt = blockedAt
        self.until = until
        self.starts = starts
        self.approvals = approvals
    }
}

extension VerificationService {
    /// Refuses a start to a blocked prefix, counts it, and blocks the prefix when its conversion has fallen
    /// below the floor. Runs after the other refusals, so only starts that would be sent are counted.
    func guardPumping(_ request: StartVerification, apiKeyID: String?) async throws(GatewayError) {
        guard let settings = policy.pumpingGuard, let number = request.destination.phoneNumber else { return }
        let prefix = settings.prefix(of: number)
        let now = clock.now
        if let block = try await store.activeBlock(prefix: prefix, at: now) {
            metrics.pumpingRefused(country: number.region ?? "unknown", tripped: false)
            await countRefusal?("pumping_guard", now)
            throw Self.blockedError(block, now: now)
        }
        let starts = try await store.add("pump:starts:" + prefix, window: settings.window, at: now)
        guard starts >= settings.minStarts else { return }
        let approvals = try await store.count("pump:approved:" + prefix, window: settings.window, at: now)
        guard Double(approvals) < settings.conversionFloor * Double(starts) else { return }
        let id = Self.newID()
        let block = PrefixBlock(
            prefix: prefix, blockedAt: now, until: now.addingTimeInterval(settings.coolDown), starts: starts,
            approvals: approvals, verificationID: id)
        try await store.block(block)
        // The start that tripped the guard is kept, blocked, so its timeline shows the block and why.
        let record = VerificationRecord(
            id: id, destination: request.destination, channel: request.channel, providerID: "-",
            providerReference: nil, status: .blocked, maxAttempts: 0, sends: 0, createdAt: now, updatedAt: now,
            expiresAt: now, locales: request.locales, route: "pumping_guard", clientReference: request.clientReference,
            metadata: request.metadata, apiKeyID: apiKeyID, statusReason: "pumping_guard")
        try await store.insert(
            record,
            events: [
                VerificationEvent(
                    verificationID: id, kind: .statusChanged, at: now,
                    detail: [
                        "status": "blocked", "reason": "pumping_guard", "prefix": prefix, "starts": String(starts),
                        "approvals": String(approvals), "until": NextAction.timestamp(block.until),
                    ])
            ])
        logger.warning(
            "sms pumping suspected: prefix blocked",
            metadata: [
                "prefix": "\(prefix)", "starts": "\(starts)", "approvals": "\(approvals)",
                "until": "\(block.until.timeIntervalSince1970)",
            ])
        metrics.pumpingRefused(country: number.region ?? "unknown", tripped: true)
        await countRefusal?("pumping_guard", now)
        metrics.finished(record)
        throw Self.blockedError(block, now: now)
    }

    /// Counts an approval toward its prefix's conversion.
    func countConversion(_ record: VerificationRecord) async {
        guard let settings = policy.pumpingGuard, let number = record.destination.phoneNumber, !record.isTestNumber
        else { return }
        _ = try? await store.add("pump:approved:" + settings.prefix(of: number), window: settings.window, at: clock.now)
    }

    static func blockedError(_ block: PrefixBlock, now: Date) -> GatewayError {
        GatewayError(
            .destinationBlocked,
            "Verifications to numbers starting \(block.prefix) are blocked for a while: too many started, too few "
                + "completed (suspected SMS pumping).",
            retryAfter: max(1, Int(block.until.timeIntervalSince(now).rounded(.up))))
    }

    /// The blocks in force, for the admin API.
    public func prefixBlocks() async throws(GatewayError) -> [PrefixBlock] {
        try await store.blocks(at: clock.now)
    }

    /// Lifts a block; `false` when the prefix was not blocked.
    public func liftBlock(prefix: String) async throws(GatewayError) -> Bool {
        let lifted = try await store.liftBlock(prefix: prefix, at: clock.now)
        if lifted { logger.notice("prefix block lifted", metadata: ["prefix": "\(prefix)"]) }
        return lifted
    }
}
