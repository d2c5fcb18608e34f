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
    /// The risk step of every route without its own (``Route/risk``); `nil`: none.
    public var risk: RiskPolicy?
    /// How long a silent step (`silent_auth` at a provider that cannot send codes) may stay unanswered before
    /// the verification moves to its first fallback channel.
    public var silentAuthTimeout: TimeInterval = 60
    /// Test numbers (E.164) and their fixed codes: never sent to a vendor (docs/routing.md).
    public var testNumbers: [String: String] = [:]
    /// Answers to challenges allowed per verification (each wrong one brings a fresh challenge).
    public var maxChallengeAttempts: Int = 10
    /// Regions (ISO 3166) where a number the metadata calls invalid, but of a possible length, may still be
    /// sent to: for teams whose users have ranges newer than the metadata. Elsewhere such a number is
    /// refused with `invalid_phone_number` before any vendor is paid.
    public var allowUnknownNumbers: Set<String> = []
    /// The gateway's own rate limits (none by default).
    public var rateLimits = RateLimits()
    /// The countries verifications may go to, for every API key.
    public var countries = CountryPermissions()
    /// The SMS-pumping guard; off unless configured.
    public var pumpingGuard: PumpingGuard?
    /// How long one check may hold a verification while its vendor call runs. Other checks of the same
    /// verification wait for it (at most this long); a lease left by a crashed instance lapses after it,
    /// unless that instance is known dead sooner (``LeaseOwners``, docs/architecture.md §9.3).
    public var checkLease: TimeInterval = 30
    /// How long an idempotency key stays after it was claimed (what a client may retry within); older keys
    /// are pruned.
    public var idempotencyRetention: TimeInterval = 86_400

    /// How long an idempotency claim holds its key while the start runs, from the claim and again from the
    /// start's first vendor call: the start deadline plus a margin for one vendor call past it. A claim whose
    /// holder died is taken over after it (docs/architecture.md §9.2).
    public var idempotencyLease: TimeInterval {
        let deadline = startDeadline.components
        return TimeInterval(deadline.seconds) + TimeInterval(deadline.attoseconds) / 1e18
            + Self.idempotencyLeaseMargin
    }

    /// What ``idempotencyLease`` adds to the start deadline: a vendor call begun just before the deadline
    /// may run this long past it.
    public static let idempotencyLeaseMargin: TimeInterval = 15

    /// A policy with the given limits; the rate limits, country permissions and pumping guard are set afterwards.
    public init(
        codeValidity: TimeInterval = 600, maxAttempts: Int = 5, maxSends: Int = 5,
        startDeadline: Duration = .seconds(30), testNumbers: [String: String] = [:],
        maxChallengeAttempts: Int = 10, checkLease: TimeInterval = 30, allowUnknownNumbers: Set<String> = []
    ) {
        self.allowUnknownNumbers = allowUnknownNumbers
        self.maxChallengeAttempts = maxChallengeAttempts
        self.checkLease = checkLease
        self.codeValidity = codeValidity
        self.maxAttempts = maxAttempts
        self.maxSends = maxSends
        self.startDeadline = startDeadline
        self.testNumbers = testNumbers
    }
}

/// The result of a successful check, or of a read that may hand out an approval's token.
public struct CheckOutcome: Sendable {
    /// The verification as stored after the check or read.
    public var record: VerificationRecord
    /// Vendor tokens issued on approval.
    public var providerTokens: [String: JSONValue]
    /// Whether this answer is the one that carries the gateway's signed token: the check that approved,
    /// or the first read after an approval by callback or refresh.
    public var carriesToken: Bool

    /// An outcome for `record`, with no vendor tokens unless given.
    public init(record: VerificationRecord, providerTokens: [String: JSONValue] = [:], carriesToken: Bool) {
        self.record = record
        self.providerTokens = providerTokens
        self.carriesToken = carriesToken
    }
}

