import Foundation
import Logging

/// Every configuration problem found, reported at once.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    /// One line per problem, each naming the provider and setting it concerns.
    public var problems: [String]

    /// An error reporting `problems`.
    public init(problems: [String]) {
        self.problems = problems
    }

    /// The problem count, then one indented line per problem.
    public var description: String {
        "configuration has \(problems.count) problem(s):\n" + problems.map { "  - \($0)" }.joined(separator: "\n")
    }
}
