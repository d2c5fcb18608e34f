import Foundation
import GatewayCore
import HTTPTypes
import Testing

/// A plugin's provider wired to its own emulator in process, as the provider conformance suite drives it: one
/// manual clock and outbox shared by both, the emulator's error switch, and its callbacks kept.
package protocol ProviderConformanceRig: Sendable {
    var provider: any VerificationProvider { get }
    var clock: ManualClock { get }
    var outbox: SandboxOutbox { get }
    /// The emulator's switch for answering with a row of the plugin's error table.
    var errors: EmulatorErrorSwitch { get }
    /// The emulator's fault switch (latency, resets, server errors, unreadable bodies), as the sandbox's
    /// `PUT /sandbox/faults/{plugin}` sets it.
    var faults: FaultSwitch { get }
    /// Lets the emulator do what time has made due (workflow steps, expiry) after the clock moved.
    func tick() async
    /// The callbacks the emulator has sent so far (those on their way delivered first).
    func callbacks() async -> [VendorCallback]
    /// The code the app ends up with after `result` when the outbox does not have it (Vonage silent auth:
    /// the device follows `check_url`); `nil` to read it from the outbox.
    func appCode(after result: ProviderStartResult, to destination: Destination) async throws -> String?
    /// Readies `destination` for a start on `channel` (Twilio Verify Push: enrols a device for the identity).
    func prepare(_ destination: Destination, for channel: Channel) async throws
    /// Does what the user does on a channel that completes without a code (approves the push on the device).
    func approveWithoutCode(_ result: ProviderStartResult, to destination: Destination) async throws
    /// What the app does when a start or a resend asks it to act before anything is sent (IDaaS: it solves the
    /// slider, and the answer sends the code): the result as it then stands. By default the result unchanged.
    func completed(_ result: ProviderStartResult, of verification: ProviderVerification) async throws
        -> ProviderStartResult
}

extension ProviderConformanceRig {
    package func appCode(after result: ProviderStartResult, to destination: Destination) async throws -> String? {
        nil
    }

    package func prepare(_ destination: Destination, for channel: Channel) async throws {}

    package func approveWithoutCode(_ result: ProviderStartResult, to destination: Destination) async throws {
        Issue.record("the rig cannot complete a verification without a code")
    }

    package func completed(_ result: ProviderStartResult, of verification: ProviderVerification) async throws
        -> ProviderStartResult
    {
        result
    }
}

