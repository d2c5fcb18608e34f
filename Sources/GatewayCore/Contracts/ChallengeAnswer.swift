/// The app's answer to a ``NextAction/solveChallenge(_:)``.
public struct ChallengeAnswer: Sendable {
    /// What the app posted (a slider position, the challenge's token), as the plugin defined it.
    public var answer: JSONValue
    /// The end user's device, for vendors that want it.
    public var clientContext: ClientContext

    /// The answer as the app posted it.
    public init(answer: JSONValue, clientContext: ClientContext = ClientContext()) {
        self.answer = answer
        self.clientContext = clientContext
    }
}
