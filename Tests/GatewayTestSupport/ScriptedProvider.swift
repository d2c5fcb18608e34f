import Foundation
import GatewayCore
import Synchronization

/// One scripted answer of a ``ScriptedProvider`` operation.
public enum ScriptedStep<Value: Sendable>: Sendable {
    /// Answer with this value.
    case succeed(Value)
    /// Throw this error.
    case fail(GatewayError)
    /// Run this closure when the call arrives: to suspend on a ``ScriptedGate``, or to compute the answer.
    case run(@Sendable () async throws(GatewayError) -> Value)

    func perform() async throws(GatewayError) -> Value {
        switch self {
        case .succeed(let value): return value
        case .fail(let error): throw error
        case .run(let body): return try await body()
        }
    }
}

extension ScriptedStep where Value == Void {
    /// A `cancel` that succeeds.
    public static var done: ScriptedStep<Void> { .succeed(()) }
}

/// A call a ``ScriptedProvider`` received.
public struct ScriptedCall: Sendable {
    /// Which provider operation was called.
    public enum Operation: String, Sendable, CaseIterable {
        case start, check, resend, cancel, status, prepare, challenge, callback
    }

    /// The operation called.
    public var operation: Operation
    /// The destination of the request or of the stored verification (a placeholder for `callback`).
    public var destination: Destination
    /// The request's channel for `start`; the stored verification's channel otherwise.
    public var channel: Channel
    /// The vendor reference the call was about (`nil` for `start`).
    public var reference: String?
    /// The vendor state the call carried (empty for `start`).
    public var state: ProviderState
    /// The code of a `check` (`nil` for a push poll and for other operations).
    public var code: String?
    /// The channel a `resend` asked for.
    public var requestedChannel: Channel?
    /// The whole request of a `start` or `prepare`.
    public var startRequest: StartVerification?
    /// The gateway's verification id the call was about.
    public var verificationID: String?
    /// The end user's device the call carried.
    public var clientContext: ClientContext = ClientContext()
    /// The whole request of a `resend`.
    public var resendRequest: ResendRequest?
    /// The app's answer of a `challenge`.
    public var answer: JSONValue?
}

