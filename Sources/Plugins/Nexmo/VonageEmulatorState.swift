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
    private var dirty: Set<String> = []

    init(restoring saved: [Request] = []) {
        for request in saved { requests[request.id] = request }
    }

    func request(_ id: String) -> Request? { requests[id] }

    func live(number: String) -> Request? {
        requests.values.first { $0.number == number && $0.isLive }
    }

    var hasLive: Bool { requests.values.contains { $0.isLive } }

    mutating func put(_ request: Request) {
        requests[request.id] = request
        dirty.insert(request.id)
    }

    /// Forgets requests finished more than a day ago.
    mutating func forgetOld(now: Date) {
        for (id, request) in requests where !request.isLive {
            if let finalized = request.finalizedAt, now.timeIntervalSince(finalized) > 86_400 {
                requests[id] = nil
                dirty.insert(id)
            }
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
