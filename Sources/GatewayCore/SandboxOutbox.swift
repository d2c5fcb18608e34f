import Foundation
import Synchronization

/// Messages the sandbox emulators "sent", oldest first, for `GET /sandbox/outbox` and tests.
public final class SandboxOutbox: Sendable {
    public struct Message: Sendable, Equatable, Codable {
        public var provider: String
        public var channel: String
        public var to: String
        public var code: String
        public var text: String
        public var sentAt: Date

        public init(provider: String, channel: String, to: String, code: String, text: String, sentAt: Date) {
            self.provider = provider
            self.channel = channel
            self.to = to
            self.code = code
            self.text = text
            self.sentAt = sentAt
        }

        enum CodingKeys: String, CodingKey {
            case provider, channel, to, code, text
            case sentAt = "sent_at"
        }
    }

    /// The outbox keeps at most this many messages; the oldest go first.
    public let capacity: Int
    private let messages = Mutex<[Message]>([])
    private let onSend: (@Sendable (Message) -> Void)?

    public init(capacity: Int = 1000, onSend: (@Sendable (Message) -> Void)? = nil) {
        self.capacity = capacity
        self.onSend = onSend
    }

    public func record(_ message: Message) {
        messages.withLock { list in
            list.append(message)
            if list.count > capacity { list.removeFirst(list.count - capacity) }
        }
        onSend?(message)
    }

    public var all: [Message] { messages.withLock { $0 } }

    /// The newest message to `to`, if any.
    public func last(to: String) -> Message? { messages.withLock { $0.last { $0.to == to } } }

    public func removeAll() { messages.withLock { $0.removeAll() } }
}
