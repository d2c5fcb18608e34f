import Foundation

/// Runs a verification to its end by its `next_action`: the app supplies what only it can do (show a
/// challenge, intercept a call, open a URL over mobile data, ask for a code), the flow makes the calls.
///
/// ```swift
/// let flow = VerificationFlow(client: client, handlers: .init(
///     enterCode: { prompt in .code(try await codeField.nextSubmission(hint: prompt.lastError)) },
///     solveChallenge: { prompt in ["x": .number(try await sliderView.solve(prompt.challenge))] }))
/// let final = try await flow.run(started)   // .approved with `token`, or another final status
/// ```
///
/// Every final status is returned, not thrown (`denied`, `expired`, `max_attempts_reached`…): the app shows
/// it. What is thrown is what the app cannot continue from: a ``GatewayAPIError`` that is not about this
/// verification's state (`unauthorized`, `provider_unavailable`…), a transport error, a ``FlowError``, or
/// `CancellationError` when the task running the flow is cancelled (the verification is canceled at the
/// gateway first, unless ``Polling/cancelsOnTaskCancellation`` is off).
public struct VerificationFlow: Sendable {
    /// The client the flow calls through, with the app's credential (a client secret) or an API key.
    public let client: VerificationClient
    /// What the app does at each step.
    public var handlers: Handlers
    /// How the flow polls a verification the vendor finishes.
    public var polling: Polling

    /// A flow over `client`; the default polling waits 1 s at first, up to 8 s between polls.
    public init(client: VerificationClient, handlers: Handlers, polling: Polling = Polling()) {
        self.client = client
        self.handlers = handlers
        self.polling = polling
    }

    /// What the app does for each kind of step. Only `enterCode` is needed for code channels; a verification
    /// whose `next_action` has no handler throws ``FlowError/noHandler(_:)``.
    public struct Handlers: Sendable {
        /// Asks the user for the code (SMS, voice, WhatsApp, email, or a flash call not intercepted). Return
        /// `.code`, or `.resend` / `.cancel` if the user asks for that.
        public var enterCode: @Sendable (CodePrompt) async throws -> CodeEntry
        /// Shows a challenge (IDaaS's slider: ``Challenge/pngImages``, ``Challenge/answerFields``) and returns the
        /// answer object (`{"x": 123}`).
        public var solveChallenge: (@Sendable (ChallengePrompt) async throws -> JSONValue)?
        /// Waits for the flash call (Sinch) and returns its caller number; nil when none came in time, and the
        /// user is asked for the number through `enterCode`.
        public var interceptCall: (@Sendable (CallInterception) async throws -> String?)?
        /// Requests the URL over mobile data, following redirects, and returns the last answer's body. A body
        /// with a `code` (Vonage) is checked; otherwise the vendor finishes it (Sinch) and the flow polls.
        public var openURL: (@Sendable (URLOpening) async throws -> Data)?
        /// Told when a push was sent to the user's device (show "approve on your phone"); the flow then polls
        /// `status(refresh: true)` with backoff until the user approves, denies or the push expires.
        public var approvalRequested: (@Sendable (ApprovalWait) async throws -> Void)?
        /// How the app learns the outcome once its client secret no longer reads the verification (a secret
        /// stops at the end, so a verification the vendor finished is read by the back end with its API key):
        /// ask the back end for it by id. Without it, that ends the flow with ``FlowError/endedElsewhere(_:)``.
        public var outcome: (@Sendable (String) async throws -> Verification)?

        /// Handlers with `enterCode`; a step without its handler throws ``FlowError/noHandler(_:)`` when met.
        public init(
            enterCode: @escaping @Sendable (CodePrompt) async throws -> CodeEntry,
            solveChallenge: (@Sendable (ChallengePrompt) async throws -> JSONValue)? = nil,
            interceptCall: (@Sendable (CallInterception) async throws -> String?)? = nil,
            openURL: (@Sendable (URLOpening) async throws -> Data)? = nil,
            approvalRequested: (@Sendable (ApprovalWait) async throws -> Void)? = nil,
            outcome: (@Sendable (String) async throws -> Verification)? = nil
        ) {
            self.enterCode = enterCode
            self.solveChallenge = solveChallenge
            self.interceptCall = interceptCall
            self.openURL = openURL
            self.approvalRequested = approvalRequested
            self.outcome = outcome
        }
    }

