import Foundation

/// One message text with placeholders: `{code}` (required), `{app}` and `{minutes}`.
public struct MessageTemplate: Sendable, Hashable {
    /// The placeholders a template may use.
    public static let placeholders: Set<String> = ["code", "app", "minutes"]

    /// The text as configured.
    public let text: String
    /// The text cut at its placeholders, so a rendering only joins pieces.
    private let parts: [Part]

    private enum Part: Sendable, Hashable {
        case literal(String)
        case code, app, minutes
    }

    /// A template of `text`, or every problem with it: no `{code}`, a placeholder not in ``placeholders``, or a
    /// brace that opens no placeholder.
    public init(_ text: String) throws(MessageTemplateError) {
        var problems: [String] = []
        var sawCode = false
        var parts: [Part] = []
        var rest = Substring(text)
        while let open = rest.firstIndex(where: { $0 == "{" || $0 == "}" }) {
            guard rest[open] == "{", let close = rest[open...].firstIndex(of: "}") else {
                problems.append("a `\(rest[open])` that is not part of a placeholder")
                rest = rest[rest.index(after: open)...]
                continue
            }
            if open > rest.startIndex { parts.append(.literal(String(rest[..<open]))) }
            let name = String(rest[rest.index(after: open)..<close])
            switch name {
            case "code":
                sawCode = true
                parts.append(.code)
            case "app": parts.append(.app)
            case "minutes": parts.append(.minutes)
            default: problems.append("unknown placeholder `{\(name)}` (known: {code}, {app}, {minutes})")
            }
            rest = rest[rest.index(after: close)...]
        }
        if !rest.isEmpty { parts.append(.literal(String(rest))) }
        if !sawCode { problems.insert("no `{code}` placeholder", at: 0) }
        if text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { problems = ["the template is empty"] }
        guard problems.isEmpty else { throw MessageTemplateError(problems: problems) }
        self.text = text
        self.parts = parts
    }

    /// The text with its placeholders filled in.
    public func render(code: String, app: String, minutes: Int) -> String {
        var rendered = ""
        rendered.reserveCapacity(text.utf8.count + code.utf8.count + app.utf8.count)
        for part in parts {
            switch part {
            case .literal(let piece): rendered += piece
            case .code: rendered += code
            case .app: rendered += app
            case .minutes: rendered += String(minutes)
            }
        }
        return rendered
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
