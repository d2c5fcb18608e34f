/// Comparison of secrets (codes, tokens) that does not stop at the first difference, so timing reveals
/// nothing. Shared by the engine, the plugins and their emulators (docs/design.md §9).
package enum ConstantTime {
    package static func equals(_ lhs: String, _ rhs: String) -> Bool {
        equals(Array(lhs.utf8), Array(rhs.utf8))
    }

    /// Whether two byte strings are equal, in time that depends only on the longer one's length.
    package static func equals(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        var difference = UInt8(left.count == right.count ? 0 : 1)
        for index in 0..<max(left.count, right.count) {
            let a = index < left.count ? left[index] : 0
            let b = index < right.count ? right[index] : 0
            difference |= a ^ b
        }
        return difference == 0
    }
}
