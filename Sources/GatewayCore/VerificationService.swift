import Foundation
import Logging

/// Limits the gateway enforces itself, whatever the vendor does.
public struct VerificationPolicy: Sendable, Equatable {
    /// How long a verification stays pending when the vendor does not say.
    public var codeValidity: TimeInterval = 600
    /// Checks allowed per verification.
    public var maxAttempts: Int = 5
    /// Sends allowed per verification, the start included.
    public var maxSends: Int = 5
    /// The total time a start may spend across providers.
    public var startDeadline: Duration = .seconds(30)
    /// Test numbers (E.164) and their fixed codes: never sent to a vendor (docs/routing.md).
    public var testNumbers: [String: String] = [:]

    public init(
        codeValidity: TimeInterval = 600, maxAttempts: Int = 5, maxSends: Int = 5,
        startDeadline: Duration = .seconds(30), testNumbers: [String: String] = [:]
    ) {
        self.codeValidity = codeValidity
        self.maxAttempts = maxAttempts
        self.maxSends = maxSends
        self.startDeadline = startDeadline
        self.testNumbers = testNumbers
    }
}

/// The result of a successful check.
public struct CheckOutcome: Sendable {
    public var record: VerificationRecord
    /// Vendor tokens issued on approval.
    public var providerTokens: [String: String]
}

/// The verification engine: routes starts, keeps records and events, enforces the status machine
/// and the gateway's own limits. It knows providers only through ``VerificationProvider``.
public struct VerificationService: Sendable {
    public let registry: ProviderRegistry
    public let routing: RoutingTable
    public let store: any VerificationStore
    public let clock: any WallClock
    public let policy: VerificationPolicy
    public let logger: Logger
    /// Per provider and country; shared by every start this service makes.
    public let breakers: CircuitBreakers

    public init(
        registry: ProviderRegistry, routing: RoutingTable, store: any VerificationStore,
        clock: any WallClock = SystemClock(), policy: VerificationPolicy = VerificationPolicy(),
        breakers: CircuitBreakers? = nil, logger: Logger = Logger(label: "gateway.verifications")
    ) {
        self.registry = registry
        self.routing = routing
        self.store = store
        self.clock = clock
        self.policy = policy
        self.breakers = breakers ?? CircuitBreakers(clock: clock)
        self.logger = logger
    }

    // MARK: start

