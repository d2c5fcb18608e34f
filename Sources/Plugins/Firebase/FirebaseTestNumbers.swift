import GatewayCore

/// Firebase's fictional test numbers: up to 10 E.164 numbers, each with a fixed 6-digit code, that never
/// receive an SMS, use no quota and need no app-verification proof (docs/vendors/firebase.md §5, [TESTNUM]).
///
/// The `test_numbers` setting mirrors the project's "Phone numbers for testing" console list: a start for
/// one of them goes to Firebase without a proof (the gateway does not ask the app for one), and Firebase
/// sends nothing and signs it in with the fixed code. The emulator takes the same list.
struct FirebaseTestNumbers: Sendable, Equatable {
    /// The most a Firebase project may configure ([TESTNUM]).
    static let limit = 10
    static let codeLength = 6

    /// E.164 number to its fixed code.
    private(set) var codes: [String: String]

    static let none = FirebaseTestNumbers(validated: [:])

    private init(validated codes: [String: String]) {
        self.codes = codes
    }

    /// Parses the setting's syntax, `+15555550100=123456,+15555550101=654321`; blanks around entries
    /// are ignored and an empty text is an empty list.
    /// - Throws: every problem found, naming entries by position (never echoing a code).
    init(parsing text: String) throws(ConfigurationError) {
        var problems: [String] = []
        var codes: [String: String] = [:]
        let entries = text.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        if entries.count == 1, entries[0].isEmpty {
            self.init(validated: [:])
            return
        }
        for (index, entry) in entries.enumerated() {
            let parts = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            do throws(Problem) {
                guard parts.count == 2 else { throw Problem(reason: "is not `+number=code`") }
                let number = try Self.entry(parts[0], code: parts[1])
                guard codes[number.e164] == nil else { throw Problem(reason: "repeats a number") }
                codes[number.e164] = parts[1]
            } catch {
                problems.append("entry \(index + 1) \(error.reason)")
            }
        }
        if entries.count > Self.limit {
            problems.append("lists \(entries.count) numbers; Firebase allows at most \(Self.limit)")
        }
        guard problems.isEmpty else { throw ConfigurationError(problems: problems) }
        self.init(validated: codes)
    }

    /// Builds the list from a dictionary (the emulator's constructor), keeping only valid entries and at
    /// most ``limit`` of them; `rejected` counts the entries left out, for a warning.
    static func lenient(_ raw: [String: String]) -> (numbers: FirebaseTestNumbers, rejected: Int) {
        var codes: [String: String] = [:]
        var rejected = 0
        for (key, code) in raw.sorted(by: { $0.key < $1.key }) {
            guard let number = try? entry(key, code: code), codes.count < limit else {
                rejected += 1
                continue
            }
            codes[number.e164] = code
        }
        return (FirebaseTestNumbers(validated: codes), rejected)
    }

    /// Why an entry is refused, naming neither its number nor its code.
    struct Problem: Error {
        var reason: String
    }

    /// The number of a `+number=code` entry, when the number is E.164 and the code has ``codeLength`` digits.
    static func entry(_ number: String, code: String) throws(Problem) -> PhoneNumber {
        guard number.hasPrefix("+") else { throw Problem(reason: "must write its number in E.164, starting with +") }
        guard let parsed = try? PhoneNumber(parsing: number) else {
            throw Problem(reason: "has a number that is not E.164")
        }
        guard code.count == codeLength, code.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw Problem(reason: "must have a code of exactly \(codeLength) digits")
        }
        return parsed
    }

    /// Why `text` is not a valid list, or `nil`; for the setting's validator.
    static func problem(in text: String) -> String? {
        do {
            _ = try FirebaseTestNumbers(parsing: text)
            return nil
        } catch {
            return error.problems.joined(separator: "; ")
        }
    }

    /// The fixed code of `number`, if it is a test number.
    func code(for number: PhoneNumber) -> String? { codes[number.e164] }

    func contains(_ number: PhoneNumber) -> Bool { codes[number.e164] != nil }
}