    /// How the flow polls a verification a vendor finishes by itself (push, Sinch's seamless).
    public struct Polling: Sendable {
        /// The first wait, multiplied by `multiplier` after each poll up to `maximumInterval`.
        public var initialInterval: Duration
        /// What each wait is multiplied by after a poll.
        public var multiplier: Double
        /// The longest wait between polls.
        public var maximumInterval: Duration
        /// How long past the step's expiry (the push's, else the verification's) the flow keeps polling for the
        /// gateway to report it expired, before it throws ``FlowError/timedOut(_:)``.
        public var grace: Duration
        /// On task cancellation, cancel the verification at the gateway before throwing `CancellationError`.
        public var cancelsOnTaskCancellation: Bool

        /// Polling from 1 s, ×1.5 each time up to 8 s, 30 s past the expiry, cancelling on task cancellation.
        public init(
            initialInterval: Duration = .seconds(1), multiplier: Double = 1.5, maximumInterval: Duration = .seconds(8),
            grace: Duration = .seconds(30), cancelsOnTaskCancellation: Bool = true
        ) {
            self.initialInterval = initialInterval
            self.multiplier = multiplier
            self.maximumInterval = maximumInterval
            self.grace = grace
            self.cancelsOnTaskCancellation = cancelsOnTaskCancellation
        }
    }

    /// What ``Handlers/enterCode`` is asked with.
    public struct CodePrompt: Sendable {
        /// The verification as last read.
        public var verification: Verification
        /// The previous code's refusal (`incorrect_code`, with `attemptsRemaining`), if any.
        public var lastError: GatewayAPIError?
    }

    /// What the user chose at the code prompt.
    public enum CodeEntry: Sendable, Hashable {
        case code(String)
        /// Send again: on the same channel, another, or (nil) the next fallback channel.
        case resend(Channel?)
        case cancel
    }

    /// What ``Handlers/solveChallenge`` is asked with.
    public struct ChallengePrompt: Sendable {
        /// The verification waiting for the answer.
        public var verification: Verification
        /// The challenge to show.
        public var challenge: Challenge
        /// The previous answer was refused and this is a fresh challenge.
        public var previousAnswerRefused: Bool
    }

    /// Runs `verification` (a start's answer, or a read) until its status is final, and returns it.
    public func run(_ verification: Verification) async throws -> Verification {
        do {
            return try await drive(verification)
        } catch {
            // Whatever the cancellation interrupted (a sleep, a request) threw its own error: the task's
            // cancellation is the cause.
            guard Task.isCancelled else { throw error }
            if polling.cancelsOnTaskCancellation {
                // A new task: this one's requests fail at once now that it is cancelled.
                let client = client
                _ = await Task { try? await client.cancel(verification.id) }.value
            }
            throw CancellationError()
        }
    }

    private func drive(_ verification: Verification) async throws -> Verification {
        var current = verification
        var lastCodeError: GatewayAPIError?
        var challengeRefused = false
        var intercepted = false
        var opened = false
        while !current.status.isFinal {
            try Task.checkCancellation()
            switch current.nextAction {
            case .solveChallenge(let challenge):
                guard let solve = handlers.solveChallenge else { throw FlowError.noHandler("solve_challenge") }
                let answer = try await solve(
                    ChallengePrompt(
                        verification: current, challenge: challenge, previousAnswerRefused: challengeRefused))
                do {
                    current = try await client.answerChallenge(current.id, answer: answer)
                    challengeRefused = false
                } catch let error as GatewayAPIError {
                    if error.code == .appVerificationFailed, case .solveChallenge = error.nextAction {
                        current.nextAction = error.nextAction
                        challengeRefused = true
                    } else {
                        current = try await settle(current, after: error)
                    }
                }
            case .interceptCall(let call) where !intercepted:
                intercepted = true
                if let intercept = handlers.interceptCall, let caller = try await intercept(call) {
                    (current, lastCodeError) = try await check(current, code: caller)
                }
            case .openURL(let opening) where !opened:
                opened = true
                guard let open = handlers.openURL else { throw FlowError.noHandler("open_url") }
                let body = try await open(opening)
                if let code = Self.code(in: body) {
                    (current, lastCodeError) = try await check(current, code: code)
                } else {
                    current = try await waitForVendor(current, until: current.expiresAt)
                }
            case .awaitApproval(let wait):
                if let approvalRequested = handlers.approvalRequested { try await approvalRequested(wait) }
                current = try await waitForVendor(current, until: wait.expiresAt ?? current.expiresAt)
            case .interceptCall, .openURL, nil:
                let entry = try await handlers.enterCode(CodePrompt(verification: current, lastError: lastCodeError))
                switch entry {
                case .code(let code):
                    (current, lastCodeError) = try await check(current, code: code)
                case .resend(let channel):
                    do {
                        current = try await client.resend(current.id, channel: channel)
                        (lastCodeError, intercepted, opened) = (nil, false, false)
                    } catch let error as GatewayAPIError {
                        current = try await settle(current, after: error)
                    }
                case .cancel:
                    return try await client.cancel(current.id)
                }
            }
        }
        return current
    }