/// The verification engine: routes starts, keeps records and events, enforces the status machine
/// and the gateway's own limits. It knows providers only through ``VerificationProvider``.
public struct VerificationService: Sendable {
    /// The configured providers.
    public let registry: ProviderRegistry
    /// Where starts go.
    public let routing: RoutingTable
    /// Where verifications, their events and the gateway's counters are kept.
    public let store: any VerificationStore
    /// The time the engine reads for expiries, leases and windows.
    public let clock: any WallClock
    /// The limits the engine enforces.
    public let policy: VerificationPolicy
    /// The logger for the engine's own messages.
    public let logger: Logger
    /// Per provider and country; shared by every start this service makes.
    public let breakers: CircuitBreakers
    /// Starts, checks, outcomes, vendor latency, failovers and refusals (`docs/operations.md`).
    public let metrics: GatewayMetrics
    /// This instance and the judge of other instances' leases; `nil`: leases carry no owner and a dead
    /// instance's lease lapses only after ``VerificationPolicy/checkLease``.
    public let leaseOwners: (any LeaseOwners)?
    /// The learning of adaptive routes; made from the store when the routing has adaptive routes and none is
    /// given (without prices, so `conversions_per_cost` then ranks by conversions alone).
    public let adaptive: AdaptiveRouter?
    /// Risk signal answers reused per number (``RiskPolicy/cacheFor``).
    let signalCache = RiskSignalCache()
    /// The hash of the client secret a verification gets at its start, from its id (the HTTP layer mints
    /// secrets; the record keeps only this). `nil`: verifications get none.
    public var clientSecretHash: (@Sendable (_ verificationID: String) -> String)?
    /// Counts a refusal where every instance sees it (the console's abuse page): `kind` is
    /// `rate_limit:<what> per <limit>`, `geo:<region>` or `pumping_guard`. Awaited by the refused request, and
    /// never throws: a count that cannot be written is the counter's to log. `nil`: refusals are only in the
    /// metrics.
    public var countRefusal: (@Sendable (_ kind: String, _ at: Date) async -> Void)?
    /// Spans around the engine's steps when the gateway's traces are on; nil (the default): none.
    public var tracer: (any EngineTracer)?

