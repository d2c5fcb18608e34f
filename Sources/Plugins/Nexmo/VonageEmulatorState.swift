import Foundation
import GatewayCore

/// What the Vonage emulator remembers: one record per request, for both API versions.
struct VonageEmulatorState: Sendable {
    struct Step: Codable, Sendable, Equatable {
        var channel: String
        var to: String
        /// `unused`, `pending` (in progress), `completed`, `failed`, `expired`, `action_pending`.
        var status: String
        var initiatedAt: Date?
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

        var isLive: Bool { status == "in_progress" }
        var current: Step { steps[position] }
    }

    struct V1Check: Codable, Sendable, Equatable {
        var at: Date
        var code: String
        var valid: Bool
    }

    private(set) var requests: [String: Request] = [:]
    /// The live request of each number: Vonage allows one at a time.
    private var liveByNumber: [String: String] = [:]
    /// Requests by the end of their current step, and finished ones by when they are forgotten: the sweeps
    /// take what is due, never a scan.
    private var stepEnds = DueQueue()
    private var forgetting = DueQueue()
    private var dirty: Set<String> = []

    /// How long a finished request is kept (search answers about it, checks answer "not found").
    static let retention: TimeInterval = 86_400

    init(restoring saved: [Request] = []) {
        for request in saved.sorted(by: { ($0.stepStartedAt, $0.id) < ($1.stepStartedAt, $1.id) }) { put(request) }
        dirty = []
    }

    func request(_ id: String) -> Request? { requests[id] }

    func live(number: String) -> Request? { liveByNumber[number].flatMap { requests[$0] } }

    var hasLive: Bool { !liveByNumber.isEmpty }

    mutating func put(_ request: Request) {
        let previous = requests[request.id]
        requests[request.id] = request
        dirty.insert(request.id)
        if request.isLive {
            liveByNumber[request.number] = request.id
            if previous?.stepStartedAt != request.stepStartedAt || previous?.isLive != true {
                stepEnds.append(request.id, due: request.stepStartedAt.addingTimeInterval(request.channelTimeout))
            }
        } else {
            if liveByNumber[request.number] == request.id { liveByNumber[request.number] = nil }
            if previous?.isLive != false {
                forgetting.append(request.id, due: (request.finalizedAt ?? request.createdAt).addingTimeInterval(Self.retention))
            }
        }
    }

    /// The live requests whose current step has ended by `now` (each once, however often it was queued).
    mutating func dueSteps(_ now: Date) -> [Request] {
        var seen: Set<String> = []
        return stepEnds.popDue(now).compactMap { id in
            guard seen.insert(id).inserted, let request = requests[id], request.isLive,
                request.stepStartedAt.addingTimeInterval(request.channelTimeout) <= now
            else { return nil }
            return request
        }
    }

    /// Forgets requests finished more than ``retention`` ago.
    mutating func forgetOld(now: Date) {
        for id in forgetting.popDue(now) {
            guard let request = requests[id], !request.isLive else { continue }
            requests[id] = nil
            dirty.insert(id)
        }
    }

    mutating func takeChanges() -> [String: Data?] {
        guard !dirty.isEmpty else { return [:] }
        let encoder = JSONEncoder()
        var changes: [String: Data?] = [:]
        for id in dirty { changes.updateValue(requests[id].flatMap { try? encoder.encode($0) }, forKey: id) }
        dirty = []
        return changes
    }
}
