import Foundation
import Synchronization

/// Messages the sandbox emulators "sent", oldest first, for `GET /sandbox/outbox` and tests.
public final class SandboxOutbox: Sendable {
    /// One message as the emulator "sent" it.
    public struct Message: Sendable, Equatable, Codable {
        /// How the message reaches the user.
        public enum Kind: String, Sendable, Codable, CaseIterable {
            case sms, voice, whatsapp, email, push
            /// A missed call: its "code" is the caller number.
            case flashCall = "flash_call"
            /// Silent network authentication: nothing reaches the user.
            case silentAuth = "silent_auth"

            /// The kind a gateway channel's messages have.
            public init(_ channel: Channel) {
                switch channel {
                case .sms: self = .sms
                case .voice: self = .voice
                case .whatsapp: self = .whatsapp
                case .email: self = .email
                case .push: self = .push
                case .flashcall: self = .flashCall
                case .silentAuth: self = .silentAuth
                }
            }
        }

        /// The plugin id of the vendor that sent it (`twilio`), as ``SandboxOutbox/setDelivery(_:for:)`` names it.
        public var provider: String
        /// How the message reaches the user.
        public var kind: Kind
        /// The vendor's name for the channel.
        public var channel: String
        /// The recipient as the vendor got it (a number in the vendor's form, an email address, an identity).
        public var to: String
        /// The code the user would type; the caller number of a flash call; `nil` for a push.
        public var code: String?
        /// The message as the user would read it.
        public var text: String
        /// The language ``text`` is written in, when the emulator chose one.
        public var language: String?
        /// When the emulator sent it.
        public var sentAt: Date

        /// A message; without `kind`, the kind of the gateway channel `channel` names, or `sms`.
        public init(
            provider: String, kind: Kind? = nil, channel: String, to: String, code: String?, text: String,
            language: String? = nil, sentAt: Date
        ) {
            self.language = language
            self.provider = provider
            self.kind = kind ?? Channel(rawValue: channel).map(Kind.init) ?? .sms
            self.channel = channel
            self.to = to
            self.code = code
            self.text = text
            self.sentAt = sentAt
        }

        enum CodingKeys: String, CodingKey {
            case provider, kind, channel, to, code, text, language
            case sentAt = "sent_at"
        }
    }

    /// How many of a vendor's accepted messages reach the phone. Real vendors accept a send and the
    /// carrier may still lose it; the sandbox can do the same so that experiments between vendors have
    /// something to find.
    public struct Delivery: Sendable, Equatable {
        /// The share of messages delivered, from 0 to 1.
        public var rate: Double
        /// Seeds the decision, so a simulation can be repeated message for message.
        public var seed: Int
        /// The share delivered to numbers of a country (its region, `GB`), in place of ``rate`` there.
        public var byCountry: [String: Double]
        /// Of the messages not delivered, the share whose receipt says so (with ``undeliveredCode``); the others
        /// get no receipt at all, as from a vendor that answered and then went silent. Messaging emulators only.
        public var undeliveredReceiptRate: Double
        /// ``undeliveredReceiptRate`` for numbers of a country, in its place there.
        public var undeliveredReceiptRateByCountry: [String: Double]
        /// The vendor's error code an `undelivered` receipt carries; `nil`: the emulator's own default.
        public var undeliveredCode: String?
        /// How long after its answer the emulator posts a message's receipts.
        public var receiptDelayMilliseconds: Int

        /// Delivery settings; rates are clamped to 0…1. By default every message is delivered, and an
        /// undelivered one is reported at once.
        public init(
            rate: Double = 1, seed: Int = 0, byCountry: [String: Double] = [:], undeliveredReceiptRate: Double = 1,
            undeliveredReceiptRateByCountry: [String: Double] = [:], undeliveredCode: String? = nil,
            receiptDelayMilliseconds: Int = 0
        ) {
            self.rate = min(1, max(0, rate))
            self.seed = seed
            self.byCountry = byCountry.mapValues { min(1, max(0, $0)) }
            self.undeliveredReceiptRate = min(1, max(0, undeliveredReceiptRate))
            self.undeliveredReceiptRateByCountry = undeliveredReceiptRateByCountry.mapValues { min(1, max(0, $0)) }
            self.undeliveredCode = undeliveredCode
            self.receiptDelayMilliseconds = max(0, receiptDelayMilliseconds)
        }

