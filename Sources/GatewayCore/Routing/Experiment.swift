import Foundation

/// An A/B (or A/B/n) test between providers: arms with integer weights, one of them the control.
///
/// Assignment is sticky and stateless. Each arm gets a score from a stable hash of the experiment's
/// name, its salt, the arm's name and the E.164 number, `-ln(u) / weight` (weighted rendezvous
/// hashing); the lowest score wins. So every gateway instance sends the same person to the same arm
/// without sharing state, and changing one arm's weight only moves people into or out of that arm:
/// going from 50/50 to 60/40 moves about 10% of people, all from the shrinking arm.
public struct Experiment: Sendable, Equatable {
    /// One arm: a provider and its share of the people.
    public struct Arm: Sendable, Equatable {
        /// The arm's name, as reports and records show it.
        public var name: String
        /// The provider the arm's people go to.
        public var providerID: String
        /// The arm's weight; its share is the weight over the sum of positive weights. Zero assigns nobody.
        public var weight: Int
        /// Whether this is the arm the others are compared with.
        public var isControl: Bool

        /// An arm sending people to `providerID` with `weight`.
        public init(name: String, providerID: String, weight: Int, isControl: Bool = false) {
            self.name = name
            self.providerID = providerID
            self.weight = weight
            self.isControl = isControl
        }
    }

    /// The experiment's name, as routing rules and records name it; part of the hash.
    public var name: String
    /// Changing the salt reshuffles everyone: a new experiment on the same people.
    public var salt: String
    /// The arms, in configured order.
    public var arms: [Arm]

    /// An experiment of `arms`; an empty salt unless given.
    public init(name: String, salt: String = "", arms: [Arm]) {
        self.name = name
        self.salt = salt
        self.arms = arms
    }

    /// The control arm, if one is marked.
    public var control: Arm? { arms.first { $0.isControl } }

    /// The arm `e164` belongs to; nil only when no arm has a positive weight.
    public func assign(_ e164: String) -> Arm? {
        var best: (arm: Arm, score: Double)?
        for arm in arms where arm.weight > 0 {
            let unit = StableHash.unit([name, salt, arm.name, e164])
            let score = -log(unit) / Double(arm.weight)
            if score < best?.score ?? .infinity { best = (arm, score) }
        }
        return best?.arm
    }

    /// Everything wrong with the experiment, against the providers that exist (nil: do not check them).
    public func problems(knownProviders: Set<String>?) -> [String] {
        var problems: [String] = []
        let subject = "experiment `\(name)`"
        if arms.count < 2 { problems.append("\(subject): needs at least two arms") }
        let controls = arms.filter(\.isControl).count
        if controls != 1 { problems.append("\(subject): exactly one arm must be the control (found \(controls))") }
        var seen = Set<String>()
        for arm in arms {
            if !seen.insert(arm.name).inserted { problems.append("\(subject): arm name `\(arm.name)` is used twice") }
            if arm.weight < 0 { problems.append("\(subject): arm `\(arm.name)` has a negative weight") }
            if arm.weight == 0 && arm.isControl {
                problems.append(
                    "\(subject): the control arm `\(arm.name)` has weight 0, so nothing is compared with it")
            }
            if let knownProviders, !knownProviders.contains(arm.providerID) {
                problems.append("\(subject): arm `\(arm.name)` names unknown provider `\(arm.providerID)`")
            }
        }
        if !arms.isEmpty && arms.allSatisfy({ $0.weight <= 0 }) {
            problems.append("\(subject): every weight is zero, so nobody is assigned")
        }
        return problems
    }
}