    /// Starts a verification at the first candidate provider that accepts it.
    ///
    /// Providers are tried one at a time, never raced. The next one is tried only after a
    /// `provider_transient` or `provider_permanent` error that happened before the vendor could have
    /// accepted the send (or after an ambiguous timeout, when the route allows it), and only within
    /// ``VerificationPolicy/startDeadline``. A candidate whose circuit breaker is open is skipped.
    public func start(
        _ request: StartVerification, apiKeyID: String? = nil, apiKeyName: String? = nil
    ) async throws(GatewayError) -> VerificationRecord {
        if let forced = request.forcedProvider, registry.provider(forced) == nil {
            throw GatewayError(.invalidRequest, "`provider` names no configured provider.")
        }
        try Self.checkDestination(request)
        if let number = request.destination.phoneNumber, policy.testNumbers[number.e164] != nil {
            return try await startTestNumber(request, apiKeyID: apiKeyID)
        }
        let decision = routing.decide(request, apiKey: apiKeyName, registry: registry)
        let candidates = decision.candidates
        guard !candidates.isEmpty else {
            let onlyUnknown =
                !decision.skipped.isEmpty && decision.skipped.allSatisfy { $0.reason == "unknown_provider" }
            if !onlyUnknown && decision.skipped.allSatisfy({ $0.reason == "channel_not_supported" }) {
                throw GatewayError(
                    .unsupportedChannel, "No configured provider can send over \(request.channel.rawValue).")
            }
            throw GatewayError(.noProviderAvailable, "No provider is available for this request.")
        }
        let id = Self.newID()
        let deadline = ContinuousClock.now.advanced(by: policy.startDeadline)
        var calls: [VerificationEvent] = []
        var failovers: [String] = []
        var lastError: GatewayError?
        var proofError: GatewayError?
        var skipped = decision.skipped
        for provider in candidates {
            if !calls.isEmpty, ContinuousClock.now >= deadline {
                skipped.append(RoutingTable.Skip(providerID: provider.id, reason: "deadline_passed"))
                continue
            }
            do {
                try Self.checkAppVerification(request, for: provider)
            } catch {
                // A candidate that needs an app-verification proof the request lacks is skipped, not
                // failed: a later candidate may send without one. Only if none can is this the answer.
                skipped.append(RoutingTable.Skip(providerID: provider.id, reason: "app_verification_missing"))
                if proofError == nil { proofError = error }
                continue
            }
            guard breakers.allow(provider.id, country: decision.country) else {
                skipped.append(RoutingTable.Skip(providerID: provider.id, reason: "breaker_open"))
                continue
            }
            let began = ContinuousClock.now
            do {
                let result = try await provider.start(request)
                breakers.record(provider.id, country: decision.country, failure: false)
                calls.append(callEvent(id, provider.id, "start", outcome: "accepted", since: began))
                return try await persistStart(
                    id: id, request: request, provider: provider, result: result, apiKeyID: apiKeyID,
                    events: calls, skipped: skipped, decision: decision, failovers: failovers)
            } catch {
                calls.append(callEvent(id, provider.id, "start", outcome: error.code.rawValue, since: began))
                let vendorFailed = error.errorClass == .providerTransient || error.errorClass == .providerPermanent
                breakers.record(
                    provider.id, country: decision.country, failure: vendorFailed,
                    retryAfter: error.retryAfter.map(TimeInterval.init))
                logger.warning(
                    "provider start failed",
                    metadata: [
                        "provider.id": "\(provider.id)", "error.code": "\(error.code.rawValue)",
                        "vendor.code": "\(error.vendor?.code ?? "-")", "to": "\(request.destination.masked)",
                    ])
                lastError = error
                failovers.append("\(provider.id):\(error.code.rawValue)")
                let failOver = vendorFailed && (!error.sendMayHaveHappened || decision.failoverOnTimeout)
                if !failOver {
                    await recordFailedStart(
                        id: id, request: request, decision: decision, failovers: failovers,
                        error: error, apiKeyID: apiKeyID, events: calls)
                    throw error
                }
            }
        }
        var failure =
            lastError ?? proofError
            ?? GatewayError(.noProviderAvailable, "No provider is available for this request.")
        if lastError == nil, skipped.contains(where: { $0.reason == "breaker_open" }) {
            failure = GatewayError(
                .noProviderAvailable,
                "Every provider for this destination is failing; their circuit breakers are open. Retry later.")
        }
        await recordFailedStart(
            id: id, request: request, decision: decision, failovers: failovers, error: failure,
            apiKeyID: apiKeyID, events: calls)
        throw failure
    }

    /// A start an experiment assigned but no vendor accepted is still a user in that arm: it is stored as
    /// `failed` so the experiment report counts it (intention to treat). Other failed starts keep no
    /// record. Storing must not hide the vendor's error, so a storage failure here is only logged.
    private func recordFailedStart(
        id: String, request: StartVerification, decision: RoutingTable.Decision, failovers: [String],
        error: GatewayError, apiKeyID: String?, events: [VerificationEvent]
    ) async {
        guard let experiment = decision.experiment, let arm = decision.arm else { return }
        let now = clock.now
        let providerID = routing.experiments[experiment]?.arms.first { $0.name == arm }?.providerID ?? "-"
        let record = VerificationRecord(
            id: id, destination: request.destination, channel: request.channel, providerID: providerID,
            providerReference: nil, status: .failed, maxAttempts: policy.maxAttempts, sends: 0, createdAt: now,
            updatedAt: now, expiresAt: now, locales: request.locales, route: decision.route, experiment: experiment,
            experimentArm: arm, failovers: failovers, clientReference: request.clientReference,
            metadata: request.metadata, apiKeyID: apiKeyID)
        do {
            try await store.insert(record)
            try await store.append(
                VerificationEvent(
                    verificationID: id, kind: .statusChanged, at: now,
                    detail: ["status": "failed", "error": error.code.rawValue, "route": decision.route, "arm": arm]))
            for event in events { try await store.append(event) }
        } catch {
            logger.error("failed start not recorded", metadata: ["verification.id": "\(id)"])
        }
    }

    /// What ``dryRun(_:apiKeyName:)`` found.
    public struct DryRun: Sendable {
        public struct Candidate: Sendable {
            public var providerID: String
            public var breaker: CircuitBreakers.State
            /// Why a start would pass over this candidate (`breaker_open`, `app_verification_missing`).
            public var skipReason: String?
        }