/// A provider whose every answer is scripted by the test, and which records every call it receives.
///
/// Each operation answers from its queue of ``ScriptedStep``s, oldest first; once the queue is empty it
/// answers with the operation's fallback. Without a fallback, `start` accepts with reference
/// `"<id>-ref-<n>"`, `resend` and `cancel` succeed, `status` answers `pending`, and `check` throws
/// `internal` so an unscripted check never passes by accident. Safe to call from many tasks at once. It offers
/// every optional operation but actions; a test takes one away with ``ProviderCapabilities/withheld``.
public final class ScriptedProvider: ResendingProvider, CancelingProvider, StatusReportingProvider,
    CallbackReceivingProvider, ChallengingProvider
{
    /// The provider instance id, as routes and records name it.
    public let id: String
    /// What the provider declares: every channel unless the test says otherwise.
    public let capabilities: ProviderCapabilities

    private struct State {
        var start: [ScriptedStep<ProviderStartResult>] = []
        var check: [ScriptedStep<ProviderCheckResult>] = []
        var resend: [ScriptedStep<ProviderStartResult>] = []
        var cancel: [ScriptedStep<Void>] = []
        var status: [ScriptedStep<VerificationChange>] = []
        var prepare: [ScriptedStep<ProviderChallenge?>] = []
        var challenge: [ScriptedStep<ProviderStartResult>] = []
        var callback: (@Sendable (VendorCallback, VerificationLookup) async throws(GatewayError) -> CallbackReply)?
        var fallbackStart: ScriptedStep<ProviderStartResult>?
        var fallbackCheck: ScriptedStep<ProviderCheckResult>?
        var fallbackResend: ScriptedStep<ProviderStartResult>?
        var fallbackCancel: ScriptedStep<Void>?
        var fallbackStatus: ScriptedStep<VerificationChange>?
        var calls: [ScriptedCall] = []
    }

    private let state = Mutex(State())

    /// - Parameters:
    ///   - id: the provider instance id.
    ///   - capabilities: what the provider declares; every channel by default.
    public init(
        id: String = "scripted",
        capabilities: ProviderCapabilities = ProviderCapabilities(channels: Set(Channel.allCases))
    ) {
        self.id = id
        self.capabilities = capabilities
    }

    /// A provider that serves only `channels`, with otherwise default capabilities.
    public convenience init(id: String, channels: Set<Channel>) {
        self.init(id: id, capabilities: ProviderCapabilities(channels: channels))
    }

    // MARK: scripting

    /// Queues answers for `start`, oldest first; once empty, the fallback or an accepted start.
    public func scriptStart(_ steps: ScriptedStep<ProviderStartResult>...) { state.withLock { $0.start += steps } }
    /// Queues answers for `check`, oldest first; once empty, the fallback or `internal`.
    public func scriptCheck(_ steps: ScriptedStep<ProviderCheckResult>...) { state.withLock { $0.check += steps } }
    /// Queues answers for `resend`, oldest first; once empty, the fallback or a success.
    public func scriptResend(_ steps: ScriptedStep<ProviderStartResult>...) { state.withLock { $0.resend += steps } }
    /// Queues answers for `cancel`, oldest first; once empty, the fallback or a success.
    public func scriptCancel(_ steps: ScriptedStep<Void>...) { state.withLock { $0.cancel += steps } }
    /// Queues answers for `status`, oldest first; once empty, the fallback or no change.
    public func scriptStatus(_ steps: ScriptedStep<VerificationChange>...) { state.withLock { $0.status += steps } }
    /// What `prepare` answers, oldest first; once empty it answers `nil` (no challenge).
    public func scriptPrepare(_ steps: ScriptedStep<ProviderChallenge?>...) { state.withLock { $0.prepare += steps } }
    /// What `submitChallenge` answers, oldest first; once empty it throws `internal`.
    public func scriptChallenge(_ steps: ScriptedStep<ProviderStartResult>...) {
        state.withLock { $0.challenge += steps }
    }
    /// How `handleCallback` reads a callback (the plugin's signature check and parsing).
    public func setCallbackHandler(
        _ handler: @escaping @Sendable (VendorCallback, VerificationLookup) async throws(GatewayError) -> CallbackReply
    ) {
        state.withLock { $0.callback = handler }
    }

    /// What `start` answers once its queue is empty.
    public func setFallbackStart(_ step: ScriptedStep<ProviderStartResult>?) {
        state.withLock { $0.fallbackStart = step }
    }
    /// What `check` answers once its queue is empty.
    public func setFallbackCheck(_ step: ScriptedStep<ProviderCheckResult>?) {
        state.withLock { $0.fallbackCheck = step }
    }
    /// What `resend` answers once its queue is empty.
    public func setFallbackResend(_ step: ScriptedStep<ProviderStartResult>?) {
        state.withLock { $0.fallbackResend = step }
    }
    /// What `cancel` answers once its queue is empty.
    public func setFallbackCancel(_ step: ScriptedStep<Void>?) {
        state.withLock { $0.fallbackCancel = step }
    }
    /// What `status` answers once its queue is empty.
    public func setFallbackStatus(_ step: ScriptedStep<VerificationChange>?) {
        state.withLock { $0.fallbackStatus = step }
    }

    // MARK: what happened

    /// Every call received, in arrival order.
    public var calls: [ScriptedCall] { state.withLock { $0.calls } }

    /// The calls of one operation, in arrival order.
    public func calls(_ operation: ScriptedCall.Operation) -> [ScriptedCall] {
        state.withLock { $0.calls.filter { $0.operation == operation } }
    }

    /// How many calls of `operation` arrived.
    public func callCount(_ operation: ScriptedCall.Operation) -> Int {
        state.withLock { $0.calls.count { $0.operation == operation } }
    }

    /// Waits until `count` calls of `operation` have arrived; `false` if `timeout` passes first (a bound
    /// against a hang, not a speed figure: tests run in parallel on busy machines).
    public func waitForCalls(
        _ operation: ScriptedCall.Operation, count: Int, timeout: Duration = .seconds(60)
    ) async -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while callCount(operation) < count {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return true
    }

    // MARK: VerificationProvider

    /// Records the call and answers from ``scriptPrepare(_:)`` only when a step is queued; otherwise answers `nil` and
    /// records nothing.
    public func prepare(_ request: StartVerification) async throws(GatewayError) -> ProviderChallenge? {
        let step = state.withLock { state -> ScriptedStep<ProviderChallenge?> in
            // Only a provider scripted to set challenges has its `prepare` calls recorded: the engine asks
            // every provider, and tests that count calls count the vendor's operations.
            guard !state.prepare.isEmpty else { return .succeed(nil) }
            var call = ScriptedCall(
                operation: .prepare, destination: request.destination, channel: request.channel, reference: nil,
                state: .empty, code: nil, requestedChannel: nil, startRequest: request)
            call.verificationID = request.verificationID
            call.clientContext = request.clientContext
            state.calls.append(call)
            return state.prepare.removeFirst()
        }
        return try await step.perform()
    }

    /// Records the call and answers from ``scriptStart(_:)``, the fallback, or an accepted start with reference
    /// `<id>-ref-<n>`.
    public func start(_ request: StartVerification) async throws(GatewayError) -> ProviderStartResult {
        let step = state.withLock { state -> ScriptedStep<ProviderStartResult> in
            var call = ScriptedCall(
                operation: .start, destination: request.destination, channel: request.channel, reference: nil,
                state: .empty, code: nil, requestedChannel: nil, startRequest: request)
            call.verificationID = request.verificationID
            call.clientContext = request.clientContext
            state.calls.append(call)
            if !state.start.isEmpty { return state.start.removeFirst() }
            if let fallback = state.fallbackStart { return fallback }
            let number = state.calls.count { $0.operation == .start }
            return .succeed(ProviderStartResult(reference: "\(id)-ref-\(number)"))
        }
        return try await step.perform()
    }

    /// Records the call and answers from ``scriptChallenge(_:)``; throws `internal` when nothing is queued.
    public func submitChallenge(_ verification: ProviderVerification, answer: ChallengeAnswer)
        async throws(GatewayError) -> ProviderStartResult
    {
        let step = state.withLock { state -> ScriptedStep<ProviderStartResult> in
            var call = Self.call(.challenge, verification)
            call.answer = answer.answer
            state.calls.append(call)
            if !state.challenge.isEmpty { return state.challenge.removeFirst() }
            return .fail(GatewayError(.internal, "ScriptedProvider \(id): no challenge answer was scripted."))
        }
        return try await step.perform()
    }

    /// Records the call and answers from ``scriptCheck(_:)`` or the fallback; throws `internal` when neither is set.
    public func check(_ verification: ProviderVerification, code: String) async throws(GatewayError)
        -> ProviderCheckResult
    {
        let step = state.withLock { state -> ScriptedStep<ProviderCheckResult> in
            state.calls.append(Self.call(.check, verification, code: code))
            if !state.check.isEmpty { return state.check.removeFirst() }
            if let fallback = state.fallbackCheck { return fallback }
            return .fail(GatewayError(.internal, "ScriptedProvider \(id): no check was scripted."))
        }
        return try await step.perform()
    }

    /// Records the call and answers from ``scriptResend(_:)``, the fallback, or a success with no new reference.
    public func resend(_ verification: ProviderVerification, request: ResendRequest) async throws(GatewayError)
        -> ProviderStartResult
    {
        let step = state.withLock { state -> ScriptedStep<ProviderStartResult> in
            var call = Self.call(.resend, verification, requestedChannel: request.channel)
            call.resendRequest = request
            state.calls.append(call)
            if !state.resend.isEmpty { return state.resend.removeFirst() }
            return state.fallbackResend ?? .succeed(ProviderStartResult(reference: nil))
        }
        return try await step.perform()
    }

    /// Records the call and answers from ``scriptCancel(_:)``, the fallback, or a success.
    public func cancel(_ verification: ProviderVerification) async throws(GatewayError) {
        let step = state.withLock { state -> ScriptedStep<Void> in
            state.calls.append(Self.call(.cancel, verification))
            if !state.cancel.isEmpty { return state.cancel.removeFirst() }
            return state.fallbackCancel ?? .done
        }
        try await step.perform()
    }

    /// Records the call and answers from ``scriptStatus(_:)``, the fallback, or no change.
    public func status(_ verification: ProviderVerification) async throws(GatewayError) -> VerificationChange {
        let step = state.withLock { state -> ScriptedStep<VerificationChange> in
            state.calls.append(Self.call(.status, verification))
            if !state.status.isEmpty { return state.status.removeFirst() }
            return state.fallbackStatus ?? .succeed(VerificationChange())
        }
        return try await step.perform()
    }

    /// Records the call and hands it to the handler of ``setCallbackHandler(_:)``; throws `not_found` without one.
    public func handleCallback(_ callback: VendorCallback, lookup: VerificationLookup) async throws(GatewayError)
        -> CallbackReply
    {
        let handler = state.withLock { state in
            state.calls.append(
                ScriptedCall(
                    operation: .callback, destination: .identity("callback"), channel: .sms, reference: nil,
                    state: .empty, code: nil, requestedChannel: nil, startRequest: nil))
            return state.callback
        }
        guard let handler else { throw GatewayError(.notFound, "ScriptedProvider \(id) takes no callbacks.") }
        return try await handler(callback, lookup)
    }

    private static func call(
        _ operation: ScriptedCall.Operation, _ verification: ProviderVerification, code: String? = nil,
        requestedChannel: Channel? = nil
    ) -> ScriptedCall {
        var call = ScriptedCall(
            operation: operation, destination: verification.destination, channel: verification.channel,
            reference: verification.reference, state: verification.state, code: code,
            requestedChannel: requestedChannel, startRequest: nil)
        call.verificationID = verification.id
        call.clientContext = verification.clientContext
        return call
    }
}

