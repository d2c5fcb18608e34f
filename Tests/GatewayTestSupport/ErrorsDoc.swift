import Foundation
import Testing

/// `docs/errors.md`, where each plugin's error table is printed with a note per row saying why it maps so.
package enum ErrorsDoc {
    /// The lines of `docs/errors.md`, found from this file's place in the repository.
    package static func lines() throws -> [Substring] {
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent("docs/errors.md"), encoding: .utf8)
            .split(separator: "\n")
    }

    /// Expects a line starting with `prefix` (a row's cells up to and including its last `|`) whose next cell,
    /// the row's note, is not empty.
    package static func expectNotedLine(
        _ prefix: String, in lines: [Substring], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let line = lines.first { $0.hasPrefix(prefix) }
        let note = line?.dropFirst(prefix.count).prefix { $0 != "|" }.trimmingCharacters(in: .whitespaces)
        #expect(line != nil, "no line starting \(prefix)", sourceLocation: sourceLocation)
        #expect(note?.isEmpty == false, "no note after \(prefix)", sourceLocation: sourceLocation)
    }
}