        public var route: String
        public var experiment: String?
        public var arm: String?
        public var country: String?
        /// The provider a start would call first; nil when none would.
        public var provider: String?
        public var isTestNumber: Bool
        public var failoverOnTimeout: Bool
        public var candidates: [Candidate]
        /// Passed over by routing itself (unknown provider, channel not supported, country excluded).
        public var skipped: [RoutingTable.Skip]
        /// What a start would answer before calling anyone, if it would fail.
        public var error: GatewayError?
    }

    /// Answers which provider a start would use and why, sending nothing and changing no breaker.
    public func dryRun(_ request: StartVerification, apiKeyName: String? = nil) throws(GatewayError) -> DryRun {
        if let forced = request.forcedProvider, registry.provider(forced) == nil {
            throw GatewayError(.invalidRequest, "`provider` names no configured provider.")
        }
        let country = request.destination.phoneNumber?.region
        var refusal: GatewayError?
        do {
            try Self.checkDestination(request)
        } catch {
            refusal = error
        }
        if let number = request.destination.phoneNumber, policy.testNumbers[number.e164] != nil {
            return DryRun(
                route: "test_number", country: country, provider: TestNumberProvider.providerID, isTestNumber: true,
                failoverOnTimeout: false, candidates: [], skipped: [], error: refusal)
        }
        let decision = routing.decide(request, apiKey: apiKeyName, registry: registry)
        var candidates: [DryRun.Candidate] = []
        for provider in decision.candidates {
            var reason: String?
            do {
                try Self.checkAppVerification(request, for: provider)
            } catch {
                reason = "app_verification_missing"
            }
            if reason == nil, !breakers.wouldAllow(provider.id, country: country) { reason = "breaker_open" }
            candidates.append(
                DryRun.Candidate(
                    providerID: provider.id, breaker: breakers.state(provider.id, country: country), skipReason: reason)
            )
        }
        let first = candidates.first { $0.skipReason == nil }?.providerID
        if refusal == nil && first == nil {
            refusal = GatewayError(.noProviderAvailable, "No candidate provider would be tried.")
        }
        return DryRun(
            route: decision.route, experiment: decision.experiment, arm: decision.arm, country: country,
            provider: refusal == nil ? first : nil, isTestNumber: false, failoverOnTimeout: decision.failoverOnTimeout,
            candidates: candidates, skipped: decision.skipped, error: refusal)
    }

    /// A configured test number: recorded like any verification, but no vendor is called.
    private func startTestNumber(_ request: StartVerification, apiKeyID: String?) async throws(GatewayError)
        -> VerificationRecord
    {
        let provider = TestNumberProvider(codes: policy.testNumbers)
        let result = try await provider.start(request)
        let decision = RoutingTable.Decision(
            route: "test_number", experiment: nil, arm: nil, candidates: [], skipped: [], failoverOnTimeout: false,
            country: request.destination.phoneNumber?.region)
        return try await persistStart(
            id: Self.newID(), request: request, provider: provider, result: result, apiKeyID: apiKeyID, events: [],
            skipped: [], decision: decision, failovers: [], isTestNumber: true)
    }

    /// Refuses, before any vendor is paid, an SMS to a number that cannot take one (a fixed line).
    static func checkDestination(_ request: StartVerification) throws(GatewayError) {
        guard request.channel == .sms, let number = request.destination.phoneNumber, number.type.refusesSMS else {
            return
        }
        throw GatewayError(
            .unsupportedDestination,
            "`to` is a \(number.type.rawValue) number, which cannot receive an SMS; use the voice channel.")
    }

    static func checkAppVerification(
        _ request: StartVerification, for provider: any VerificationProvider
    ) throws(GatewayError) {
        let capabilities = provider.capabilities
        guard provider.requiresAppVerification(for: request) else { return }
        let accepted = capabilities.appVerificationKinds.map(\.rawValue).sorted().joined(separator: ", ")
        guard let proof = request.appVerification else {
            throw GatewayError(
                .appVerificationRequired,
                "Provider \(provider.id) needs an app verification proof; send `app_verification` with type one of: \(accepted)."
            )
        }
        guard capabilities.appVerificationKinds.contains(proof.kind) else {
            throw GatewayError(
                .appVerificationRequired,
                "Provider \(provider.id) does not accept app verification of type \(proof.kind.rawValue); use one of: \(accepted)."
            )
        }
    }