/// A one-shot barrier: tasks that ``wait()`` stay suspended until ``open()`` is called; once open it stays
/// open. Lets a test hold a scripted vendor call in flight while it does something else.
public final class ScriptedGate: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// A closed gate.
    public init() {}

    /// Suspends until the gate is open (returns at once if it already is). Not cancellable.
    public func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.isOpen { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Opens the gate for good, resuming every task waiting on it.
    public func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// Builds a registry that serves exactly `providers`, each under its own `id`, through one stub plugin per
/// provider (plugin id `scripted-<provider id>`) whose `makeProvider` returns the given instance.
public func makeRegistry(_ providers: [any VerificationProvider]) throws -> ProviderRegistry {
    let plugins = providers.map { provider in
        GatewayPlugin(
            id: "scripted-\(provider.id)",
            displayName: "Scripted \(provider.id)",
            settings: [],
            makeProvider: { (_: ProviderContext) throws(ConfigurationError) -> any VerificationProvider in provider },
            makeEmulator: { _ in SilentEmulator() },
            sandboxSettings: { _ in [:] })
    }
    let configurations = providers.map {
        ProviderConfiguration(id: $0.id, plugin: "scripted-\($0.id)", settings: [:])
    }
    return try ProviderRegistry(plugins: plugins, configurations: configurations) { configuration in
        ProviderContext(
            providerID: configuration.id, settings: configuration.settings, transport: UnreachableTransport(),
            clock: SystemClock(), logger: .quiet)
    }
}

/// An emulator with nothing behind it: every request gets a 404.
struct SilentEmulator: VendorEmulator {
    let faults = FaultSwitch()

    func handle(_ request: EmulatorRequest) async -> EmulatorResponse {
        .response(TransportResponse(status: .notFound))
    }
}

/// Scripted providers never send HTTP; a plugin that tries is told the vendor is unreachable.
private struct UnreachableTransport: HTTPTransport {
    func send(_ request: TransportRequest, timeout: Duration) async throws(TransportError) -> TransportResponse {
        throw .connectFailed("scripted providers have no transport")
    }
}

/// A plugin (id = the provider's id) whose provider is `provider` and whose emulator is `emulator`
/// (one that answers 404 to everything by default): lets a test install a scripted vendor in a gateway.
public func scriptedPlugin(
    _ provider: ScriptedProvider,
    emulator: (@Sendable (EmulatorContext) -> any VendorEmulator)? = nil
) -> GatewayPlugin {
    GatewayPlugin(
        id: provider.id,
        displayName: "Scripted \(provider.id)",
        settings: [],
        makeProvider: { (_: ProviderContext) throws(ConfigurationError) -> any VerificationProvider in provider },
        makeEmulator: emulator ?? { _ in SilentEmulator() },
        sandboxSettings: { _ in [:] })
}
