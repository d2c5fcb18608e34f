/// A JWT's `aud` claim: one string or an array of strings (RFC 7519 §4.1.3); written as a string when it has
/// one value.
public struct JWTAudience: Codable, Sendable, Equatable {
    /// The audiences, in order.
    public var values: [String]

    /// An audience of `values`.
    public init(_ values: [String]) { self.values = values }

    /// Reads a single string or an array of strings.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let one = try? container.decode(String.self) {
            values = [one]
        } else {
            values = try container.decode([String].self)
        }
    }

    /// Writes a single string for one value, an array otherwise.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if values.count == 1 { try container.encode(values[0]) } else { try container.encode(values) }
    }
}