    private func persistStart(
        id: String, request: StartVerification, provider: any VerificationProvider, result: ProviderStartResult,
        apiKeyID: String?, events: [VerificationEvent], skipped: [RoutingTable.Skip], decision: RoutingTable.Decision,
        failovers: [String], isTestNumber: Bool = false
    ) async throws(GatewayError) -> VerificationRecord {
        let now = clock.now
        let record = VerificationRecord(
            id: id,
            destination: request.destination,
            channel: result.channel ?? request.channel,
            providerID: provider.id,
            providerReference: result.reference,
            providerState: result.state,
            status: result.status,
            maxAttempts: policy.maxAttempts,
            createdAt: now,
            updatedAt: now,
            expiresAt: result.expiresAt ?? now.addingTimeInterval(policy.codeValidity),
            contentLanguage: result.contentLanguage,
            locales: request.locales,
            route: decision.route,
            experiment: decision.experiment,
            experimentArm: decision.arm,
            failovers: failovers,
            isTestNumber: isTestNumber,
            clientReference: request.clientReference,
            metadata: request.metadata,
            apiKeyID: apiKeyID)
        try await store.insert(record)
        var detail = ["provider": provider.id, "channel": record.channel.rawValue, "route": decision.route]
        if let experiment = decision.experiment { detail["experiment"] = experiment }
        if let arm = decision.arm { detail["arm"] = arm }
        if let country = decision.country { detail["country"] = country }
        if isTestNumber { detail["test_number"] = "true" }
        if !failovers.isEmpty { detail["failovers"] = failovers.joined(separator: ",") }
        if !skipped.isEmpty {
            detail["skipped"] = skipped.map { "\($0.providerID):\($0.reason)" }.joined(separator: ",")
        }
        try await store.append(VerificationEvent(verificationID: id, kind: .started, at: now, detail: detail))
        for event in events { try await store.append(event) }
        logger.info(
            "verification started",
            metadata: [
                "verification.id": "\(id)", "provider.id": "\(provider.id)", "channel": "\(record.channel.rawValue)",
                "to": "\(request.destination.masked)",
            ])
        return record
    }

    // MARK: check

    /// Checks a code. A wrong code throws `incorrect_code` with the attempts left; the last wrong code
    /// throws `max_attempts_reached`.
    public func check(_ request: CheckVerification) async throws(GatewayError) -> CheckOutcome {
        // Reserve the attempt first, with compare-and-set, so concurrent checks are counted honestly.
        var record = try await current(request.verificationID)
        if request.code == nil && record.channel != .push {
            throw GatewayError.invalidRequest("`code` is required.")
        }
        let provider = try provider(for: record)
        while true {
            if let error = record.status.finalStateError { throw error }
            if record.attempts >= record.maxAttempts {
                // The check holding the last attempt settles the record itself; settling here could
                // overwrite an approval that is still on its way back from the vendor.
                throw GatewayError(
                    .maxAttemptsReached, "Too many wrong codes for this verification; start a new one.",
                    attemptsRemaining: 0)
            }
            var reserved = record
            reserved.attempts += 1
            reserved.updatedAt = clock.now
            reserved.version += 1
            if try await store.update(reserved) {
                record = reserved
                break
            }
            record = try await current(request.verificationID)
        }
        let began = ContinuousClock.now
        let result: ProviderCheckResult
        do {
            result = try await provider.check(ProviderVerification(record), code: request.code)
            try await store.append(
                callEvent(record.id, provider.id, "check", outcome: result.status.rawValue, since: began))
        } catch {
            try await store.append(
                callEvent(record.id, provider.id, "check", outcome: error.code.rawValue, since: began))
            try await handleVendorCheckError(error, record: record)
        }
        try await store.append(
            VerificationEvent(
                verificationID: record.id, kind: .checked, at: clock.now,
                detail: ["outcome": result.status.rawValue, "attempt": String(record.attempts)]))
        switch result.status {
        case .approved:
            let approved = try await settle(record, status: .approved, event: .statusChanged, state: result.state)
            // A cancel that won the race leaves the record canceled: never report success for it.
            guard approved.status == .approved else { throw approved.status.finalStateError ?? .internal() }
            return CheckOutcome(record: approved, providerTokens: result.tokens)
        case .pending where request.code == nil:
            // A push approval not answered yet: polling costs no attempt.
            var refunded = record
            refunded.attempts -= 1
            refunded = try await save(refunded)
            return CheckOutcome(record: refunded, providerTokens: [:])
        case .pending:
            if let state = result.state, state != record.providerState {
                // The vendor rotated its state on a wrong code; later calls need the new one.
                var rotated = try await current(record.id)
                rotated.providerState = state
                record = (try? await save(rotated)) ?? record
            }
            let remaining = min(record.attemptsRemaining, result.attemptsRemaining ?? Int.max)
            if remaining <= 0 {
                _ = try await settle(record, status: .maxAttemptsReached, event: .statusChanged)
                throw GatewayError(
                    .maxAttemptsReached, "Wrong code, and no attempts are left; start a new verification.",
                    attemptsRemaining: 0)
            }
            throw GatewayError(.incorrectCode, "The code is not correct.", attemptsRemaining: remaining)
        default:
            let settled = try await settle(record, status: result.status, event: .statusChanged)
            throw settled.status.finalStateError!
        }
    }

