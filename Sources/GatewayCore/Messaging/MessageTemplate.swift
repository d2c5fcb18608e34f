import Foundation

/// One message text with placeholders: `{code}` (required), `{app}` and `{minutes}`.
public struct MessageTemplate: Sendable, Hashable {
    /// The placeholders a template may use.
    public static let placeholders: Set<String> = ["code", "app", "minutes"]

    /// The text as configured.
    public let text: String

    /// A template of `text`, or every problem with it: no `{code}`, a placeholder not in ``placeholders``, or a
    /// brace that opens no placeholder.
    public init(_ text: String) throws(MessageTemplateError) {
        var problems: [String] = []
        var sawCode = false
        var rest = Substring(text)
        while let open = rest.firstIndex(where: { $0 == "{" || $0 == "}" }) {
            guard rest[open] == "{", let close = rest[open...].firstIndex(of: "}") else {
                problems.append("a `\(rest[open])` that is not part of a placeholder")
                rest = rest[rest.index(after: open)...]
                continue
            }
            let name = String(rest[rest.index(after: open)..<close])
            if name == "code" { sawCode = true }
            if !Self.placeholders.contains(name) {
                problems.append("unknown placeholder `{\(name)}` (known: {code}, {app}, {minutes})")
            }
            rest = rest[rest.index(after: close)...]
        }
        if !sawCode { problems.insert("no `{code}` placeholder", at: 0) }
        if text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { problems = ["the template is empty"] }
        guard problems.isEmpty else { throw MessageTemplateError(problems: problems) }
        self.text = text
    }

    /// The text with its placeholders filled in.
    public func render(code: String, app: String, minutes: Int) -> String {
        text.replacingOccurrences(of: "{code}", with: code)
            .replacingOccurrences(of: "{app}", with: app)
            .replacingOccurrences(of: "{minutes}", with: String(minutes))
    }
}

/// Why a message template, an autofill setting or a sender cannot be used; each problem is one sentence.
public struct MessageTemplateError: Error, Sendable, Hashable {
    /// What is wrong, one sentence each.
    public var problems: [String]

    /// An error of `problems`.
    public init(problems: [String]) {
        self.problems = problems
    }
}