/// The behaviour every provider must show against its own emulator, written once and run by each plugin's
/// tests with one call (`@Test(arguments: ProviderConformance.Check.allCases)`), as every store runs
/// ``StoreConformance``: start, check (wrong, right, already approved), the vendor's attempt limit, resend,
/// cancel, refresh, callbacks (good and bad signature), expiry, every row of the error table reached through
/// the emulator's error switch and mapped as it says, every declared channel, a double submit, emulator
/// state whose cost stays flat as it fills, and transport failures (no answer in time, a reset, a 5xx, an
/// unreadable 2xx) through its fault switch.
///
/// Each check builds a new rig, so checks are independent. The checks of an optional operation (resend, cancel,
/// refresh, callbacks) run when the provider offers it (``GatewayCore/VerificationProvider/operations``); for every
/// operation it does not offer, ``Check/undeclaredOperationsAreRefusedBeforeTheVendor`` drives the engine over the
/// provider and shows the operation refused (or answered by the gateway alone) with the vendor unreachable.
package struct ProviderConformance: Sendable {
    /// The provider call that makes a vendor operation, to reach an error row on it.
    package enum Call: Sendable {
        case start, check, resend, cancel, status
        /// The provider's SIM-swap signal (``GatewayCore/SimSwapSignalProvider``), asked for the destination.
        case signal
        /// A codeless step completed on the device (``ProviderConformanceRig/approveWithoutCode(_:to:)``): the
        /// error arrives in the callback as a failed update whose reason names the vendor's code.
        case silentStep
    }

    /// What the suite is run on, for failure messages (`vonage v2`).
    package var name: String
    /// A new rig whose emulator keeps its state in `persistence`.
    package var makeRig: @Sendable (_ persistence: any EmulatorPersistence) throws -> any ProviderConformanceRig
    /// The `index`-th of many distinct destinations the emulator accepts.
    package var destination: @Sendable (_ index: Int) throws -> Destination
    /// The destination for `channel` when it is not a phone number (email).
    package var destinationFor: @Sendable (_ channel: Channel) -> Destination? = { _ in nil }
    /// The error rows the emulator answers on this configuration (a vocabulary of the table).
    package var rows: [VendorErrorRow]
    /// The provider call behind each vendor operation of the rows; a row without one is reached by a start.
    package var calls: [String: Call]
    /// The fallback channels a start needs for a resend to have somewhere to go (Vonage: the next step).
    package var resendFallbacks: [Channel] = []
    /// How long after a start a cancel is allowed (Vonage: 30 s).
    package var cancelAfter: TimeInterval = 0
    /// After this long (and a tick) a started verification's code no longer approves.
    package var expiresAfter: TimeInterval
    /// Whether the vendor still answers a status after approval (Twilio forgets an approved verification:
    /// docs/vendors/twilio.md §2.6, so a refresh then is `not_found`, and the gateway's record keeps the approval).
    package var statusAfterApproval = true
    /// Whether the vendor answers any check of an approved verification with `approved` (Sinch reports the
    /// verification's status: a double tap reports twice); the gateway's record, not the vendor, then makes the
    /// approval count once.
    package var checkAfterApprovalIsApproved = false
    /// Whether the provider's code is the gateway's own (``GatewayCore/OwnCodeProvider``): a check compares with
    /// the stored digest and remembers nothing, so that an approved verification takes no other check, and that
    /// racing right codes approve once, is the engine's doing (the record's final state, the serialized checks).
    /// Those two checks then run through the engine over the provider instead of on the provider alone.
    package var checksAreTheGateways = false
    /// The channel whose approval the vendor reports by callback (Twilio: push only).
    package var callbackChannel: Channel = .sms
    /// The header fields that carry a callback's signature.
    package var signatureHeaders: [HTTPField.Name] = []
    /// A callback changed after it was signed; by default its body with a space added, which changes what a
    /// form or raw-body signature covers.
    package var tamper: @Sendable (VendorCallback) -> VendorCallback = { callback in
        var tampered = callback
        tampered.body = callback.body + Data(" ".utf8)
        return tampered
    }
    /// A callback without its signature, for a vendor that signs inside the body (Vonage SMS's `sig`); by
    /// default the callback without ``signatureHeaders``.
    package var unsign: (@Sendable (VendorCallback) -> VendorCallback)?
    /// The emulator's table whose rows the state measure reads; empty for an emulator that keeps no state
    /// (a messaging API that only sends), which the measure then passes over.
    package var stateTable: String
    /// The app's proof that starts and resends carry, for a vendor that requires one (Firebase).
    package var appVerification: AppVerificationProof?
    /// Whether a start answers a vendor reference; `false` for a vendor whose handle is all in the state (IDaaS).
    package var startsWithReference = true
    /// A new rig whose provider gives up on a vendor call after the request timeout given (the transport
    /// failures check). Every plugin gives one: without it that check fails.
    package var makeRigWithTimeout: (@Sendable (_ requestTimeout: Duration) throws -> any ProviderConformanceRig)?
    /// Whether a start whose first vendor call got no answer (a timeout, a reset) may have sent: `false` for a
    /// vendor whose start sends nothing by itself (IDaaS: the slider comes first).
    package var startFailureMaySend = true
    /// The channel the checks start on. On a channel the provider completes without a code (CAMARA's
    /// `silent_auth`), the checks about codes check the codeless step instead: the start asks the app to act and
    /// sends no code, a check is refused, the device's approval (by callback) approves.
    package var startChannel: Channel = .sms
    /// Whether the provider's callbacks carry no signature (a user's browser back from an authorization): a
    /// callback changed by ``tamper`` must then change nothing, instead of being refused as unsigned.
    package var callbacksAreUnsigned = false
    /// The call that meets the transport failures: a start, or, for a provider whose start calls no vendor
    /// (CAMARA builds the URL the device opens), its signal.
    package var transportCall: Call = .start

    package init(
        name: String, makeRig: @escaping @Sendable (any EmulatorPersistence) throws -> any ProviderConformanceRig,
        destination: @escaping @Sendable (Int) throws -> Destination, rows: [VendorErrorRow], calls: [String: Call],
        expiresAfter: TimeInterval, stateTable: String
    ) {
        self.name = name
        self.makeRig = makeRig
        self.destination = destination
        self.rows = rows
        self.calls = calls
        self.expiresAfter = expiresAfter
        self.stateTable = stateTable
    }

    package enum Check: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case startSendsACode
        case wrongCodeIsPendingAndRightCodeApproves
        case approvedVerificationTakesNoOtherCheck
        case vendorAttemptLimitHolds
        case resendSendsAgain
        case cancelEndsTheVerification
        case refreshReportsTheStatus
        case callbacksAreTakenOnlyWhenSigned
        case expiredVerificationDoesNotApprove
        case everyErrorRowMapsAsTheTableSays
        case everyDeclaredChannelStarts
        case doubleSubmitApprovesOnce
        case emulatorStateCostStaysFlat
        case transportFailuresMapToProviderErrors
        case undeclaredOperationsAreRefusedBeforeTheVendor

        package var testDescription: String {
            switch self {
            case .startSendsACode: "A start sends a code to the destination"
            case .wrongCodeIsPendingAndRightCodeApproves: "A wrong code is pending, the right code approves"
            case .approvedVerificationTakesNoOtherCheck: "An approved verification takes no other check"
            case .vendorAttemptLimitHolds: "The vendor's declared attempt limit ends the verification"
            case .resendSendsAgain: "A resend sends again, keeping the code when it says so"
            case .cancelEndsTheVerification: "A cancel ends the verification"
            case .refreshReportsTheStatus: "A refresh reports pending, then approved"
            case .callbacksAreTakenOnlyWhenSigned: "Callbacks are taken when signed, refused when not"
            case .expiredVerificationDoesNotApprove: "An expired verification does not approve"
            case .everyErrorRowMapsAsTheTableSays: "Every error row, answered by the emulator, maps as the table says"
            case .everyDeclaredChannelStarts: "Every declared channel starts"
            case .doubleSubmitApprovesOnce: "Two checks of the right code at once approve once"
            case .emulatorStateCostStaysFlat: "Emulator state costs as many rows per call at 2,000 requests as at 20"
            case .transportFailuresMapToProviderErrors:
                "No answer in time, a reset, a 5xx and an unreadable 2xx map to the kit's provider errors"
            case .undeclaredOperationsAreRefusedBeforeTheVendor:
                "Every operation the provider does not offer is refused, or answered by the gateway, before the vendor"
            }
        }
    }

    /// Runs one check.
    package func run(_ check: Check) async throws {
        switch check {
        case .startSendsACode: try await startSendsACode()
        case .wrongCodeIsPendingAndRightCodeApproves: try await wrongThenRight()
        case .approvedVerificationTakesNoOtherCheck: try await approvedTakesNoOtherCheck()
        case .vendorAttemptLimitHolds: try await vendorAttemptLimitHolds()
        case .resendSendsAgain: try await resendSendsAgain()
        case .cancelEndsTheVerification: try await cancelEnds()
        case .refreshReportsTheStatus: try await refreshReportsTheStatus()
        case .callbacksAreTakenOnlyWhenSigned: try await callbacksAreTakenOnlyWhenSigned()
        case .expiredVerificationDoesNotApprove: try await expiredDoesNotApprove()
        case .everyErrorRowMapsAsTheTableSays: try await everyErrorRow()
        case .everyDeclaredChannelStarts: try await everyDeclaredChannel()
        case .doubleSubmitApprovesOnce: try await doubleSubmit()
        case .emulatorStateCostStaysFlat: try await stateCostStaysFlat()
        case .transportFailuresMapToProviderErrors: try await transportFailures()
        case .undeclaredOperationsAreRefusedBeforeTheVendor: try await undeclaredOperationsAreRefused()
        }
    }

    // MARK: helpers

    /// A started verification as the gateway stores it, with the code the user got.
    package struct Started: Sendable {
        var verification: ProviderVerification
        var result: ProviderStartResult
        var code: String?
    }

    private func rig(_ persistence: any EmulatorPersistence = InMemoryEmulatorPersistence()) throws
        -> any ProviderConformanceRig
    {
        try makeRig(persistence)
    }

    private func start(
        _ rig: any ProviderConformanceRig, index: Int = 0, channel: Channel? = nil, fallbacks: [Channel] = [],
        verificationID: String? = nil
    ) async throws -> Started {
        let channel = channel ?? startChannel
        let destination = try destinationFor(channel) ?? self.destination(index)
        try await rig.prepare(destination, for: channel)
        let request = StartVerification(
            destination: destination, channel: channel, appVerification: appVerification, fallbackChannels: fallbacks,
            verificationID: verificationID)
        let first = try await rig.provider.start(request)
        var verification = ProviderVerification(
            id: verificationID ?? "", destination: destination, channel: first.channel ?? channel,
            fallbackChannels: fallbacks, reference: first.reference, state: first.state)
        let result = try await rig.completed(first, of: verification)
        Self.apply(result, to: &verification)
        let code = try await rig.appCode(after: result, to: destination) ?? rig.outbox.last(to: destination.value)?.code
        return Started(verification: verification, result: result, code: code)
    }

    /// Whether the checks start on a channel the provider completes without a code.
    func codeless(_ rig: any ProviderConformanceRig) -> Bool {
        rig.provider.capabilities.completesWithoutCode.contains(startChannel)
    }

    /// The device completes `started`'s codeless step; the provider's replies to the callbacks that follow.
    func completeOnTheDevice(_ rig: any ProviderConformanceRig, _ started: Started) async throws -> [CallbackReply] {
        try await rig.approveWithoutCode(started.result, to: started.verification.destination)
        let receiving = try #require(rig.provider.callbackReceiving, "\(name): a codeless step needs callbacks")
        let verification = started.verification
        var replies: [CallbackReply] = []
        for callback in await rig.callbacks() {
            replies.append(
                try await receiving.handleCallback(callback, lookup: VerificationLookup { _ in verification }))
        }
        return replies
    }

    /// Whether `replies` approve the verification.
    static func approves(_ replies: [CallbackReply]) -> Bool {
        replies.contains { $0.updates.contains { $0.change.status == .approved } }
    }

    /// The checks' answer for a codeless step: a check is refused as the verification's state, whatever the code.
    func expectCheckRefused(_ rig: any ProviderConformanceRig, _ started: Started) async {
        await expectVerificationError("a check of a codeless step") {
            try await rig.provider.check(started.verification, code: "123456")
        }
    }

    /// `verification` as the gateway keeps it after `result`.
    static func apply(_ result: ProviderStartResult, to verification: inout ProviderVerification) {
        verification.channel = result.channel ?? verification.channel
        verification.reference = result.reference ?? verification.reference
        if !result.state.isEmpty { verification.state = result.state }
    }

    /// A code of the right shape that is not `code`.
    static func wrong(_ code: String?) -> String {
        guard let code, !code.isEmpty else { return "000000" }
        let last = code.last == "0" ? "1" : "0"
        return String(code.dropLast()) + last
    }

    private func expectVerificationError(
        _ what: String, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () async throws -> ProviderCheckResult
    ) async {
        do {
            let result = try await body()
            #expect(
                result.status != .pending && result.status != .approved, "\(name): \(what) answered \(result.status)",
                sourceLocation: sourceLocation)
        } catch let error as GatewayError {
            #expect(
                error.errorClass == .verification, "\(name): \(what) failed with \(error)",
                sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(name): \(what) failed with \(error)", sourceLocation: sourceLocation)
        }
    }

    // MARK: checks

    func startSendsACode() async throws {
        let rig = try rig()
        let started = try await start(rig)
        if codeless(rig) {
            // Nothing to send: the start asks the app to act, and the device's step approves.
            #expect(started.result.reference != nil, "\(name): the start has no reference to find it by")
            #expect(started.result.nextAction != nil, "\(name): a codeless start asks the app to do nothing")
            #expect(
                rig.outbox.messages(to: started.verification.destination.value).allSatisfy { $0.code == nil },
                "\(name): a codeless start sent a code")
            #expect(Self.approves(try await completeOnTheDevice(rig, started)), "\(name): the device's step")
            return
        }
        if startsWithReference {
            #expect(started.result.reference != nil, "\(name): the start has no vendor reference")
        } else {
            #expect(!started.verification.state.isEmpty, "\(name): the start keeps nothing of the vendor's")
        }
        let message = try #require(rig.outbox.last(to: started.verification.destination.value), "\(name): nothing sent")
        #expect(message.kind == .sms && message.code != nil && message.code == started.code)
    }

    func wrongThenRight() async throws {
        let rig = try rig()
        let started = try await start(rig)
        if codeless(rig) {
            await expectCheckRefused(rig, started)
            #expect(Self.approves(try await completeOnTheDevice(rig, started)), "\(name): the device's step")
            return
        }
        let code = try #require(started.code)
        let wrong = try await rig.provider.check(started.verification, code: Self.wrong(code))
        #expect(wrong.status == .pending, "\(name): a wrong code answered \(wrong.status)")
        let right = try await rig.provider.check(started.verification, code: code)
        #expect(right.status == .approved, "\(name): the right code answered \(right.status)")
    }

    func approvedTakesNoOtherCheck() async throws {
        let rig = try rig()
        if checksAreTheGateways { return try await approvedTakesNoOtherCheckInTheEngine(rig) }
        let started = try await start(rig)
        if codeless(rig) {
            #expect(Self.approves(try await completeOnTheDevice(rig, started)), "\(name): the device's step")
            await expectCheckRefused(rig, started)
            return
        }
        let code = try #require(started.code)
        #expect(try await rig.provider.check(started.verification, code: code).status == .approved)
        if checkAfterApprovalIsApproved {
            for again in [code, Self.wrong(code)] {
                #expect(try await rig.provider.check(started.verification, code: again).status == .approved, "\(name)")
            }
            return
        }
        await expectVerificationError("a second right code") {
            try await rig.provider.check(started.verification, code: code)
        }
        await expectVerificationError("a wrong code after approval") {
            try await rig.provider.check(started.verification, code: Self.wrong(code))
        }
    }

    func vendorAttemptLimitHolds() async throws {
        let rig = try rig()
        guard let limit = rig.provider.capabilities.vendorMaxAttempts else { return }
        let started = try await start(rig)
        let wrong = Self.wrong(started.code)
        for attempt in 1..<limit {
            let result = try await rig.provider.check(started.verification, code: wrong)
            #expect(result.status == .pending, "\(name): wrong code \(attempt) of \(limit) answered \(result.status)")
        }
        let last = await expectGatewayError(.maxAttemptsReached) {
            try await rig.provider.check(started.verification, code: wrong)
        }
        #expect(last?.attemptsRemaining == 0, "\(name): the last wrong code leaves attempts")
        await expectVerificationError("the right code after the limit") {
            try await rig.provider.check(started.verification, code: try #require(started.code))
        }
    }

    func resendSendsAgain() async throws {
        let rig = try rig()
        let capabilities = rig.provider.capabilities
        guard let resending = rig.provider.resending else { return }
        let started = try await start(rig, fallbacks: resendFallbacks)
        let destination = started.verification.destination.value
        let before = rig.outbox.messages(to: destination).count
        var moved = started.verification
        let asked = try await resending.resend(
            started.verification, request: ResendRequest(appVerification: appVerification))
        Self.apply(asked, to: &moved)
        Self.apply(try await rig.completed(asked, of: moved), to: &moved)
        #expect(rig.outbox.messages(to: destination).count == before + 1, "\(name): the resend sent nothing")
        let message = try #require(rig.outbox.last(to: destination))
        if capabilities.resendKeepsCode {
            #expect(message.code == started.code, "\(name): the resend changed the code")
        }
        let code = try #require(message.code)
        #expect(try await rig.provider.check(moved, code: code).status == .approved, "\(name): the resent code")
    }

    func cancelEnds() async throws {
        let rig = try rig()
        guard let canceling = rig.provider.canceling else { return }
        let started = try await start(rig)
        rig.clock.advance(by: cancelAfter + 1)
        try await canceling.cancel(started.verification)
        await expectVerificationError("a check after cancel") {
            try await rig.provider.check(started.verification, code: try #require(started.code))
        }
    }

    func refreshReportsTheStatus() async throws {
        let rig = try rig()
        guard let reporting = rig.provider.statusReporting else { return }
        let started = try await start(rig)
        // No change (`status` nil) leaves it pending.
        #expect(
            (try await reporting.status(started.verification).status ?? .pending) == .pending,
            "\(name): refresh after start")
        #expect(
            try await rig.provider.check(started.verification, code: try #require(started.code)).status == .approved)
        if statusAfterApproval {
            #expect(
                try await reporting.status(started.verification).status == .approved,
                "\(name): refresh after approval")
        } else {
            await expectGatewayError(.notFound) { try await reporting.status(started.verification) }
        }
    }

    func callbacksAreTakenOnlyWhenSigned() async throws {
        let rig = try rig()
        guard let receiving = rig.provider.callbackReceiving else { return }
        let started = try await start(
            rig, channel: callbackChannel, verificationID: "vf_" + String(repeating: "c", count: 32))
        if rig.provider.capabilities.completesWithoutCode.contains(callbackChannel) {
            try await rig.approveWithoutCode(started.result, to: started.verification.destination)
        } else {
            #expect(
                try await rig.provider.check(started.verification, code: try #require(started.code)).status == .approved
            )
        }
        let callbacks = await rig.callbacks()
        try #require(!callbacks.isEmpty, "\(name): the emulator sent no callback for an approval")
        let verification = started.verification
        let lookup = VerificationLookup { _ in verification }
        var approved = false
        var receipts: [DeliveryReceipt] = []
        for callback in callbacks {
            let reply = try await receiving.handleCallback(callback, lookup: lookup)
            approved = approved || reply.updates.contains { $0.change.status == .approved }
            receipts += reply.receipts
            let tampered = tamper(callback)
            if callbacksAreUnsigned {
                // Nothing to check a signature with: a changed callback must find nothing to change.
                let none = VerificationLookup { _ in nil }
                let reply = try await receiving.handleCallback(tampered, lookup: none)
                #expect(reply.updates.isEmpty, "\(name): a changed callback changed a verification")
                continue
            }
            await expectGatewayError(.unauthorized) { try await receiving.handleCallback(tampered, lookup: lookup) }
            var unsigned = callback
            if let unsign {
                unsigned = unsign(callback)
            } else {
                for field in signatureHeaders { unsigned.headerFields[field] = nil }
            }
            await expectGatewayError(.unauthorized) { try await receiving.handleCallback(unsigned, lookup: lookup) }
        }
        if rig.provider is OwnCodeProvider {
            // A messaging vendor reports deliveries, not approvals (the gateway approves its own codes).
            #expect(
                receipts.contains { $0.messageID == started.result.reference && $0.status == .delivered },
                "\(name): no receipt reported the message delivered")
            #expect(
                receipts.allSatisfy { $0.verificationID == verification.id }, "\(name): a receipt lost its verification"
            )
        } else {
            #expect(approved, "\(name): no callback reported the approval")
        }
    }

    func expiredDoesNotApprove() async throws {
        let rig = try rig()
        let started = try await start(rig)
        if codeless(rig) {
            // The step states its end, which the engine holds it to (a late approval finds it expired).
            let ends = try #require(started.result.expiresAt, "\(name): a codeless step states no end")
            #expect(ends <= rig.clock.now.addingTimeInterval(expiresAfter), "\(name): the step ends at \(ends)")
            return
        }
        rig.clock.advance(by: expiresAfter + 1)
        await rig.tick()
        await expectVerificationError("the right code after expiry") {
            try await rig.provider.check(started.verification, code: try #require(started.code))
        }
    }

    func everyErrorRow() async throws {
        try #require(!rows.isEmpty, "\(name): no error rows to reach")
        for (index, row) in rows.enumerated() {
            let rig = try rig()
            let call = row.operation.map { calls[$0] } ?? .start
            let label =
                "\(name) row \(row.httpStatus.map(String.init) ?? "-") \(row.code ?? "-") on \(row.operation ?? "any")"
            guard let call else {
                Issue.record("\(label): no provider call reaches operation \(row.operation ?? "-")")
                continue
            }
            // Each row on a destination of its own, so no earlier verification is in the way.
            let needsStart = call != .start && call != .signal
            let started = needsStart ? try await start(rig, index: index, fallbacks: resendFallbacks) : nil
            rig.errors.arm(row)
            let outcome: Result<String, GatewayError>
            do {
                switch call {
                case .start:
                    let request = StartVerification(
                        destination: try destination(index), channel: startChannel, appVerification: appVerification)
                    outcome = .success("started \(String(describing: try await rig.provider.start(request).reference))")
                case .signal:
                    let signal = try #require(rig.provider as? any SimSwapSignalProvider, "\(label): no signal")
                    let number = try #require(try destination(index).phoneNumber)
                    outcome = .success("swapped \(try await signal.simSwapped(number, withinHours: 72))")
                case .silentStep:
                    let replies = try await completeOnTheDevice(rig, try #require(started))
                    let change = try #require(replies.flatMap(\.updates).first?.change, "\(label): no update")
                    #expect(
                        change.status == .failed, "\(label): the step answered \(String(describing: change.status))")
                    #expect(
                        change.reason?.hasSuffix(row.code ?? "-") == true,
                        "\(label): the failure's reason \(change.reason ?? "-") names another code")
                    outcome = .success("failed")
                case .check:
                    let verification = try #require(started?.verification)
                    outcome = .success(
                        "\(try await rig.provider.check(verification, code: Self.wrong(started?.code)).status)")
                case .resend:
                    let verification = try #require(started?.verification)
                    let resending = try #require(rig.provider.resending, "\(label): the provider offers no resend")
                    _ = try await resending.resend(
                        verification, request: ResendRequest(appVerification: appVerification))
                    outcome = .success("resent")
                case .cancel:
                    let canceling = try #require(rig.provider.canceling, "\(label): the provider offers no cancel")
                    try await canceling.cancel(try #require(started?.verification))
                    outcome = .success("canceled")
                case .status:
                    let reporting = try #require(
                        rig.provider.statusReporting, "\(label): the provider offers no status")
                    let change = try await reporting.status(try #require(started?.verification))
                    outcome = .success(change.status?.rawValue ?? "no status")
                }
            } catch let error as GatewayError {
                outcome = .failure(error)
            }
            #expect(
                rig.errors.take(operation: row.operation ?? "start") == nil, "\(label): the emulator never answered it")
            switch outcome {
            case .success(let answer) where call == .silentStep:
                // Checked above; what the code stands for is the plugin's table (its own tests).
                #expect(answer == "failed", "\(label)")
            case .success(let answer):
                // A wrong code is not an error at the contract: the check answers pending.
                #expect(row.mapsTo == .incorrectCode && answer == "pending", "\(label): answered \(answer)")
            case .failure(let error):
                #expect(
                    error.code == row.mapsTo,
                    "\(label): mapped to \(error.code.rawValue), the table says \(row.mapsTo.rawValue)")
                #expect(error.errorClass == row.errorClass && error.isRetryable == row.isRetryable, "\(label)")
                #expect(error.vendor?.code == row.code, "\(label): vendor code \(error.vendor?.code ?? "-")")
                if let status = row.httpStatus { #expect(error.vendor?.httpStatus == status, "\(label)") }
                if (row.httpStatus ?? 200) < 500 {
                    #expect(!error.sendMayHaveHappened, "\(label): a refusal claims a send")
                }
            }
        }
    }

    func everyDeclaredChannel() async throws {
        let channels = try rig().provider.capabilities.channels
        try #require(!channels.isEmpty, "\(name): declares no channel")
        for (index, channel) in channels.sorted(by: { $0.rawValue < $1.rawValue }).enumerated() {
            let rig = try rig()
            let started = try await start(rig, index: index, channel: channel)
            #expect(started.result.channel == nil || started.result.channel == channel, "\(name) \(channel.rawValue)")
            let message = rig.outbox.last(to: started.verification.destination.value)
            #expect(
                message != nil || started.result.nextAction != nil,
                "\(name) \(channel.rawValue): nothing sent, nothing to do")
            // The kind is the gateway's channel; `channel` may keep the vendor's name for it (Twilio's `call`).
            if let message, message.code != nil {
                #expect(
                    message.channel == channel.rawValue || message.kind == .init(channel), "\(name) \(channel.rawValue)"
                )
            }
            guard !rig.provider.capabilities.completesWithoutCode.contains(channel), let code = started.code else {
                continue
            }
            let result = try await rig.provider.check(started.verification, code: code)
            #expect(result.status == .approved, "\(name) \(channel.rawValue): the code answered \(result.status)")
        }
    }

    func doubleSubmit() async throws {
        let rig = try rig()
        if checksAreTheGateways { return try await doubleSubmitInTheEngine(rig) }
        let started = try await start(rig)
        if codeless(rig) { return try await doubleApproval(rig, started) }
        let code = try #require(started.code)
        let provider = rig.provider
        let verification = started.verification
        let answers = await withTaskGroup(of: Result<VerificationStatus, GatewayError>.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    do {
                        return .success(try await provider.check(verification, code: code).status)
                    } catch let error as GatewayError {
                        return .failure(error)
                    } catch {
                        return .failure(GatewayError.internal())
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let approved = answers.filter { (try? $0.get()) == .approved }.count
        #expect(
            approved == (checkAfterApprovalIsApproved ? 4 : 1), "\(name): \(approved) of 4 racing right codes approved")
        for case .failure(let error) in answers {
            #expect(error.errorClass == .verification, "\(name): a racing check failed with \(error)")
        }
    }

    /// The device's callback delivered four times at once (a double-tapped link, a browser's retry): one approval.
    func doubleApproval(_ rig: any ProviderConformanceRig, _ started: Started) async throws {
        try await rig.approveWithoutCode(started.result, to: started.verification.destination)
        let receiving = try #require(rig.provider.callbackReceiving)
        let callback = try #require(await rig.callbacks().first, "\(name): no callback from the device")
        let verification = started.verification
        let approvals = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let reply = try? await receiving.handleCallback(
                        callback, lookup: VerificationLookup { _ in verification })
                    return reply.map { $0.updates.count { $0.change.status == .approved } } ?? 0
                }
            }
            return await group.reduce(0, +)
        }
        #expect(approvals == 1, "\(name): \(approvals) of 4 racing callbacks approved")
    }

    /// A service over the rig's provider alone, on an in-memory store and the rig's clock.
    func engine(_ rig: any ProviderConformanceRig) throws -> VerificationService {
        VerificationService(
            registry: try makeRegistry([rig.provider]),
            routing: RoutingTable(routes: [:], defaultOrder: [rig.provider.id]), store: InMemoryVerificationStore(),
            clock: rig.clock, logger: .quiet)
    }

    /// The code the outbox has for the last message to `destination`.
    func outboxCode(_ rig: any ProviderConformanceRig, to destination: Destination) throws -> String {
        try #require(rig.outbox.messages(to: destination.value).last?.code, "\(name): the outbox has no code")
    }

    func approvedTakesNoOtherCheckInTheEngine(_ rig: any ProviderConformanceRig) async throws {
        let service = try engine(rig)
        let destination = try destination(0)
        let record = try await service.start(StartVerification(destination: destination, channel: .sms))
        let code = try outboxCode(rig, to: destination)
        let approved = try await service.check(CheckVerification(verificationID: record.id, code: code))
        #expect(approved.record.status == .approved)
        for again in [code, Self.wrong(code)] {
            await expectGatewayError(.alreadyApproved) {
                try await service.check(CheckVerification(verificationID: record.id, code: again))
            }
        }
    }

    func doubleSubmitInTheEngine(_ rig: any ProviderConformanceRig) async throws {
        let service = try engine(rig)
        let destination = try destination(0)
        let record = try await service.start(StartVerification(destination: destination, channel: .sms))
        let code = try outboxCode(rig, to: destination)
        let answers = await withTaskGroup(of: GatewayError.Code?.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    do throws(GatewayError) {
                        _ = try await service.check(CheckVerification(verificationID: record.id, code: code))
                        return nil
                    } catch {
                        return error.code
                    }
                }
            }
            return await group.reduce(into: [GatewayError.Code?]()) { $0.append($1) }
        }
        #expect(answers.filter { $0 == nil }.count == 1, "\(name): racing right codes answered \(answers)")
        for case .some(let code) in answers {
            #expect([.alreadyApproved, .concurrentVerification].contains(code), "\(name): a racing check got \(code)")
        }
    }

    func stateCostStaysFlat() async throws {
        guard !stateTable.isEmpty else { return }
        let persistence = CountingEmulatorPersistence()
        let rig = try rig(persistence)
        var next = 0
        /// Rows touched by one start and one right check, when `filled` verifications are already stored.
        func cost(filledTo filled: Int) async throws -> Int {
            while next < filled {
                _ = try await start(rig, index: next)
                next += 1
            }
            let before = persistence.rowsTouched
            let started = try await start(rig, index: next)
            next += 1
            _ = try await rig.provider.check(started.verification, code: try #require(started.code))
            return persistence.rowsTouched - before
        }
        let small = try await cost(filledTo: 20)
        let large = try await cost(filledTo: 2_000)
        // At least the 1,999 started and never checked (a vendor may forget the approved ones, as Twilio does).
        #expect(
            persistence.rowCount(stateTable) >= 1_999, "\(name): the emulator does not keep its state in \(stateTable)")
        #expect(small > 0, "\(name): no rows touched: the emulator keeps its state elsewhere")
        #expect(large == small, "\(name): a start and a check touch \(small) rows at 20 requests, \(large) at 2,000")
    }

    /// A start whose vendor does not answer in time is `provider_timeout`, whose connection is reset
    /// `provider_unavailable`, both marked as possibly sent (unless the start sends nothing by itself); a 500 or
    /// 503 is `provider_unavailable`, a 2xx the provider cannot read `provider_error`; each names the provider.
    func transportFailures() async throws {
        guard let makeRigWithTimeout else {
            Issue.record("\(name): no rig with a short request timeout (ProviderConformance.makeRigWithTimeout)")
            return
        }
        let failures: [(what: String, faults: FaultSwitch.Faults, code: GatewayError.Code, timeout: Duration)] = [
            // The emulator's answer comes 50 times later than the provider waits: a timeout on any machine.
            (
                "no answer within the request timeout", .init(latencyMilliseconds: 5_000), .providerTimeout,
                .milliseconds(100)
            ),
            ("a reset connection", .init(connectionReset: true), .providerUnavailable, .seconds(10)),
            ("a 500", .init(serverErrorStatus: 500), .providerUnavailable, .seconds(10)),
            ("a 503", .init(serverErrorStatus: 503), .providerUnavailable, .seconds(10)),
            ("a 2xx body that is not the vendor's", .init(malformedBody: true), .providerError, .seconds(10)),
        ]
        for failure in failures {
            let rig = try makeRigWithTimeout(failure.timeout)
            let destination = try self.destination(0)
            let request = StartVerification(
                destination: destination, channel: startChannel, appVerification: appVerification)
            rig.faults.set(failure.faults)
            do throws(GatewayError) {
                if transportCall == .signal, let signal = rig.provider as? any SimSwapSignalProvider,
                    let number = destination.phoneNumber
                {
                    let swapped = try await signal.simSwapped(number, withinHours: 72)
                    Issue.record("\(name): \(failure.what): the signal answered \(swapped)")
                } else {
                    let result = try await rig.provider.start(request)
                    Issue.record("\(name): \(failure.what): the start answered \(result)")
                }
            } catch {
                #expect(error.code == failure.code, "\(name): \(failure.what): \(error)")
                #expect(error.vendor?.providerID == rig.provider.id, "\(name): \(failure.what): \(error)")
                if failure.code == .providerTimeout || failure.faults.connectionReset {
                    #expect(
                        error.sendMayHaveHappened == startFailureMaySend,
                        "\(name): \(failure.what): sendMayHaveHappened \(error.sendMayHaveHappened)")
                }
            }
            rig.faults.clear()
        }
    }

    /// For each optional operation the provider does not offer, the engine over the provider, with every vendor
    /// request answered by a dropped connection, and a verification that has sent: a resend is refused with
    /// `invalid_request`, a cancel ends it in the gateway alone, a refresh answers from the store, a callback is
    /// `not_found`, and an answer to a challenge is `invalid_state`. Nothing reaches the vendor: a call would have
    /// failed with `provider_unavailable`, and the outbox stays as it was.
    func undeclaredOperationsAreRefused() async throws {
        let rig = try rig()
        let provider = rig.provider
        let missing = ProviderOperations.all.subtracting(provider.operations)
        guard !missing.isEmpty else { return }
        let store = InMemoryVerificationStore()
        let service = VerificationService(
            registry: try makeRegistry([provider]),
            routing: RoutingTable(routes: [:], defaultOrder: [provider.id]), store: store, clock: rig.clock,
            logger: .quiet)
        let started = try await start(rig)
        let destination = started.verification.destination.value
        rig.faults.set(.init(connectionReset: true))
        defer { rig.faults.clear() }
        let sent = rig.outbox.messages(to: destination).count
        /// A stored verification of the provider, pending and sent once, as the start left it.
        func stored(challenge: Bool = false) async throws -> VerificationRecord {
            let now = rig.clock.now
            let record = VerificationRecord(
                id: VerificationService.newID(), destination: started.verification.destination,
                channel: started.verification.channel, providerID: provider.id,
                providerReference: started.verification.reference, providerState: started.verification.state,
                maxAttempts: 5, createdAt: now, updatedAt: now, expiresAt: now.addingTimeInterval(600),
                nextAction: challenge
                    ? .solveChallenge(
                        NextAction.Challenge(kind: "conformance", data: [:], expiresAt: now.addingTimeInterval(60)))
                    : nil)
            try await store.insert(record)
            return record
        }
        if missing.contains(.resend) {
            let record = try await stored()
            await expectGatewayError(.invalidRequest) {
                try await service.resend(id: record.id, request: ResendRequest(appVerification: appVerification))
            }
            #expect(try await store.record(id: record.id)?.sends == 1, "\(name): a refused resend counted a send")
        }
        if missing.contains(.cancel) {
            let record = try await stored()
            let canceled = try await service.cancel(id: record.id)
            #expect(canceled.status == .canceled, "\(name): a cancel without the operation left \(canceled.status)")
        }
        if missing.contains(.status) {
            let record = try await stored()
            let refreshed = try await service.refresh(id: record.id)
            #expect(refreshed == record, "\(name): a refresh without the operation changed the verification")
        }
        if missing.contains(.callbacks) {
            let callback = VendorCallback(
                method: .post, url: try #require(URL(string: "https://gateway.example/callbacks/\(provider.id)")),
                subpath: "/", query: nil, headerFields: [.contentType: "application/json"], body: Data("{}".utf8))
            await expectGatewayError(.notFound) {
                try await service.handleCallback(providerID: provider.id, callback)
            }
        }
        if missing.contains(.challenge) {
            let record = try await stored(challenge: true)
            await expectGatewayError(.invalidState) {
                try await service.submitChallenge(id: record.id, answer: ChallengeAnswer(answer: ["x": 1]))
            }
            #expect(
                try await store.record(id: record.id)?.challengeAttempts == 0,
                "\(name): a refused challenge answer spent an attempt")
        }
        #expect(rig.outbox.messages(to: destination).count == sent, "\(name): an undeclared operation sent something")
    }
}