    /// A verification-class error from the vendor changes the record's state before it reaches the caller.
    private func handleVendorCheckError(_ error: GatewayError, record: VerificationRecord) async throws(GatewayError)
        -> Never
    {
        var error = error
        switch error.code {
        case .maxAttemptsReached:
            _ = try await settle(record, status: .maxAttemptsReached, event: .statusChanged)
            error.attemptsRemaining = 0
        case .expired, .notFound:
            // The vendor no longer knows a verification we hold: for the caller it has expired.
            _ = try await settle(record, status: .expired, event: .statusChanged)
            error.code = .expired
            error.message = "This verification has expired; start a new one."
        case .alreadyApproved:
            _ = try await settle(record, status: .approved, event: .statusChanged)
        case .canceled:
            _ = try await settle(record, status: .canceled, event: .statusChanged)
        default:
            // The check never reached a verdict: give the attempt back.
            var refunded = try await current(record.id)
            if refunded.status == .pending, refunded.attempts > 0 {
                refunded.attempts -= 1
                _ = try? await save(refunded)
            }
        }
        throw error
    }

    // MARK: resend, cancel, get

    /// Sends the code again through the provider that started the verification.
    public func resend(
        id: String, channel: Channel? = nil, appVerification: AppVerificationProof? = nil
    ) async throws(GatewayError) -> VerificationRecord {
        var record = try await current(id)
        if let error = record.status.finalStateError { throw error }
        let provider = try provider(for: record)
        guard provider.capabilities.supportsResend else {
            throw GatewayError(.invalidRequest, "Provider \(provider.id) cannot resend; start a new verification.")
        }
        if let channel, channel != record.channel {
            guard provider.capabilities.resendCanChangeChannel, provider.capabilities.channels.contains(channel),
                channel.needsPhoneNumber == record.channel.needsPhoneNumber
            else {
                throw GatewayError(
                    .unsupportedChannel, "This verification cannot be resent over \(channel.rawValue).")
            }
        }
        if record.sends >= policy.maxSends {
            throw GatewayError(.maxSendsReached, "The code was sent too many times; wait for it to expire.")
        }
        let began = ContinuousClock.now
        let result: ProviderStartResult
        do {
            result = try await provider.resend(
                ProviderVerification(record), channel: channel, appVerification: appVerification)
            try await store.append(callEvent(record.id, provider.id, "resend", outcome: "accepted", since: began))
        } catch {
            try await store.append(
                callEvent(record.id, provider.id, "resend", outcome: error.code.rawValue, since: began))
            if error.code == .expired || error.code == .notFound {
                _ = try await settle(record, status: .expired, event: .statusChanged)
            }
            throw error
        }
        while true {
            // A vendor that only re-armed a code still valid (Firebase's reentrant start) sent nothing.
            if !result.sentNothing { record.sends += 1 }
            if let channel { record.channel = result.channel ?? channel }
            if let reference = result.reference { record.providerReference = reference }
            if !result.state.isEmpty { record.providerState = result.state }
            if let expiresAt = result.expiresAt { record.expiresAt = expiresAt }
            if let language = result.contentLanguage { record.contentLanguage = language }
            record.updatedAt = clock.now
            record.version += 1
            if try await store.update(record) { break }
            record = try await current(id)
            if let error = record.status.finalStateError { throw error }
        }
        try await store.append(
            VerificationEvent(
                verificationID: id, kind: .resent, at: clock.now,
                detail: [
                    "channel": record.channel.rawValue, "sends": String(record.sends),
                    "sent": result.sentNothing ? "false" : "true",
                ]))
        return record
    }