    /// A service over `registry`, `routing` and `store`. Without `breakers`, it makes its own on `clock`; without
    /// `adaptive`, it makes an ``AdaptiveRouter`` over the store when a route is adaptive.
    public init(
        registry: ProviderRegistry, routing: RoutingTable, store: any VerificationStore,
        clock: any WallClock, policy: VerificationPolicy = VerificationPolicy(),
        breakers: CircuitBreakers? = nil, logger: Logger,
        metrics: GatewayMetrics = .disabled, leaseOwners: (any LeaseOwners)? = nil, adaptive: AdaptiveRouter? = nil
    ) {
        let hasAdaptiveRoutes = routing.rules.contains {
            if case .adaptive = $0.target { true } else { false }
        }
        self.adaptive =
            adaptive
            ?? (hasAdaptiveRoutes
                ? AdaptiveRouter(
                    store: store, routing: routing, segmentsPerStart: registry.segmentsPerStart, clock: clock,
                    codeValidity: policy.codeValidity, logger: logger)
                : nil)
        self.metrics = metrics
        self.leaseOwners = leaseOwners
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
    ///
    /// `keyCountries` are the countries the calling API key may send to, when it is limited to some, and
    /// `keyLimit` the key's own limit on starts, on top of the policy's.
    ///
    /// `idempotency`: the claim the start runs under, if the request had an `Idempotency-Key`: before any
    /// vendor is called the claim records the verification id and that a vendor call begins, and a claim
    /// another request took over meanwhile stops the start (`idempotency_conflict`) before anything is sent.
    public func start(
        _ request: StartVerification, apiKeyID: String? = nil, apiKeyName: String? = nil, clientIP: String? = nil,
        keyCountries: Set<String>? = nil, keyLimit: RateLimit? = nil, idempotency: IdempotentStart? = nil
    ) async throws(GatewayError) -> VerificationRecord {
        do {
            let record = try await routeStart(
                request, apiKeyID: apiKeyID, apiKeyName: apiKeyName, clientIP: clientIP, keyCountries: keyCountries,
                keyLimit: keyLimit, idempotency: idempotency)
            metrics.started(record)
            return record
        } catch {
            metrics.startFailed(request, code: error.code)
            throw error
        }
    }

    private func routeStart(
        _ request: StartVerification, apiKeyID: String?, apiKeyName: String?, clientIP: String?,
        keyCountries: Set<String>?, keyLimit: RateLimit?, idempotency: IdempotentStart?
    ) async throws(GatewayError) -> VerificationRecord {
        if let forced = request.forcedProvider, registry.provider(forced) == nil {
            throw GatewayError(.invalidRequest, "`provider` names no configured provider.")
        }
        if let number = request.destination.phoneNumber, policy.testNumbers[number.e164] != nil {
            if request.multiFactor != nil {
                // A gateway test number never reaches a vendor, so no vendor could sign the user in.
                throw GatewayError(
                    .invalidRequest,
                    "A `multi_factor` start needs the vendor that holds the user's second factor; `to` is one of "
                        + "the gateway's test numbers, which never reach a vendor.")
            }
            // A configured test number is the operator's choice, whatever the metadata says of it.
            return try await startTestNumber(request, apiKeyID: apiKeyID, idempotency: idempotency)
        }
        if let region = request.destination.phoneNumber?.policyRegion,
            !policy.countries.permits(region) || keyCountries.map({ $0.contains(region) }) == false
        {
            // Before anything else is counted or paid: a geo permission is not the vendor's to decide.
            await countRefusal?("geo:" + region, clock.now)
            throw GatewayError(.destinationBlocked, "Verifications to \(region) are not allowed for this API key.")
        }
        let decision = await traced("routing") { span in
            let decision = routing.decide(request, apiKey: apiKeyName, registry: registry)
            if let span { Self.describe(decision, request, on: span) }
            return decision
        }
        var candidates = decision.candidates
        try checkDestination(request, candidates: candidates)
        let id = idempotency?.resumingID ?? Self.newID()
        var adaptiveChoice: AdaptiveChoice?
        var choseAdaptive = false
        if let idempotency, idempotency.needsClaim, !candidates.isEmpty {
            // The claim, before anything is counted: a key already held stops the start here, as if it had not
            // begun. Its write records the call to the first candidate (the bandit's choice, on an adaptive route).
            adaptiveChoice = await chooseAdaptive(request, decision: decision, candidates: &candidates)
            choseAdaptive = true
            try await claimAhead(
                idempotency,
                IdempotencyProgress(
                    stage: .vendorCallBegun, verificationID: id, providerID: candidates[0].id,
                    callBegunAt: clock.now.addingTimeInterval(idempotency.aheadCallWindow)),
                providerID: candidates[0].id)
        }
        try await countStart(request, apiKeyID: apiKeyID, clientIP: clientIP, keyLimit: keyLimit)
        try await guardPumping(request, apiKeyID: apiKeyID)
        guard !candidates.isEmpty else { throw Self.noCandidateError(request, decision: decision) }
        // Before any vendor that would send or charge: what the number's network says of it.
        let risk = try await assessRisk(request, route: decision.route, id: id, apiKeyID: apiKeyID)
        // An adaptive route's bandit puts its choice first (the others and the fallbacks after it, for failover).
        if !choseAdaptive {
            adaptiveChoice = await chooseAdaptive(request, decision: decision, candidates: &candidates)
        }
        var request = request
        request.verificationID = id
        let attempt = StartAttempt(
            id: id, request: request, apiKeyID: apiKeyID, decision: decision, idempotency: idempotency,
            adaptive: adaptiveChoice, calls: risk.events, skipped: decision.skipped, risk: risk.marks)
        return try await startAtFirstAccepting(candidates, attempt)
    }

    /// Tries `candidates` in order, one at a time, until one accepts (stored and returned) or a failure may not
    /// fail over. Each call is preceded by its app-verification, breaker and deadline checks, and by the
    /// idempotency claim's record of which provider is being called.
    private func startAtFirstAccepting(_ candidates: [any VerificationProvider], _ start: StartAttempt)
        async throws(GatewayError) -> VerificationRecord
    {
        var attempt = start
        let decision = attempt.decision
        let request = attempt.request
        var sendMayHaveHappened = false
        let deadline = clock.instant.advanced(by: policy.startDeadline)
        var lastError: GatewayError?
        var proofError: GatewayError?
        // The risk step's signal calls come first; the deadline passes over a candidate only after a start call.
        let signalCalls = attempt.calls.count
        for provider in candidates {
            if attempt.calls.count > signalCalls, clock.instant >= deadline {
                attempt.skipped.append(RoutingTable.Skip(providerID: provider.id, reason: "deadline_passed"))
                continue
            }
            do {
                try Self.checkAppVerification(request, for: provider)
            } catch {
                // A candidate that needs an app-verification proof the request lacks is skipped, not
                // failed: a later candidate may send without one. Only if none can is this the answer.
                attempt.skipped.append(RoutingTable.Skip(providerID: provider.id, reason: "app_verification_missing"))
                if proofError == nil { proofError = error }
                continue
            }
            guard breakers.allow(provider.id, country: decision.country) else {
                attempt.skipped.append(RoutingTable.Skip(providerID: provider.id, reason: "breaker_open"))
                continue
            }
            if let idempotency = attempt.idempotency,
                !idempotency.aheadClaimCovers(callTo: provider.id, at: clock.instant)
            {
                // Before each call: which provider a takeover may ask, unless an earlier call may have sent too.
                do {
                    try await recordProgress(
                        idempotency,
                        IdempotencyProgress(
                            stage: .vendorCallBegun, verificationID: attempt.id,
                            providerID: sendMayHaveHappened ? nil : provider.id, callBegunAt: clock.now))
                } catch {
                    // No call: the breaker's probe (if this was one) is given back for the next start.
                    breakers.abandon(provider.id, country: decision.country)
                    throw error
                }
            }
            let began = clock.instant
            attempt.idempotency?.setSendMayHaveHappened(true)
            do {
                let result = try await traced("provider.start") { (span) throws(GatewayError) in
                    span?.set("verification.provider", provider.id)
                    do throws(GatewayError) {
                        return try await Self.startOrChallenge(provider, request)
                    } catch {
                        span?.fail(error.code)
                        throw error
                    }
                }
                // A message whose delivery the route watches is a success only once delivered (its receipt, or
                // its deadline's failure, tells the breaker); any other accepted start is one now.
                if result.sentNothing || !awaitsDelivery(provider, route: decision.route) {
                    breakers.record(provider.id, country: decision.country, failure: false)
                }
                attempt.calls.append(
                    callEvent(
                        attempt.id, provider.id, "start", outcome: "accepted", since: began,
                        segments: result.billedSegments))
                return try await persistStart(attempt, provider: provider, result: result)
            } catch {
                attempt.calls.append(
                    callEvent(attempt.id, provider.id, "start", outcome: error.code.rawValue, since: began))
                sendMayHaveHappened = sendMayHaveHappened || error.sendMayHaveHappened
                attempt.idempotency?.setSendMayHaveHappened(sendMayHaveHappened)
                lastError = error
                attempt.failovers.append("\(provider.id):\(error.code.rawValue)")
                if !failsOver(error, at: provider, attempt: attempt) {
                    await recordFailedStart(attempt, error: error)
                    throw error
                }
            }
        }
        var failure =
            lastError ?? proofError
            ?? GatewayError(.noProviderAvailable, "No provider is available for this request.")
        if lastError == nil, attempt.skipped.contains(where: { $0.reason == "breaker_open" }) {
            failure = GatewayError(
                .noProviderAvailable,
                "Every provider for this destination is failing; their circuit breakers are open. Retry later.")
        }
        await recordFailedStart(attempt, error: failure)
        throw failure
    }

    /// The provider's challenge, when it sets one before anything is sent, or else its start.
    static func startOrChallenge(_ provider: any VerificationProvider, _ request: StartVerification)
        async throws(GatewayError) -> ProviderStartResult
    {
        guard let challenge = try await provider.challenging?.prepare(request) else {
            return try await provider.start(request)
        }
        // Nothing is sent until the app solves the challenge.
        return ProviderStartResult(
            reference: challenge.reference, state: challenge.state, expiresAt: challenge.challenge.expiresAt,
            sentNothing: true, nextAction: .solveChallenge(challenge.challenge))
    }

    /// Records a provider's failed start with its breaker, the log and the metrics, and answers whether the start
    /// goes on to the next candidate: only after a vendor failure, and after one that may have sent only when the
    /// route fails over on timeouts.
    private func failsOver(_ error: GatewayError, at provider: any VerificationProvider, attempt: StartAttempt)
        -> Bool
    {
        let decision = attempt.decision
        let vendorFailed = error.errorClass == .providerTransient || error.errorClass == .providerPermanent
        breakers.record(
            provider.id, country: decision.country, failure: vendorFailed,
            retryAfter: error.retryAfter.map(TimeInterval.init))
        logger.warning(
            "provider start failed",
            metadata: [
                "provider.id": "\(provider.id)", "error.code": "\(error.code.rawValue)",
                "vendor.code": "\(error.vendor?.code ?? "-")", "to": "\(attempt.request.destination.masked)",
            ])
        let failOver = vendorFailed && (!error.sendMayHaveHappened || decision.failoverOnTimeout)
        if failOver { metrics.failover(provider: provider.id, country: decision.country, code: error.code) }
        return failOver
    }

    /// Why a start whose routing left no candidate fails: the reasons routing passed each provider over decide.
    static func noCandidateError(_ request: StartVerification, decision: RoutingTable.Decision) -> GatewayError {
        // Providers without the request's multi-factor step could never serve it: the others' reasons
        // decide, and when there are none, no configured provider runs the step.
        let skippedReasons = decision.skipped.filter { $0.reason != RoutingTable.Skip.multiFactorNotSupported }
        if let step = request.multiFactor, skippedReasons.isEmpty, !decision.skipped.isEmpty {
            return GatewayError(
                .invalidRequest,
                "No provider this request could go to runs a multi-factor `\(step.kind.rawValue)` "
                    + "(`multi_factor`); GET /v1/admin/providers lists the steps each provider runs.")
        }
        if request.customCode != nil,
            skippedReasons.contains(where: { $0.reason == RoutingTable.Skip.customCodeNotSupported })
        {
            return GatewayError(
                .invalidRequest,
                "A code chosen by the caller can be sent only by the providers of the gateway's own codes, and the "
                    + "route of this request has none that could take it.")
        }
        let onlyUnknown =
            !skippedReasons.isEmpty && skippedReasons.allSatisfy { $0.reason == "unknown_provider" }
        let channelReasons: Set<String> = ["channel_not_supported", "fallback_channels_not_supported"]
        if !onlyUnknown && skippedReasons.allSatisfy({ channelReasons.contains($0.reason) }) {
            let channels = ([request.channel] + request.fallbackChannels).map(\.rawValue).joined(separator: ", ")
            return GatewayError(
                .unsupportedChannel, "No configured provider can send over \(channels).")
        }
        // Every candidate was passed over for the destination's country: no retry can change that.
        let regionReasons: Set<String> = ["country_not_served", "country_excluded"]
        if !onlyUnknown && skippedReasons.allSatisfy({ regionReasons.contains($0.reason) }) {
            return GatewayError(
                .unsupportedDestination, "No configured provider serves this destination's country.")
        }
        return GatewayError(.noProviderAvailable, "No provider is available for this request.")
    }

    /// A start an experiment assigned but no vendor accepted is still a user in that arm: it is stored as
    /// `failed` so the experiment report counts it (intention to treat). Other failed starts keep no
    /// record. Storing must not hide the vendor's error, so a storage failure here is only logged.
    private func recordFailedStart(_ attempt: StartAttempt, error: GatewayError) async {
        let (id, request, decision, failovers) = (attempt.id, attempt.request, attempt.decision, attempt.failovers)
        let (apiKeyID, events) = (attempt.apiKeyID, attempt.calls)
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
            // One write (one commit, one sync) rather than one per row.
            let failed = VerificationEvent(
                verificationID: id, kind: .statusChanged, at: now,
                detail: ["status": "failed", "error": error.code.rawValue, "route": decision.route, "arm": arm])
            try await store.insert(record, events: [failed] + events)
            metrics.finished(record)
        } catch {
            logger.error("failed start not recorded", metadata: ["verification.id": "\(id)"])
        }
    }

