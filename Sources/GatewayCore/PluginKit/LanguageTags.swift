import Foundation
import HTTPTypes

/// Language tags as vendors take them: the caller's ordered preferences matched against the tags a vendor
/// supports.
public enum LanguageTags {
    /// The first preference `supported` has, in `supported`'s spelling: the exact tag (`pt-BR`), else its
    /// language alone (`es` for `es-MX`), else the first supported variant of the language (`de-de` for `de`).
    /// Case is ignored and `_` reads as `-`; `nil` when nothing matches.
    public static func firstMatch(_ preferences: [String], in supported: [String]) -> String? {
        for preference in preferences {
            let tag = preference.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "_", with: "-")
                .lowercased()
            guard let language = tag.split(separator: "-").first.map(String.init) else { continue }
            if let match = supported.first(where: { $0.lowercased() == tag })
                ?? supported.first(where: { $0.lowercased() == language })
                ?? supported.first(where: { $0.lowercased().hasPrefix(language + "-") })
            {
                return match
            }
        }
        return nil
    }
}