    /// Cancels a pending verification. Canceling a canceled one returns it unchanged.
    public func cancel(id: String) async throws(GatewayError) -> VerificationRecord {
        let record = try await current(id)
        if record.status == .canceled { return record }
        if let error = record.status.finalStateError { throw error }
        let provider = try provider(for: record)
        if provider.capabilities.supportsCancel {
            let began = ContinuousClock.now
            do {
                try await provider.cancel(ProviderVerification(record))
                try await store.append(callEvent(record.id, provider.id, "cancel", outcome: "canceled", since: began))
            } catch {
                try await store.append(
                    callEvent(record.id, provider.id, "cancel", outcome: error.code.rawValue, since: began))
                // A vendor that already forgot the verification leaves nothing to cancel.
                if error.code != .notFound && error.code != .expired { throw error }
            }
        }
        let canceled = try await settle(record, status: .canceled, event: .canceled)
        // An approval that won the race stays approved, and the caller hears so.
        guard canceled.status == .canceled else { throw canceled.status.finalStateError ?? .internal() }
        return canceled
    }

    /// The current record; a pending verification past its expiry is marked expired.
    public func get(id: String) async throws(GatewayError) -> VerificationRecord {
        try await current(id)
    }

    public func events(id: String) async throws(GatewayError) -> [VerificationEvent] {
        try await store.events(verificationID: id)
    }

    // MARK: helpers

    private func current(_ id: String) async throws(GatewayError) -> VerificationRecord {
        guard Self.isWellFormedID(id), let record = try await store.record(id: id) else {
            throw GatewayError.notFound()
        }
        if record.effectiveStatus(at: clock.now) == .expired, record.status == .pending {
            return try await settle(record, status: .expired, event: .statusChanged)
        }
        return record
    }

    /// Moves a record to a status, retrying on a concurrent update; a record already final stays as it is.
    private func settle(
        _ record: VerificationRecord, status: VerificationStatus, event: VerificationEvent.Kind,
        state: [String: String]? = nil
    ) async throws(GatewayError) -> VerificationRecord {
        var record = record
        while true {
            guard record.status.canTransition(to: status) else { return record }
            if record.status == status { return record }
            var next = record
            next.status = status
            if let state { next.providerState = state }
            next.updatedAt = clock.now
            next.version += 1
            if try await store.update(next) {
                try await store.append(
                    VerificationEvent(
                        verificationID: next.id, kind: event, at: next.updatedAt,
                        detail: ["status": status.rawValue]))
                return next
            }
            guard let reloaded = try await store.record(id: record.id) else { throw GatewayError.notFound() }
            record = reloaded
        }
    }

    private func save(_ record: VerificationRecord) async throws(GatewayError) -> VerificationRecord {
        var next = record
        next.updatedAt = clock.now
        next.version += 1
        guard try await store.update(next) else {
            throw GatewayError(.concurrentVerification, "The verification changed meanwhile; try again.")
        }
        return next
    }

    private func provider(for record: VerificationRecord) throws(GatewayError) -> any VerificationProvider {
        if record.isTestNumber { return TestNumberProvider(codes: policy.testNumbers) }
        guard let provider = registry.provider(record.providerID) else {
            throw GatewayError(
                .noProviderAvailable,
                "The provider that started this verification is no longer configured.")
        }
        return provider
    }

    private func callEvent(
        _ id: String, _ provider: String, _ operation: String, outcome: String, since: ContinuousClock.Instant
    ) -> VerificationEvent {
        let elapsed = ContinuousClock.now - since
        let ms = elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
        return VerificationEvent(
            verificationID: id, kind: .providerCall, at: clock.now,
            detail: ["provider": provider, "operation": operation, "outcome": outcome, "latency_ms": String(ms)])
    }

    /// A new verification id: `vf_` and 32 lowercase hex digits from the system's secure generator.
    public static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        return "vf_" + hex(high) + hex(low)
    }

    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Whether `id` has the shape of a verification id (so malformed ids never reach the store).
    public static func isWellFormedID(_ id: String) -> Bool {
        id.count == 35 && id.hasPrefix("vf_")
            && id.dropFirst(3).unicodeScalars.allSatisfy { ("0"..."9").contains($0) || ("a"..."f").contains($0) }
    }
}