    /// What ``dryRun(_:apiKeyName:)`` found.
    public struct DryRun: Sendable {
        /// One provider a start would try, in order.
        public struct Candidate: Sendable {
            /// The provider's id.
            public var providerID: String
            /// The provider's circuit breaker for the destination's country, as it stands.
            public var breaker: CircuitBreakers.State
            /// Why a start would pass over this candidate (`breaker_open`, `app_verification_missing`).
            public var skipReason: String?
        }

        /// The route that matched: a rule's name, `channel:<channel>`, `default`, `forced` or `test_number`.
        public var route: String
        /// The experiment the route assigns an arm of, if any.
        public var experiment: String?
        /// The arm the destination falls in, on an experiment route.
        public var arm: String?
        /// The destination's country, when it is a phone number with one.
        public var country: String?
        /// The provider a start would call first; nil when none would.
        public var provider: String?
        /// Whether the destination is a configured test number, which no vendor is asked about.
        public var isTestNumber: Bool
        /// Whether the route fails over even after a timeout that may have sent the code.
        public var failoverOnTimeout: Bool
        /// The providers a start would try, in order, each with why it would be passed over.
        public var candidates: [Candidate]
        /// Passed over by routing itself (unknown provider, channel not supported, country excluded).
        public var skipped: [RoutingTable.Skip]
        /// What a start would answer before calling anyone, if it would fail.
        public var error: GatewayError?
        /// On an adaptive route, why the bandit put its choice first (`sampled twilio 0.81 vs sinch 0.64`):
        /// one draw, as a start would make it; another dry-run may draw otherwise.
        public var adaptive: String? = nil
    }