    /// A check: the approval, or a wrong code kept for the next prompt, or the final state it led to.
    private func check(_ current: Verification, code: String) async throws -> (Verification, GatewayAPIError?) {
        do {
            return (try await client.check(current.id, code: code), nil)
        } catch let error as GatewayAPIError where error.code == .incorrectCode {
            var updated = current
            if let remaining = error.attemptsRemaining { updated.attemptsRemaining = remaining }
            return (updated, error)
        } catch let error as GatewayAPIError {
            return (try await settle(current, after: error), error)
        }
    }

    /// After an error about this verification's state: its final state, read back, or the error rethrown.
    private func settle(_ current: Verification, after error: GatewayAPIError) async throws -> Verification {
        guard error.errorClass == .verification || error.code == .accountLocked || error.code == .destinationBlocked
        else { throw error }
        let latest = try await read(current.id, refresh: false)
        guard latest.status.isFinal else { throw error }
        return latest
    }

    /// Polls `status(refresh: true)` with backoff until the status is final or the next action changes.
    private func waitForVendor(_ current: Verification, until expiry: Date) async throws -> Verification {
        let clock = ContinuousClock()
        let untilExpiry = max(0, expiry.timeIntervalSinceNow)
        let deadline = clock.now + .milliseconds(Int64(untilExpiry * 1000)) + polling.grace
        var interval = polling.initialInterval
        while true {
            try Task.checkCancellation()
            let latest = try await read(current.id, refresh: true)
            if latest.status.isFinal || latest.nextAction != current.nextAction { return latest }
            guard clock.now < deadline else { throw FlowError.timedOut(latest) }
            try await Task.sleep(for: interval)
            interval = min(interval * polling.multiplier, polling.maximumInterval)
        }
    }

    /// A read with the app's credential; once a client secret stops reading (its verification ended), the
    /// outcome from the `outcome` handler.
    private func read(_ id: String, refresh: Bool) async throws -> Verification {
        do {
            return try await client.status(id, refresh: refresh)
        } catch let error as GatewayAPIError where error.code == .unauthorized {
            guard case .clientSecret = client.credential else { throw error }
            guard let outcome = handlers.outcome else { throw FlowError.endedElsewhere(id) }
            return try await outcome(id)
        }
    }

    /// The `code` member of a JSON object body (the end of Vonage's silent-auth redirects), if any.
    static func code(in body: Data) -> String? {
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: body) else { return nil }
        return value["code"]?.stringValue
    }
}

/// Why a flow stopped that is not the gateway's answer.
public enum FlowError: Error, Sendable, CustomStringConvertible {
    /// The verification asked for a step (`solve_challenge`, `open_url`) the app gave no handler for.
    case noHandler(String)
    /// The vendor never finished the verification, even past its expiry (the last read is attached).
    case timedOut(Verification)
    /// The verification (this id) ended and the client secret no longer reads it; the back end has the outcome.
    case endedElsewhere(String)

    /// What stopped the flow, naming the verification where there is one.
    public var description: String {
        switch self {
        case .noHandler(let kind): "no handler for the next action \(kind)"
        case .timedOut(let verification): "the verification \(verification.id) is still \(verification.status.rawValue)"
        case .endedElsewhere(let id): "the verification \(id) ended; its client secret no longer reads it"
        }
    }
}