        /// The share delivered to `to` (E.164, or its digits).
        public func rate(to: String) -> Double {
            Self.rate(to: to, byCountry: byCountry) ?? rate
        }

        /// The share of undelivered messages to `to` that get an `undelivered` receipt.
        public func undeliveredReceiptRate(to: String) -> Double {
            Self.rate(to: to, byCountry: undeliveredReceiptRateByCountry) ?? undeliveredReceiptRate
        }

        private static func rate(to: String, byCountry: [String: Double]) -> Double? {
            guard !byCountry.isEmpty,
                let region = try? PhoneNumber(parsing: to.hasPrefix("+") ? to : "+" + to).region
            else { return nil }
            return byCountry[region]
        }
    }

    /// What a messaging emulator reports of a message it took (``receipt(for:delivered:)``).
    public enum Receipt: Sendable, Equatable {
        /// A `delivered` receipt.
        case delivered
        /// A receipt that says the message was not delivered, with this vendor error code (`nil`: the
        /// emulator's default).
        case undelivered(code: String?)
        /// No receipt at all.
        case none
    }

    /// The outbox keeps at most this many messages; the oldest go first.
    public let capacity: Int
    private let messages = Mutex(Listing())
    private let deliveries = Mutex<(settings: [String: Delivery], counters: [String: Int])>(([:], [:]))
    private let onSend: (@Sendable (Message) -> Void)?
    private let onDrop: (@Sendable (Message) -> Void)?

    /// An outbox keeping at most `capacity` messages; `onSend` and `onDrop` hear of each message delivered or dropped.
    public init(
        capacity: Int = 1000, onSend: (@Sendable (Message) -> Void)? = nil,
        onDrop: (@Sendable (Message) -> Void)? = nil
    ) {
        self.capacity = capacity
        self.onSend = onSend
        self.onDrop = onDrop
    }

    /// Sets how many of `provider`'s messages are delivered. Counting starts again, so setting the same
    /// seed again replays the same decisions (and the counters do not grow across simulations).
    public func setDelivery(_ delivery: Delivery, for provider: String) {
        deliveries.withLock { state in
            state.settings[provider] = delivery
            state.counters = state.counters.filter { !$0.key.hasPrefix(provider + " ") }
        }
    }

    /// The delivery settings of `provider`; every message delivered unless ``setDelivery(_:for:)`` said otherwise.
    public func delivery(for provider: String) -> Delivery {
        deliveries.withLock { $0.settings[provider] } ?? Delivery()
    }

    /// Records a message the vendor accepted. With a delivery rate below 1 some never arrive: they are
    /// not listed, as a real phone would never see them. The decision depends only on the seed, the
    /// provider, the recipient and how many messages that recipient was sent before, so the same
    /// simulation drops the same messages. Returns whether the message was delivered.
    @discardableResult
    public func record(_ message: Message) -> Bool {
        let delivered = deliveries.withLock { state -> Bool in
            guard let setting = state.settings[message.provider] else { return true }
            let rate = setting.rate(to: message.to)
            guard rate < 1 else { return true }
            let key = message.provider + " " + message.to
            let count = state.counters[key, default: 0]
            state.counters[key] = count + 1
            let draw = StableHash.unit([String(setting.seed), message.provider, message.to, String(count)])
            return draw < rate
        }
        guard delivered else {
            onDrop?(message)
            return false
        }
        messages.withLock { $0.append(message, capacity: capacity) }
        onSend?(message)
        return true
    }

    /// What the vendor reports of `message`, which ``record(_:)`` found `delivered` or not, and after how long:
    /// an undelivered one gets its receipt for a share ``Delivery/undeliveredReceiptRate(to:)`` of messages,
    /// decided from the seed, the provider, the recipient and how many messages it was sent, as the delivery is.
    public func receipt(for message: Message, delivered: Bool) -> (receipt: Receipt, delay: Duration) {
        let setting = delivery(for: message.provider)
        let delay = Duration.milliseconds(setting.receiptDelayMilliseconds)
        guard !delivered else { return (.delivered, delay) }
        let rate = setting.undeliveredReceiptRate(to: message.to)
        let count = deliveries.withLock { $0.counters[message.provider + " " + message.to, default: 0] }
        let draw = StableHash.unit([String(setting.seed), "receipt", message.provider, message.to, String(count)])
        return (draw < rate ? .undelivered(code: setting.undeliveredCode) : .none, delay)
    }