    /// Answers which provider a start would use and why, sending nothing and changing no breaker.
    public func dryRun(_ request: StartVerification, apiKeyName: String? = nil) async throws(GatewayError) -> DryRun {
        if let forced = request.forcedProvider, registry.provider(forced) == nil {
            throw GatewayError(.invalidRequest, "`provider` names no configured provider.")
        }
        let country = request.destination.phoneNumber?.region
        if let number = request.destination.phoneNumber, policy.testNumbers[number.e164] != nil {
            return DryRun(
                route: "test_number", country: country, provider: TestNumberProvider.providerID, isTestNumber: true,
                failoverOnTimeout: false, candidates: [], skipped: [], error: nil)
        }
        let decision = routing.decide(request, apiKey: apiKeyName, registry: registry)
        var refusal: GatewayError?
        do {
            try checkDestination(request, candidates: decision.candidates)
        } catch {
            refusal = error
        }
        var ordered = decision.candidates
        let adaptiveChoice = await chooseAdaptive(request, decision: decision, candidates: &ordered)
        var candidates: [DryRun.Candidate] = []
        for provider in ordered {
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
            candidates: candidates, skipped: decision.skipped, error: refusal,
            adaptive: adaptiveChoice.map { "adaptive: " + $0.explanation })
    }

    /// A configured test number: recorded like any verification, but no vendor is called.
    private func startTestNumber(
        _ request: StartVerification, apiKeyID: String?, idempotency: IdempotentStart?
    ) async throws(GatewayError) -> VerificationRecord {
        let id = Self.newID()
        // Nothing is sent, but the id lets a takeover find the verification if it was stored.
        if let idempotency {
            let progress = IdempotencyProgress(stage: .claimed, verificationID: id)
            if idempotency.needsClaim {
                try await claimAhead(idempotency, progress, providerID: nil)
            } else {
                try await recordProgress(idempotency, progress)
            }
        }
        let provider = TestNumberProvider(codes: policy.testNumbers)
        let result = try await provider.start(request)
        let decision = RoutingTable.Decision(
            route: "test_number", experiment: nil, arm: nil, candidates: [], skipped: [], failoverOnTimeout: false,
            country: request.destination.phoneNumber?.region)
        var attempt = StartAttempt(
            id: id, request: request, apiKeyID: apiKeyID, decision: decision, idempotency: idempotency)
        attempt.isTestNumber = true
        return try await persistStart(attempt, provider: provider, result: result)
    }

