import Foundation

/// The lines of one vendor's section of `docs/errors.md` (from `heading`, such as `## IDaaS`, to the next `## `),
/// which a plugin's docs test reads to find each error row's line; empty when the section is missing.
package func errorDocsSection(_ heading: String) throws -> [Substring] {
    let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let all = try String(contentsOf: root.appendingPathComponent("docs/errors.md"), encoding: .utf8)
        .split(separator: "\n")
    guard let start = all.firstIndex(of: Substring(heading)) else { return [] }
    let end = all[(start + 1)...].firstIndex { $0.hasPrefix("## ") } ?? all.endIndex
    return Array(all[start..<end])
}