    /// A messaging emulator's receipts for a message: whether to post any, the failure code of the last one
    /// (`nil`: delivered), and the wait before posting.
    public struct ReceiptPlan: Sendable, Equatable {
        /// Whether the emulator posts receipts for the message at all.
        public var posts: Bool
        /// The vendor error code the final receipt carries; `nil` for a `delivered` one.
        public var failureCode: String?
        /// How long after its answer the emulator posts them.
        public var delay: Duration
    }

    /// ``receipt(for:delivered:)`` as an emulator posts it: a row `armed` for the receipt (its code) fails it
    /// whatever the delivery settings say; an undelivered message without a configured code fails with
    /// `defaultCode`.
    public func receiptPlan(for message: Message, delivered: Bool, armed: String?, defaultCode: String) -> ReceiptPlan {
        let (receipt, delay) = self.receipt(for: message, delivered: delivered)
        if let armed { return ReceiptPlan(posts: true, failureCode: armed, delay: delay) }
        switch receipt {
        case .delivered: return ReceiptPlan(posts: true, failureCode: nil, delay: delay)
        case .undelivered(let code): return ReceiptPlan(posts: true, failureCode: code ?? defaultCode, delay: delay)
        case .none: return ReceiptPlan(posts: false, failureCode: nil, delay: delay)
        }
    }

    /// Puts back messages kept from an earlier run (oldest first), without announcing them as sent.
    public func restore(_ kept: [Message]) {
        messages.withLock { listing in
            for message in kept.suffix(capacity) { listing.append(message, capacity: capacity) }
        }
    }

    /// Every kept message, oldest first.
    public var all: [Message] { messages.withLock { $0.messages } }

    /// The messages to `to`, oldest first, from the per-recipient index (a client reading one user's code
    /// does not scan the whole outbox).
    public func messages(to: String) -> [Message] { messages.withLock { $0.byRecipient[to] ?? [] } }

    /// The newest message to `to`, if any.
    public func last(to: String) -> Message? { messages.withLock { $0.byRecipient[to]?.last } }

    /// Empties the outbox; delivery settings and their counters stay.
    public func removeAll() { messages.withLock { $0 = Listing() } }

    /// The kept messages and their index by recipient; both bounded by the capacity.
    private struct Listing {
        /// The kept messages, oldest first, from `head` on. Evicting one moves `head` instead of shifting
        /// every message after it; the slots before `head` are dropped in one go once they are as many as
        /// the kept ones, so an append costs the same however full the outbox is.
        private var storage: [Message] = []
        private var head = 0
        var byRecipient: [String: [Message]] = [:]

        var messages: [Message] { Array(storage[head...]) }

        mutating func append(_ message: Message, capacity: Int) {
            storage.append(message)
            byRecipient[message.to, default: []].append(message)
            while storage.count - head > capacity {
                let evicted = storage[head].to
                byRecipient[evicted]?.removeFirst()
                if byRecipient[evicted]?.isEmpty == true { byRecipient[evicted] = nil }
                head += 1
            }
            if head > 0, head >= storage.count - head {
                storage.removeFirst(head)
                head = 0
            }
        }
    }
}

extension SandboxOutbox.Message {
    /// The code a messaging emulator reads from the text it was given, for the outbox: the origin-bound line's
    /// (`@host #code`, the message's last line), else the first word of 4 to 10 digits; `nil` when it has
    /// neither.
    package static func code(in text: String) -> String? {
        if let last = text.split(separator: "\n").last, last.hasPrefix("@"),
            let hash = last.split(separator: " ").first(where: { $0.hasPrefix("#") })
        {
            return String(hash.dropFirst())
        }
        let words = text.split(whereSeparator: { !$0.isLetter && !$0.isNumber })
        return words.first { (4...10).contains($0.count) && $0.allSatisfy(\.isNumber) }.map(String.init)
    }
}