    /// Refuses, before any vendor is paid, a number the numbering plan does not know (unless the policy
    /// allows its region) and an SMS to a number that cannot take one (a fixed line).
    func checkDestination(
        _ request: StartVerification, candidates: [any VerificationProvider] = []
    ) throws(GatewayError) {
        guard let number = request.destination.phoneNumber else { return }
        if !number.isValid, !policy.allowUnknownNumbers.contains(number.policyRegion),
            !candidates.contains(where: { $0.isTestNumber(request) })
        {
            throw GatewayError(
                .invalidPhoneNumber,
                "`to` is not a valid number in its region's numbering plan (it has a possible length, but no "
                    + "range of the region matches it).")
        }
        guard request.channel == .sms, number.type.refusesSMS else { return }
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

    // MARK: recovery

    /// What a request that took over the idempotency claim of a dead start answers
    /// (``recoverStart(_:progress:apiKeyID:)``, docs/architecture.md §9.2).
    public enum StartRecovery: Sendable {
        /// The dead start's verification: stored by it, or found at its vendor and stored now.
        case verification(VerificationRecord)
        /// No vendor was called, or the vendor has nothing and can no longer get the dead call: the start runs
        /// anew under the taker's claim, with this id (the dead start's; `nil`: a new one).
        case startAnew(verificationID: String?)
        /// The vendor has nothing yet, but the dead call may still reach it: the claim is left for a retry.
        case notYet
        /// A code may have reached the user under a verification nobody can name.
        case unknown
    }

    /// Decides, from how far a dead start got (`progress`, as its claim recorded it), what its key answers.
    /// A start that called a vendor and stored nothing is asked after at that vendor
    /// (``VerificationProvider/lookUpStart(_:)``); a verification the vendor has is stored now, under the id
    /// the dead start sent as the reference, and answered. `request` is the key's request, parsed again.
    public func recoverStart(
        _ request: StartVerification, progress: IdempotencyProgress, apiKeyID: String?
    ) async throws(GatewayError) -> StartRecovery {
        if let id = progress.verificationID, let record = try await store.record(id: id) {
            // A failed start's record names no verification to answer; its outcome at the vendor is unknown.
            return record.status == .failed
                ? (progress.stage == .claimed ? .startAnew(verificationID: nil) : .unknown)
                : .verification(record)
        }
        guard progress.stage == .vendorCallBegun else { return .startAnew(verificationID: nil) }
        guard let id = progress.verificationID, let providerID = progress.providerID,
            let callBegunAt = progress.callBegunAt, let provider = registry.provider(providerID)
        else { return .unknown }
        var request = request
        request.verificationID = id
        let lookup = StartLookup(
            verificationID: id, destination: request.destination, channel: request.channel, callBegunAt: callBegunAt)
        let began = clock.instant
        let answer: StartLookupResult
        do {
            answer = try await provider.lookUpStart(lookup)
        } catch {
            logger.warning(
                "vendor lookup of a dead start failed",
                metadata: [
                    "verification.id": "\(id)", "provider.id": "\(providerID)", "error.code": "\(error.code.rawValue)",
                ])
            return .unknown
        }
        let event = callEvent(id, providerID, "lookup", outcome: Self.outcome(of: answer), since: began)
        logger.notice(
            "vendor asked about a dead start",
            metadata: [
                "verification.id": "\(id)", "provider.id": "\(providerID)", "lookup": "\(Self.outcome(of: answer))",
            ])
        switch answer {
        case .found(let result):
            let decision = RoutingTable.Decision(
                route: "recovered", experiment: nil, arm: nil, candidates: [], skipped: [], failoverOnTimeout: false,
                country: request.destination.phoneNumber?.region)
            do {
                var attempt = StartAttempt(id: id, request: request, apiKeyID: apiKeyID, decision: decision)
                attempt.calls = [event]
                attempt.recovered = true
                let record = try await persistStart(attempt, provider: provider, result: result)
                metrics.started(record)
                return .verification(record)
            } catch {
                // The dead start stored it after all, meanwhile (a start slower than its lease, not dead).
                if let record = try await store.record(id: id), record.status != .failed {
                    return .verification(record)
                }
                throw error
            }
        case .notFound:
            return .startAnew(verificationID: id)
        case .notYet:
            return .notYet
        case .unknown:
            return .unknown
        }
    }

    static func outcome(of answer: StartLookupResult) -> String {
        switch answer {
        case .found: "found"
        case .notFound: "not_found"
        case .notYet: "not_yet"
        case .unknown: "unknown"
        }
    }

    /// Stores the verification `provider` accepted (`result`), with its `started` event and the attempt's calls,
    /// in one write; the claim of an `Idempotency-Key` that ends at the insert ends in the same commit.
    private func persistStart(_ attempt: StartAttempt, provider: any VerificationProvider, result: ProviderStartResult)
        async throws(GatewayError) -> VerificationRecord
    {
        let (id, request, decision, failovers) = (attempt.id, attempt.request, attempt.decision, attempt.failovers)
        let (apiKeyID, skipped, choice) = (attempt.apiKeyID, attempt.skipped, attempt.adaptive)
        let (isTestNumber, recovered, idempotency) = (attempt.isTestNumber, attempt.recovered, attempt.idempotency)
        let now = clock.now
        // Learned in its context when a provider of the adaptive route sent (not a fallback outside it).
        let learned = decision.adaptive.flatMap { $0.policy.providers.contains(provider.id) ? $0 : nil }
        let awaitsChallenge: Bool
        if case .solveChallenge = result.nextAction { awaitsChallenge = true } else { awaitsChallenge = false }
        var record = VerificationRecord(
            id: id,
            destination: request.destination,
            channel: result.channel ?? request.channel,
            providerID: provider.id,
            providerReference: result.reference,
            providerState: result.state,
            status: result.status,
            maxAttempts: min(policy.maxAttempts, provider.capabilities.vendorMaxAttempts ?? Int.max),
            // A test number, a challenge to solve first: nothing reached the user yet.
            sends: awaitsChallenge || result.sentNothing ? 0 : 1,
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
            apiKeyID: apiKeyID,
            nextAction: result.nextAction,
            fallbackChannels: request.fallbackChannels.filter { $0 != (result.channel ?? request.channel) })
        record.adaptiveContext = learned?.context
        record.clientSecretHash = clientSecretHash?(id)
        record.risk = attempt.risk
        var detail = ["provider": provider.id, "channel": record.channel.rawValue, "route": decision.route]
        if let experiment = decision.experiment { detail["experiment"] = experiment }
        if let arm = decision.arm { detail["arm"] = arm }
        if let choice { detail["adaptive"] = choice.explanation }
        if let country = decision.country { detail["country"] = country }
        if isTestNumber { detail["test_number"] = "true" }
        // Found at the vendor by a request that took over a dead start's `Idempotency-Key`.
        if recovered { detail["recovered"] = "vendor_lookup" }
        if let action = record.nextAction { detail["next_action"] = action.type }
        if !failovers.isEmpty { detail["failovers"] = failovers.joined(separator: ",") }
        if !skipped.isEmpty {
            detail["skipped"] = skipped.map { "\($0.providerID):\($0.reason)" }.joined(separator: ",")
        }
        let events = [VerificationEvent(verificationID: id, kind: .started, at: now, detail: detail)] + attempt.calls
        if let idempotency, idempotency.endsAtInsert {
            // One commit for the record and the end of the claim's lease (``IdempotentStart/endsAtInsert``).
            try await store.insert(record, events: events, endingClaim: idempotency.key, token: idempotency.token)
        } else {
            try await store.insert(record, events: events)
        }
        if let learned, let adaptive {
            await adaptive.countStart(
                route: decision.route, policy: learned.policy, context: learned.context, providerID: provider.id,
                at: now)
        }
        logger.info(
            "verification started",
            metadata: [
                "verification.id": "\(id)", "provider.id": "\(provider.id)", "channel": "\(record.channel.rawValue)",
                "to": "\(request.destination.masked)", "client.ip": "\(request.clientContext.masked)",
            ])
        if record.sends > 0 { await scheduleDeliveryDeadline(record) }
        await scheduleSilentDeadline(record, provider: provider)
        return record
    }

    // MARK: helpers

    /// Takes the claim of a start that claims ahead (``IdempotentStart/claimsAhead``), recording `progress` in
    /// the same write. A key that is not new stops the start (``IdempotentStart/claimFoundTaken`` says why).
    private func claimAhead(_ idempotency: IdempotentStart, _ progress: IdempotencyProgress, providerID: String?)
        async throws(GatewayError)
    {
        let answer = try await store.claimIdempotencyKey(
            idempotency.key, fingerprint: idempotency.claimsAhead ?? "", token: idempotency.token,
            owner: leaseOwners?.instanceID, at: clock.now, lease: policy.idempotencyLease, deadOwner: nil,
            progress: progress)
        idempotency.claimedAhead(answer, providerID: providerID, at: clock.instant)
        guard case .claimed = answer else {
            throw GatewayError(
                .idempotencyConflict, "This start's claim is not new; nothing was counted or sent for it.")
        }
    }

    /// Records how far an idempotent start got and renews its claim; a claim taken over meanwhile ends the
    /// start before anything is sent.
    private func recordProgress(_ idempotency: IdempotentStart, _ progress: IdempotencyProgress)
        async throws(GatewayError)
    {
        let until = clock.now.addingTimeInterval(policy.idempotencyLease)
        guard
            try await store.recordIdempotencyProgress(
                idempotency.key, token: idempotency.token, progress: progress, until: until)
        else {
            throw GatewayError(
                .idempotencyConflict,
                "Another request with this Idempotency-Key took it over; retry with the same key to learn its outcome.")
        }
    }

    /// The record, when `owner` (an API key id; `nil` for any) may see it: a verification belongs to the key
    /// that started it, and another key is told it does not exist.
    func current(_ id: String, owner: String? = nil) async throws(GatewayError) -> VerificationRecord {
        guard Self.isWellFormedID(id), let record = try await store.record(id: id),
            owner == nil || record.apiKeyID == owner
        else {
            throw GatewayError.notFound()
        }
        if record.effectiveStatus(at: clock.now) == .expired, record.status == .pending {
            return try await settle(record, status: .expired, event: .statusChanged)
        }
        return record
    }

    /// Moves a record to a status, retrying on a concurrent update; a record already final stays as it is.
    func settle(
        _ record: VerificationRecord, status: VerificationStatus, event: VerificationEvent.Kind
    ) async throws(GatewayError) -> VerificationRecord {
        var record = record
        while true {
            guard record.status.canTransition(to: status) else { return record }
            if record.status == status { return record }
            var next = record
            next.status = status
            next.nextAction = nil
            next.updatedAt = clock.now
            next.version += 1
            let written = VerificationEvent(
                verificationID: next.id, kind: event, at: next.updatedAt, detail: ["status": status.rawValue])
            if try await store.update(next, events: [written]) {
                metrics.finished(next)
                await countAdaptiveOutcome(from: record, to: next)
                return next
            }
            guard let reloaded = try await store.record(id: record.id) else { throw GatewayError.notFound() }
            record = reloaded
        }
    }

    func save(_ record: VerificationRecord) async throws(GatewayError) -> VerificationRecord {
        var next = record
        next.updatedAt = clock.now
        next.version += 1
        guard try await store.update(next) else {
            throw GatewayError(.concurrentVerification, "The verification changed meanwhile; try again.")
        }
        return next
    }

    func provider(for record: VerificationRecord) throws(GatewayError) -> any VerificationProvider {
        if record.isTestNumber { return TestNumberProvider(codes: policy.testNumbers) }
        guard let provider = registry.provider(record.providerID) else {
            throw GatewayError(
                .noProviderAvailable,
                "The provider that started this verification is no longer configured.")
        }
        return provider
    }

    /// The `provider_call` event of a call that began at `since`; `segments`: what an accepted send of the
    /// gateway's own code was billed in (``ProviderStartResult/billedSegments``).
    func callEvent(
        _ id: String, _ provider: String, _ operation: String, outcome: String, since: ContinuousClock.Instant,
        segments: Int? = nil
    ) -> VerificationEvent {
        let elapsed = clock.instant - since
        let ms = elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
        metrics.providerCall(
            provider: provider, operation: operation, outcome: outcome,
            nanoseconds: elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
        var detail = ["provider": provider, "operation": operation, "outcome": outcome, "latency_ms": String(ms)]
        if let segments { detail["segments"] = String(segments) }
        return VerificationEvent(verificationID: id, kind: .providerCall, at: clock.now, detail: detail)
    }

    /// A new verification id: `vf_` and 32 lowercase hex digits, ``Hex/timeOrdered()``: the creation
    /// time in milliseconds, then 80 bits from the system's secure generator. Ids made later sort later,
    /// so a store inserts them at the end of its indexes on the id (the record's key, its events' reference)
    /// rather than on a random page of each, which with a million stored would be a page written per index per
    /// start; 80 random bits still leave an id unguessable.
    public static func newID() -> String {
        "vf_" + Hex.timeOrdered()
    }

    static func hex(_ value: UInt64) -> String {
        Hex.lowercase(value)
    }

    /// Whether `id` has the shape of a verification id (so malformed ids never reach the store).
    public static func isWellFormedID(_ id: String) -> Bool {
        id.count == 35 && id.hasPrefix("vf_")
            && id.dropFirst(3).unicodeScalars.allSatisfy { ("0"..."9").contains($0) || ("a"..."f").contains($0) }
    }
}
