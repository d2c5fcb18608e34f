import Foundation
import GatewayCore
import HTTPTypes
import Logging
import Synchronization

/// Twilio Verify v2, emulated on the wire, for the sandbox and for tests.
///
/// Paths are relative to the mount point: `POST /v2/Services/{ServiceSid}/Verifications` (start, or
/// a resend for a pending `To`), `POST /v2/Services/{ServiceSid}/VerificationCheck`, and
/// `GET`/`POST /v2/Services/{ServiceSid}/Verifications/{Sid}` (fetch, update status). It takes the
/// ``TwilioSandbox`` credentials (or any `SK…` key SID with the sandbox secret), answers with the
/// spec's snake_case JSON and Twilio's error envelope, keeps Twilio's limits (5 sends and 5 checks per
/// verification, 10 minutes of validity, soft delete after approval or expiry) and records every
/// code it "sends" in the ``SandboxOutbox``. Time comes from the context's clock.
public final class TwilioEmulator: ContextEmulator {
    /// The fault switch tests and the sandbox use to make this emulated Twilio misbehave.
    public let faults = FaultSwitch()
    /// Rows of ``TwilioErrorMapping/table`` armed to answer the next call with Twilio's error envelope.
    package let errors = EmulatorErrorSwitch()

    /// The clock, outbox, logger and callback sender the emulator was built with.
    public let context: EmulatorContext
    /// The verifications, as rows read and written per call (``TwilioEmulatorState``).
    let verifications: any EmulatorTable
    /// Verify Push: entities, factors, challenges and access tokens, as rows read and written per call
    /// (``TwilioPushState``).
    let push: any EmulatorTable

    /// Builds an emulator that reads time from `context.clock`, records sends in `context.outbox` and keeps
    /// its verifications as rows of `context.persistence`'s table ``TwilioEmulatorState/table``.
    public init(context: EmulatorContext) {
        self.context = context
        self.verifications = context.persistence.table(TwilioEmulatorState.table)
        // Rows an earlier version saved one entity per SID (all read back at startup) move into the tables
        // once; soft-deleted and long-expired verifications are dropped.
        let loaded = context.persistence.load()
        let now = context.clock.now
        self.push = context.persistence.table(TwilioPushState.table)
        push.moveSaved(loaded.filter { !$0.key.hasPrefix("VE") }, context: context, "twilio sandbox push state") {
            try TwilioPushState(rows: $0, now: now).move($1)
        }
        verifications.moveSaved(
            loaded.filter { $0.key.hasPrefix("VE") }, context: context, "twilio sandbox verifications"
        ) {
            rows, saved in
            let state = TwilioEmulatorState(rows: rows, now: now)
            for (sid, data) in saved {
                guard let verification = TwilioEmulatorState.decode(data), verification.sid == sid,
                    TwilioEmulatorState.due(verification) > now
                else { continue }
                try state.put(verification)
            }
        }
    }

    /// Answers one request as Twilio would, after the fault switch had its say; what it changed is saved
    /// within the call's transactions.
    public func handle(_ request: EmulatorRequest) async -> EmulatorResponse {
        await withFaults(serverError: Self.serverError) {
            if let row = errors.take(operation: Self.operation(of: request)), let code = row.code.flatMap({ Int($0) }) {
                return .response(Self.error(row.httpStatus ?? Self.status(of: code), code: code, message: row.name))
            }
            return .response(await route(request))
        }
    }

    /// The provider's name for the call a request makes (its ``VendorOperation``), for the error switch.
    static func operation(of request: EmulatorRequest) -> String {
        let rest = request.path.split(separator: "/").dropFirst(3)
        switch (rest.first, rest.count, request.method) {
        case ("Verifications", 1, _): return "start"
        case ("VerificationCheck", _, _): return "check"
        case ("Verifications", _, .get): return "status"
        case ("Verifications", _, _): return "cancel"
        default: return "push"
        }
    }

    /// The status Twilio answers an error code with: the platform codes' own (20429 is a 429), else 400.
    static func status(of code: Int) -> Int {
        switch code {
        case 20003: 401
        case 20403...20503: code - 20000
        default: 400
        }
    }

    /// Runs `body` on the Verify Push state as of `now` in one transaction, after sweeping what is due; `nil`
    /// when the sandbox's file failed (logged), which callers answer with Twilio's 500.
    func withPush<T: Sendable>(now: Date, _ body: @escaping @Sendable (TwilioPushState) throws -> T) async -> T? {
        await push.attempt("twilio sandbox push state", logger: logger, now: now, body)
    }

    // MARK: routing

    private func route(_ request: EmulatorRequest) async -> TransportResponse {
        let now = clock.now
        let caller: Caller
        if Self.isAuthorized(request.headerFields[.authorization]) {
            caller = .account
        } else if let device = await deviceCaller(request.headerFields[.authorization], now: now) {
            caller = device
        } else {
            return Self.error(401, code: 20003, message: "Authenticate")
        }
        let parts = request.path.split(separator: "/").map(String.init)
        guard parts.count >= 4, parts[0] == "v2", parts[1] == "Services" else { return Self.notFound() }
        guard parts[2] == TwilioSandbox.serviceSID else { return Self.notFound() }
        if parts[3] == "Entities" || parts[3] == "AccessTokens" {
            return await pushRoute(Array(parts[3...]), request: request, caller: caller, now: now)
        }
        guard case .account = caller else { return Self.error(401, code: 20003, message: "Authenticate") }
        let form = FormEncoding.decode(String(decoding: request.body, as: UTF8.self))
        switch (Array(parts[3...]), request.method) {
        case (["Verifications"], .post):
            return await start(form, now: now)
        case (["VerificationCheck"], .post):
            return await check(form, now: now)
        case (let rest, .get) where rest.count == 2 && rest[0] == "Verifications":
            return await fetch(sid: rest[1], now: now)
        case (let rest, .post) where rest.count == 2 && rest[0] == "Verifications":
            return await update(sid: rest[1], form: form, now: now)
        case (["Verifications"], _), (["VerificationCheck"], _):
            return Self.error(405, code: 20004, message: "Method not allowed")
        case (let rest, _) where rest.count == 2 && rest[0] == "Verifications":
            return Self.error(405, code: 20004, message: "Method not allowed")
        default:
            return Self.notFound()
        }
    }

    /// `Basic` and the base64 of the sandbox account SID and token, as a client spells it.
    static let sandboxAuthorization = VendorHTTPClient.basicAuthorization(
        TwilioSandbox.accountSID, TwilioSandbox.authToken)

    /// Basic auth with the sandbox account SID (or any `SK…` API key SID) and the sandbox token.
    static func isAuthorized(_ header: String?) -> Bool {
        // What clients send for the sandbox account, compared without decoding; anything else is decoded.
        if let header, ConstantTime.equals(header, sandboxAuthorization) { return true }
        guard let (user, password) = VendorHTTPClient.basicCredentials(header) else { return false }
        let knownUser = user == TwilioSandbox.accountSID || TwilioConfiguration.matches(user, prefixes: ["SK"])
        return ConstantTime.equals(password, TwilioSandbox.authToken) && knownUser
    }
}
