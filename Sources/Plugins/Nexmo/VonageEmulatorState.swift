import Foundation
import GatewayCore

/// What the Vonage emulator remembers: one record per request, for both API versions, as rows of its
/// ``EmulatorTable`` read and written inside one transaction per call, so a call costs the same, and the
/// emulator holds nothing in memory, however many requests there are.
struct VonageEmulatorState: EmulatorRowsView {
    struct Step: Codable, Sendable, Equatable {
        var channel: String
        var to: String
        /// `unused`, `pending` (in progress), `completed`, `failed`, `expired`, `action_pending`.
        var status: String
        var initiatedAt: Date?
        /// silent_auth: the request's `redirect_url`, the last hop of `check_url`'s redirects.
        var redirectURL: String?
    }

    struct Request: Codable, Sendable, Equatable {
        var id: String
        var api: String
        var number: String
        var brand: String
        var steps: [Step]
        var position: Int
        var code: String
        var codeLength: Int
        var locale: String?
        var channelTimeout: TimeInterval
        var createdAt: Date
        var stepStartedAt: Date
        var wrongChecks: Int
        /// `in_progress`, `completed`, `failed`, `expired`, `cancelled`.
        var status: String
        var finalizedAt: Date?
        var checks: [V1Check]
        /// silent_auth: the code the device got at the end of `check_url`'s redirects, which the backend
        /// then checks (one attempt); `nil` until the device has followed them.
        var silentAuthCode: String?

        var isLive: Bool { status == "in_progress" }
        var current: Step { steps[position] }
    }

    struct V1Check: Codable, Sendable, Equatable {
        var at: Date
        var code: String
        var valid: Bool
    }

    /// The table the state is rows of (``EmulatorTable``): `request:<id>` looked up by `live:<number>` while
    /// in progress (Vonage allows one at a time) and by `done` after, due when its current step ends while live
    /// and ``retention`` after it finished otherwise; `live-count` counts the live ones, so the ticker knows
    /// when to stop without a scan.
    static let table = "requests"

    /// How long a finished request is kept (search answers about it, checks answer "not found").
    static let retention: TimeInterval = 86_400
    let rows: any EmulatorRows
    /// The call's time.
    let now: Date

    /// Due rows are live requests whose step ended, which ``VonageEmulator/advance(_:)`` takes with
    /// ``dueSteps()`` to send their callbacks, and finished ones it forgets on the way: nothing to do first.
    func sweep() throws {}

    /// The request `id`, unless it finished more than ``retention`` ago.
    func request(_ id: String) throws -> Request? {
        guard let request = try stored(id) else { return nil }
        return !request.isLive && Self.forgetAt(request) <= now ? nil : request
    }

    /// The live request of `number`.
    func live(number: String) throws -> Request? {
        for key in try rows.keys(lookup: "live:" + number).reversed() {
            if let request = try stored(String(key.dropFirst("request:".count))), request.isLive { return request }
        }
        return nil
    }

    var hasLive: Bool {
        get throws { try liveCount() > 0 }
    }

    func put(_ request: Request) throws {
        let wasLive = try stored(request.id)?.isLive == true
        try rows.put(
            try JSONEncoder().encode(request), forKey: "request:" + request.id,
            lookup: request.isLive ? "live:" + request.number : "done",
            due: request.isLive
                ? request.stepStartedAt.addingTimeInterval(request.channelTimeout) : Self.forgetAt(request))
        if wasLive != request.isLive {
            let count = max(0, try liveCount() + (request.isLive ? 1 : -1))
            try rows.put(Data(String(count).utf8), forKey: "live-count", lookup: "meta", due: .distantFuture)
        }
    }

    /// The live requests whose current step has ended by now, earliest first; forgets, on the way, requests
    /// finished more than ``retention`` ago. At most ``sweepBatch`` rows per call.
    func dueSteps() throws -> [Request] {
        var due: [Request] = []
        for key in try rows.keysDue(at: now, limit: Self.sweepBatch) where key.hasPrefix("request:") {
            guard let request = try stored(String(key.dropFirst("request:".count))) else {
                try rows.remove(key)
                continue
            }
            if request.isLive {
                due.append(request)
            } else {
                try rows.remove(key)
            }
        }
        return due
    }

    /// Moves requests an earlier version saved one by one (all read back at startup) into the table.
    func move(_ saved: [Request]) throws {
        for request in saved.sorted(by: { ($0.stepStartedAt, $0.id) < ($1.stepStartedAt, $1.id) })
        where request.isLive || Self.forgetAt(request) > now {
            try put(request)
        }
    }

    // MARK: rows

    private static func forgetAt(_ request: Request) -> Date {
        (request.finalizedAt ?? request.createdAt).addingTimeInterval(retention)
    }

    private func stored(_ id: String) throws -> Request? {
        try rows.value(forKey: "request:" + id).flatMap { try? JSONDecoder().decode(Request.self, from: $0) }
    }

    private func liveCount() throws -> Int {
        try rows.value(forKey: "live-count").flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0
    }
}
