/// Options for channels that need more than a destination: which enrolled device factor a push goes to,
/// and what its prompt says. Plugins read the ones their vendor takes.
public struct ChannelOptions: Sendable, Equatable, Codable {
    /// The push factor to challenge (the identity's only factor when absent).
    public var factorID: String?
    /// The prompt a push shows.
    public var prompt: Prompt?

    /// The text of a push challenge, as the device shows it.
    public struct Prompt: Sendable, Equatable, Codable {
        /// The main text of the prompt.
        public var message: String
        /// Label and value pairs shown under the message, in order.
        public var details: [Detail]
        /// Facts kept with the challenge and not shown to the user (the vendor's "hidden details").
        public var hiddenDetails: [String: String]

        /// One labelled line shown under a prompt's message.
        public struct Detail: Sendable, Equatable, Codable {
            /// The line's label (`Amount`).
            public var label: String
            /// The line's value (`€12.00`).
            public var value: String

            /// A line showing `label` and `value`.
            public init(label: String, value: String) {
                self.label = label
                self.value = value
            }
        }

        /// A prompt with `message`, and optionally the lines shown under it and the facts kept out of sight.
        public init(message: String, details: [Detail] = [], hiddenDetails: [String: String] = [:]) {
            self.message = message
            self.details = details
            self.hiddenDetails = hiddenDetails
        }

        enum CodingKeys: String, CodingKey {
            case message, details
            case hiddenDetails = "hidden_details"
        }
    }

    /// Options naming a push factor and a prompt; both absent by default.
    public init(factorID: String? = nil, prompt: Prompt? = nil) {
        self.factorID = factorID
        self.prompt = prompt
    }

    /// Whether no option is set.
    public var isEmpty: Bool { factorID == nil && prompt == nil }

    enum CodingKeys: String, CodingKey {
        case factorID = "factor_id"
        case prompt
    }
}
